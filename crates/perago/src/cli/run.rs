//! `run <task> --input FILE|- [--workspace-dir DIR] [--log FILE]`.

use super::{EXIT_FAILED, EXIT_OK};
use crate::log::JsonLines;
use crate::runtime::{ExecutionContext, RuntimeConfig, execute_with};
use crate::task::Registry;
use std::io::{Read, Write};
use std::path::PathBuf;

/// The arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The task's name (see `tasks`).
    pub task: String,
    /// The Conductor inputData: a JSON file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    pub input: String,
    /// The local workspace directory of a workspace task (its prefix of the input ref).
    #[arg(long, value_name = "DIR")]
    pub workspace_dir: Option<PathBuf>,
    /// Append the JSON Lines log record to FILE instead of writing it to standard error.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Runs the task once; `Err` is a usage, input-file or configuration error.
pub fn run(
    registry: &Registry,
    args: &RunArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let config = RuntimeConfig::from_env().map_err(|e| e.to_string())?;
    let Some(task) = registry.get(&args.task) else {
        return Err(format!(
            "unknown task `{}`; this binary has: {}",
            args.task,
            registry.names().join(", ")
        ));
    };
    match (task.workspace(), &args.workspace_dir) {
        (Some(_), None) => {
            return Err(format!(
                "`{}` is a workspace task: give --workspace-dir DIR, the local directory of its \
                 workspace",
                task.name
            ));
        }
        (Some(_), Some(dir)) if !dir.is_dir() => {
            return Err(format!(
                "--workspace-dir {}: not a directory",
                dir.display()
            ));
        }
        (None, Some(_)) => {
            return Err(format!(
                "--workspace-dir is only for workspace tasks; `{}` is workspace-free",
                task.name
            ));
        }
        _ => {}
    }
    let text = if args.input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(&args.input).map_err(|e| format!("{}: {e}", args.input))?
    };
    let input = perago_ir::json::parse_strict(&text)
        .map_err(|e| format!("{}: not a JSON document: {e}", args.input))?;
    let context = ExecutionContext {
        workspace_root: args.workspace_dir.clone(),
        config,
    };
    let result = execute_with(task, &input, &context);
    let payload = serde_json::to_string_pretty(&result.conductor_payload())
        .map_err(|e| format!("cannot print the payload: {e}"))?;
    writeln!(out, "{payload}").map_err(|e| format!("cannot write the payload: {e}"))?;

    let record = result.log_record(task.name, None, None);
    let logged = match &args.log {
        Some(path) => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|file| JsonLines::new(file).write(&record))
            .map_err(|e| format!("{}: {e}", path.display())),
        None => JsonLines::new(&mut *err)
            .write(&record)
            .map_err(|e| e.to_string()),
    };
    if let Err(e) = logged {
        let _ = writeln!(err, "warning: cannot write the log record: {e}");
    }
    Ok(if result.is_completed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}
