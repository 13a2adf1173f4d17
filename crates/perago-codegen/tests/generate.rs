//! `perago_codegen::generate`, the library call a task crate's own `xtask` or test makes:
//! write, then check, then notice a hand edit and a file whose schema is gone.

use perago_codegen::{ChangeKind, Error, generate};
use std::path::Path;

fn kinds(changes: &[perago_codegen::Change], root: &Path) -> Vec<(String, ChangeKind)> {
    changes
        .iter()
        .map(|c| {
            let path = c.path.strip_prefix(root).unwrap_or(&c.path);
            (path.display().to_string().replace('\\', "/"), c.kind)
        })
        .collect()
}

#[test]
fn generate_writes_then_checks_and_names_what_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (schemas, out) = (dir.path().join("schemas"), dir.path().join("out"));
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(
        schemas.join("lists.schema.json"),
        include_str!("fragments/arrays/lists.schema.json"),
    )
    .unwrap();

    let written = generate(&schemas, &out, false).unwrap();
    assert_eq!(
        kinds(&written, &out),
        [
            ("lists.rs".to_owned(), ChangeKind::Created),
            ("mod.rs".to_owned(), ChangeKind::Created)
        ]
    );
    assert!(generate(&schemas, &out, true).unwrap().is_empty());

    std::fs::write(out.join("lists.rs"), "// edited by hand\n").unwrap();
    std::fs::write(out.join("gone.rs"), "// its schema was removed\n").unwrap();
    let Err(Error::Stale { changes, .. }) = generate(&schemas, &out, true) else {
        panic!("a check of stale files must fail");
    };
    assert_eq!(
        kinds(&changes, &out),
        [
            ("lists.rs".to_owned(), ChangeKind::Updated),
            ("gone.rs".to_owned(), ChangeKind::Removed)
        ]
    );
    // Checking wrote nothing; writing brings the directory back.
    assert_eq!(
        std::fs::read_to_string(out.join("lists.rs")).unwrap(),
        "// edited by hand\n"
    );
    assert_eq!(generate(&schemas, &out, false).unwrap().len(), 2);
    assert!(!out.join("gone.rs").exists());
    assert!(generate(&schemas, &out, true).unwrap().is_empty());
}
