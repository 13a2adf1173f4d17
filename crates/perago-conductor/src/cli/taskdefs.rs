//! `taskdefs [--out DIR] [--owner-email EMAIL]`.

use super::{CommandError, output_error};
use crate::taskdef::{self, files};
use perago::task::Registry;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `taskdefs`.
#[derive(Debug, clap::Args)]
pub struct TaskdefsArgs {
    /// Write one pretty-printed `<task>.json` per task into this directory (created when
    /// missing) instead of printing the JSON array. A file whose schema changed at the same
    /// `schema_version` is refused.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
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
            let existing = files::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let plan = files::plan(&existing, &defs).map_err(|e| e.join("\n"))?;
            files::write(dir, &plan).map_err(|e| format!("{}: {e}", dir.display()))?;
            for (file, _) in &plan.write {
                let change = if existing.contains_key(file) {
                    "updated"
                } else {
                    "created"
                };
                writeln!(out, "{change} {}", dir.join(file).display()).map_err(output_error)?;
            }
            for file in &plan.fresh {
                writeln!(out, "unchanged {}", dir.join(file).display()).map_err(output_error)?;
            }
        }
    }
    Ok(super::EXIT_OK)
}
