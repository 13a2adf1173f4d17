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

/// `Codegen::embed_files`: the generated `mod.rs` holds each schema file as written, whatever
/// quotes and `#`s its text has, one constant each and `SCHEMA_FILES` listing them.
#[test]
fn embed_files_holds_the_schema_files_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let (schemas, out) = (dir.path().join("schemas"), dir.path().join("out"));
    std::fs::create_dir(&schemas).unwrap();
    let text = concat!(
        "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n",
        "  \"title\": \"Note\", \"description\": \"ends a raw string: \\\"## and \\\"#\",\n",
        "  \"type\": \"object\", \"properties\": {\"n\": {\"$ref\": \"#/$defs/N\"}},\n",
        "  \"$defs\": {\"N\": {\"type\": \"integer\"}}\n}\n"
    );
    std::fs::write(schemas.join("note.schema.json"), text).unwrap();
    perago_codegen::Codegen::new(&schemas, &out)
        .embed_files(true)
        .run(perago_codegen::Mode::Write)
        .unwrap();

    let file = syn::parse_file(&std::fs::read_to_string(out.join("mod.rs")).unwrap()).unwrap();
    let value = |name: &str| {
        file.items.iter().find_map(|item| match item {
            syn::Item::Const(c) if c.ident == name => Some((*c.expr).clone()),
            _ => None,
        })
    };
    let Some(syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(embedded),
        ..
    })) = value("NOTE_JSON")
    else {
        panic!("mod.rs has no string NOTE_JSON");
    };
    assert_eq!(embedded.value(), text);
    let listing = value("SCHEMA_FILES").expect("mod.rs has SCHEMA_FILES");
    let listing = quote::quote!(#listing).to_string();
    assert_eq!(listing, r#"& [("note.schema.json" , NOTE_JSON)]"#);
}

/// Typed formats are the generator's to be told, not the features': with them, a `format`
/// is its crate's type and the files say which features of perago they need; without, a
/// `String`, whatever features are on. A name that is no typed format is refused.
#[test]
fn typed_formats_are_chosen_when_generating() {
    use perago_codegen::{Codegen, TypedFormats};
    let dir = tempfile::tempdir().unwrap();
    let (schemas, out) = (dir.path().join("schemas"), dir.path().join("out"));
    std::fs::create_dir(&schemas).unwrap();
    std::fs::write(
        schemas.join("stamp.schema.json"),
        r#"{"type": "object", "properties": {"id": {"type": "string", "format": "uuid"},
            "at": {"type": "string", "format": "date-time"}, "on": {"type": "string", "format": "date"}},
            "required": ["id", "at", "on"]}"#,
    )
    .unwrap();
    let typed = TypedFormats::parse("uuid, chrono").unwrap();
    let codegen = Codegen::new(&schemas, &out).typed_formats(typed);
    let files = codegen.files().unwrap();
    let stamp = &files
        .iter()
        .find(|(p, _)| p.ends_with("stamp.rs"))
        .unwrap()
        .1;
    assert!(stamp.contains("pub id: ::perago::types::Uuid"), "{stamp}");
    assert!(stamp.contains("pub at: ::perago::types::DateTime<::perago::types::FixedOffset>"));
    assert!(stamp.contains("pub on: ::perago::types::NaiveDate"));
    assert!(stamp.contains("needs perago's features `uuid,chrono`"));
    assert!(
        codegen
            .regenerate()
            .ends_with("--typed-formats uuid,chrono")
    );
    let plain = Codegen::new(&schemas, &out).files().unwrap();
    let stamp = &plain
        .iter()
        .find(|(p, _)| p.ends_with("stamp.rs"))
        .unwrap()
        .1;
    assert!(stamp.contains("pub id: String") && !stamp.contains("types::"));
    assert!(TypedFormats::parse("jiff").is_err());
}
