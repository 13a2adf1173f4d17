//! perago's developer tasks.
//!
//! - `cargo xtask codegen [--check]`: regenerate the contract types and validators of
//!   `schemas/` into `crates/perago/src/contracts/`, and those of the generator's snapshot-test
//!   fragments (`crates/perago-codegen/tests/fragments/<name>/`) into
//!   `tests/src/fragments/<name>/`; `--check` writes nothing and fails, naming every stale file,
//!   when anything differs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod codegen;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen::run(&workspace_root(), Mode::Write),
        ["codegen", "--check"] => codegen::run(&workspace_root(), Mode::Check),
        _ => {
            eprintln!("usage: cargo xtask codegen [--check]");
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

/// Write generated files, or only compare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write every file whose contents differ.
    Write,
    /// Write nothing; fail when any file differs.
    Check,
}

/// The workspace root (this crate's parent directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default()
}
