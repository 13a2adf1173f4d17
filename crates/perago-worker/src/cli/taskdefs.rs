//! `taskdefs [--out DIR [--check]] [--owner-email EMAIL]`.

use super::{CommandError, output_error};
use crate::taskdef::{self, files};
use perago::task::Registry;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `taskdefs`.
#[derive(Debug, clap::Args)]
pub struct TaskdefsArgs {
    /// Write one pretty-printed `<task>.json` per task into this directory (created when
    /// missing; files of no task are removed) instead of printing the JSON array.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --out: write nothing, and exit 1 naming every stale file when the directory does
    /// not hold exactly these TaskDefs (for CI).
    #[arg(long, requires = "out")]
    pub check: bool,
    /// The `ownerEmail` of tasks that set no `owner_email` (default: $PERAGO_OWNER_EMAIL).
    #[arg(long, value_name = "EMAIL")]
    pub owner_email: Option<String>,
}

/// Prints or writes the TaskDefs.
pub fn run(
    registry: &Registry,
    args: &TaskdefsArgs,
    out: &mut dyn Write,
) -> Result<u8, CommandError> {
    let settings = taskdef::settings_from_env(args.owner_email.clone());
    let defs = taskdef::assemble_all(registry, &settings).map_err(|e| e.to_string())?;
    match &args.out {
        None => {
            let array: Vec<_> = defs.iter().map(taskdef::TaskDef::to_json).collect();
            let text = serde_json::to_string_pretty(&array).map_err(|e| e.to_string())?;
            writeln!(out, "{text}").map_err(output_error)?;
        }
        Some(dir) => {
            let changes = files::sync(dir, &defs, args.check)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            let shown = |file: &str| dir.join(file).display().to_string();
            if args.check && !changes.is_empty() {
                let command = format!("taskdefs --out {}", dir.display());
                let message = files::stale_message(&command, &changes, shown);
                writeln!(out, "{message}").map_err(output_error)?;
                return Ok(super::EXIT_FAILED);
            }
            for c in &changes {
                writeln!(out, "{} {}", c.change.done(), shown(&c.file)).map_err(output_error)?;
            }
            if changes.is_empty() {
                writeln!(
                    out,
                    "{}: {} TaskDefs, all up to date",
                    dir.display(),
                    defs.len()
                )
                .map_err(output_error)?;
            }
        }
    }
    Ok(super::EXIT_OK)
}
