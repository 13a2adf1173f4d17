//! `cargo xtask codegen`: `schemas/` → `crates/perago/src/contracts/`.

use crate::Mode;
use perago_codegen::SchemaSet;
use perago_codegen::emit::{self, REGENERATE};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Regenerates (or, in check mode, compares) every generated file.
pub fn run(root: &Path, mode: Mode) -> Result<(), String> {
    let files = generate(root)?;
    let out_dir = root.join("crates/perago/src/contracts");
    let mut stale = Vec::new();
    for (path, contents) in &files {
        if ensure_file_contents(path, contents, mode)? {
            stale.push(
                path.strip_prefix(root)
                    .unwrap_or(path)
                    .display()
                    .to_string(),
            );
        }
    }
    // A generated file whose schema is gone is stale too.
    if let Ok(entries) = std::fs::read_dir(&out_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if !files.iter().any(|(p, _)| *p == path) {
                if mode == Mode::Write {
                    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                }
                stale.push(
                    path.strip_prefix(root)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    match (mode, stale.is_empty()) {
        (Mode::Check, false) => {
            let mut msg = String::from("generated files are stale; run `");
            let _ = write!(msg, "{REGENERATE}` and commit:");
            for f in &stale {
                let _ = write!(msg, "\n  {f}");
            }
            Err(msg)
        }
        (Mode::Write, false) => {
            for f in &stale {
                eprintln!("updated {f}");
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Every generated file and its contents.
pub fn generate(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let set = SchemaSet::load_dir(&root.join("schemas")).map_err(|e| e.to_string())?;
    let modules = emit::emit(&set);
    let out_dir = root.join("crates/perago/src/contracts");
    let mut files: Vec<(PathBuf, String)> = modules
        .iter()
        .map(|m| (out_dir.join(format!("{}.rs", m.name)), m.source.clone()))
        .collect();
    files.push((
        out_dir.join("mod.rs"),
        emit::emit_mod(
            &modules,
            "The generated types and validators of perago's contract schemas.",
        ),
    ));
    Ok(files)
}

/// Writes `contents` to `path` when it differs (or only reports it, in check mode).
/// Returns whether the file was stale.
fn ensure_file_contents(path: &Path, contents: &str, mode: Mode) -> Result<bool, String> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return Ok(false);
    }
    if mode == Mode::Write {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(true)
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
