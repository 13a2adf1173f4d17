//! `cargo xtask codegen`: every [`Target`] — each crate's `<crate>/schemas/` →
//! `<crate>/src/contracts/` (perago's own, see [`CONTRACT_CRATES`], and the task crates, see
//! [`TASK_CRATES`]), and
//! each fragment of the generator's snapshot tests, `crates/perago-codegen/tests/fragments/<name>/`
//! → `tests/src/fragments/<name>/` (compiled and checked by `tests/tests/fragments.rs`).

use crate::Mode;
use perago_codegen::SchemaSet;
use perago_codegen::emit::{self, Module, REGENERATE};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fragments of the generator's snapshot tests: one directory of schemas each.
const FRAGMENTS: &str = "crates/perago-codegen/tests/fragments";
/// Where the fragments are generated to, one module directory each.
const FRAGMENTS_OUT: &str = "tests/src/fragments";

/// perago's crates with contract schemas of their own: the runtime's envelopes, and
/// worker-completion/v1.
const CONTRACT_CRATES: &[(&str, &str)] = &[
    (
        "crates/perago",
        "The generated types and validators of perago's contract schemas.",
    ),
    (
        "crates/perago-completion",
        "The generated type and validator of the worker-completion/v1 schema.",
    ),
];

/// Task crates whose params and result schemas (`<crate>/schemas/`) are generated into
/// `<crate>/src/contracts/`, by the same code path as perago's own contracts.
const TASK_CRATES: &[&str] = &["crates/perago-example"];

/// A directory of schemas generated into a directory of modules: one per schema file and a
/// `mod.rs` declaring them. Paths are relative to the workspace root, with `/`.
#[derive(Debug)]
struct Target {
    schemas: String,
    out: String,
    /// The doc comment of the `mod.rs`.
    doc: String,
}

/// Every target, the contracts first, then the fragments by name.
fn targets(root: &Path) -> Result<Vec<Target>, String> {
    let mut targets: Vec<Target> = CONTRACT_CRATES
        .iter()
        .map(|(krate, doc)| Target {
            schemas: format!("{krate}/schemas"),
            out: format!("{krate}/src/contracts"),
            doc: (*doc).to_owned(),
        })
        .collect();
    for krate in TASK_CRATES {
        targets.push(Target {
            schemas: format!("{krate}/schemas"),
            out: format!("{krate}/src/contracts"),
            doc: "The generated types and validators of this crate's task params and results."
                .to_owned(),
        });
    }
    for name in fragment_names(root)? {
        targets.push(Target {
            schemas: format!("{FRAGMENTS}/{name}"),
            out: format!("{FRAGMENTS_OUT}/{}", emit::module_name(&name)),
            doc: format!("The generator's snapshot-test fragment `{name}`."),
        });
    }
    Ok(targets)
}

/// The fragment directory names, sorted.
fn fragment_names(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join(FRAGMENTS);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        if entry.path().is_dir() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Regenerates (or, in check mode, compares) every generated file.
pub fn run(root: &Path, mode: Mode) -> Result<(), String> {
    let files = generate(root)?;
    let relative = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    // Each stale file and what writing does to it.
    let mut stale: Vec<(String, &str)> = Vec::new();
    for (path, contents) in &files {
        if let Some(change) = ensure_file_contents(path, contents, mode)? {
            stale.push((relative(path), change));
        }
    }
    // A generated file whose schema is gone is stale too.
    let task_outs = TASK_CRATES.iter().map(|k| format!("{k}/src/contracts"));
    let dirs: Vec<String> = CONTRACT_CRATES
        .iter()
        .map(|(krate, _)| format!("{krate}/src/contracts"))
        .chain([FRAGMENTS_OUT.to_owned()])
        .chain(task_outs)
        .collect();
    for dir in &dirs {
        for path in files_under(&root.join(dir)) {
            if !files.iter().any(|(p, _)| *p == path) {
                if mode == Mode::Write {
                    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    remove_empty_dirs(&path, &root.join(dir));
                }
                stale.push((relative(&path), "removed"));
            }
        }
    }
    match (mode, stale.is_empty()) {
        (Mode::Check, false) => {
            let mut msg = String::from("generated files are stale; run `");
            let _ = write!(msg, "{REGENERATE}` and commit:");
            for (f, change) in &stale {
                let _ = write!(msg, "\n  {f} (to be {change})");
            }
            Err(msg)
        }
        (Mode::Write, false) => {
            for (f, change) in &stale {
                eprintln!("{change} {f}");
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Every generated file and its contents.
pub fn generate(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut files = Vec::new();
    for target in targets(root)? {
        let set = SchemaSet::load_dir(&root.join(&target.schemas))
            .map_err(|e| format!("{}: {e}", target.schemas))?;
        let modules = emit::emit_from(&set, &target.schemas);
        let out_dir = root.join(&target.out);
        files.extend(
            modules
                .iter()
                .map(|m| (out_dir.join(format!("{}.rs", m.name)), m.source.clone())),
        );
        files.push((
            out_dir.join("mod.rs"),
            emit::emit_mod(&modules, &target.doc, &target.schemas),
        ));
    }
    // `tests/src/fragments/mod.rs`: one module per fragment directory.
    let fragments: Vec<Module> = fragment_names(root)?
        .into_iter()
        .map(|name| Module {
            name: emit::module_name(&name),
            file: name,
            source: String::new(),
        })
        .collect();
    files.push((
        root.join(FRAGMENTS_OUT).join("mod.rs"),
        emit::emit_mod(
            &fragments,
            "The fragments of the generator's snapshot tests, compiled so `tests/fragments.rs` can \
             check them against the interpreter.",
            FRAGMENTS,
        ),
    ));
    Ok(files)
}

/// Every file below `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Removes the directories between a removed file and `top` (exclusive) that are now empty.
fn remove_empty_dirs(file: &Path, top: &Path) {
    for dir in file.ancestors().skip(1).take_while(|d| *d != top) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Writes `contents` to `path` when it differs (or only reports it, in check mode).
/// Returns whether the file was stale.
/// Writes `contents` to `path` unless it holds them already (in check mode, writes nothing);
/// returns what writing does: `created` or `updated`, or `None` when the file is fresh.
fn ensure_file_contents(
    path: &Path,
    contents: &str,
    mode: Mode,
) -> Result<Option<&'static str>, String> {
    let change = match std::fs::read_to_string(path) {
        Ok(old) if old == contents => return Ok(None),
        Ok(_) => "updated",
        Err(_) => "created",
    };
    if mode == Mode::Write {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(Some(change))
}

#[cfg(test)]
mod tests {
    /// `cargo test` fails when a checked-in generated file differs from what the schemas give.
    #[test]
    fn generated_files_are_fresh() {
        if let Err(e) = super::run(&crate::workspace_root(), crate::Mode::Check) {
            panic!("{e}");
        }
    }
}
