//! perago's developer tasks.
//!
//! - `cargo xtask codegen [--check]`: regenerate the contract types and validators of
//!   perago's schemas (`schemas/<dir>/`) and of the task crates' (`<crate>/schemas/`) into
//!   each crate's `src/contracts/`, and those of the generator's test
//!   fragments (`crates/perago-codegen/tests/fragments/<name>/`) into
//!   `tests/src/fragments/<name>/`; `--check` writes nothing and fails, naming every stale file,
//!   when anything differs.
//! - `cargo xtask taskdefs [--check]`: regenerate the Conductor TaskDefs of the task crates'
//!   tasks into `taskdefs/<task>.json`; `--check` writes nothing and fails naming every stale
//!   file; both fail when a schema changed but its `schema_version` did not (see [`taskdefs`]).
//!   `--check --against REF` also compares each task's schemas with its TaskDef committed at
//!   git `REF`: a breaking change fails unless `--allow-breaking`, naming the WorkflowDefs it
//!   breaks.
//! - `cargo xtask workflows [--check]`: check every `workflows/` directory's WorkflowDefs
//!   against the tasks' schemas; an error finding fails (see [`workflows`]).
//! - `cargo xtask publish --conductor-url URL [--dry-run] [--register-schemas] [--allow-breaking]`: register those
//!   TaskDefs with a Conductor server (token: `$CONDUCTOR_AUTH_TOKEN`), once `taskdefs/` is fresh,
//!   and the WorkflowDefs once they pass the check.
//!
//! `taskdefs` and `publish` link the task crates (feature `tasks`, on by default); should
//! generated code ever not compile, `cargo run -p xtask --no-default-features -- codegen` still
//! regenerates it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod codegen;
#[cfg(feature = "tasks")]
mod taskdefs;
#[cfg(feature = "tasks")]
mod tasks;
#[cfg(feature = "tasks")]
mod workflows;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen::run(&workspace_root(), Mode::Write),
        ["codegen", "--check"] => codegen::run(&workspace_root(), Mode::Check),
        #[cfg(feature = "tasks")]
        ["taskdefs"] => taskdefs::run(&workspace_root(), Mode::Write, &[]),
        #[cfg(feature = "tasks")]
        ["taskdefs", "--check", rest @ ..] => taskdefs::run(&workspace_root(), Mode::Check, rest),
        #[cfg(feature = "tasks")]
        ["workflows"] | ["workflows", "--check"] => workflows::run(&workspace_root()),
        #[cfg(feature = "tasks")]
        ["publish", rest @ ..] => taskdefs::publish(&workspace_root(), rest),
        _ => {
            eprintln!(
                "usage: cargo xtask codegen [--check]\n       \
                 cargo xtask taskdefs [--check [--against REF [--allow-breaking]]]\n       \
                 cargo xtask workflows [--check]\n       \
                 cargo xtask publish --conductor-url URL [--dry-run] [--register-schemas]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

pub use perago_codegen::Mode;

/// The workspace root (this crate's parent directory).
/// The workspace's `Cargo.toml`, parsed; errors name its path.
pub fn workspace_manifest(root: &Path) -> Result<(PathBuf, toml::Table), String> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, manifest))
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default()
}
