//! `run <task> --input FILE|- [--store DIR | --lakefs-endpoint URL ...] [--log FILE]
//! [--max-document-bytes SIZE]`.

use super::{CommandError, EXIT_FAILED, EXIT_OK, open_log, output_error};
use perago::log::{JsonLines, TaskRecord};
use perago::runtime::{Attempt, ExecutionContext, RuntimeConfig, execute_attempt};
use perago::task::Registry;
use perago_schema::input::read_path;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The task's name (see `tasks`).
    pub task: String,
    /// The Conductor inputData: a JSON file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    pub input: String,
    /// Where a workspace task finds its repository.
    #[command(flatten)]
    pub store: super::store::StoreArgs,
    /// Append the JSON Lines log record to FILE instead of writing it to standard error.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// The largest input read, e.g. 64MiB (the default) [env: PERAGO_MAX_DOCUMENT_BYTES]
    #[arg(long, value_name = "SIZE")]
    pub max_document_bytes: Option<String>,
}

/// Runs the task once; `Err` is a usage, input-file or configuration error.
pub fn run(
    registry: &Registry,
    args: &RunArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, CommandError> {
    let config = RuntimeConfig::from_env().map_err(|e| e.to_string())?;
    let Some(task) = registry.get(&args.task) else {
        return Err(format!(
            "unknown task `{}`; this binary has: {}",
            args.task,
            registry.names().join(", ")
        )
        .into());
    };
    let lookup = |var: &str| std::env::var(var).ok();
    let store = match task.workspace() {
        Some(_) => Some(args.store.choose(lookup)?.open()?),
        None => None,
    };
    let limit = perago_schema::input::document_limit(args.max_document_bytes.as_deref(), |var| {
        std::env::var(var).ok()
    })?;
    let bytes = read_path(args.input.as_ref(), limit).map_err(|e| match args.input.as_str() {
        "-" => format!("standard input: {e}"),
        file => format!("{file}: {e}"),
    })?;
    let input = perago_schema::json::parse_strict_slice(&bytes)
        .map_err(|e| format!("{}: not a JSON document: {e}", args.input))?;
    drop(bytes);
    let context = ExecutionContext {
        store,
        config,
        ..ExecutionContext::default()
    };
    // Each run is an attempt of its own: its staging branch, should it publish, is its own.
    let task_id = format!(
        "run-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let attempt = Attempt {
        task_id: &task_id,
        ..Attempt::LOCAL
    };
    let result = execute_attempt(task, &input, &context, &attempt);
    let payload = serde_json::to_string_pretty(&result.conductor_payload())
        .map_err(|e| format!("cannot print the payload: {e}"))?;
    writeln!(out, "{payload}").map_err(output_error)?;

    let record = TaskRecord::of(&result, task.name, None, None);
    let logged = match &args.log {
        Some(path) => open_log(path).and_then(|file| {
            JsonLines::new(file)
                .write(&record)
                .map_err(|e| format!("{}: {e}", path.display()))
        }),
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
