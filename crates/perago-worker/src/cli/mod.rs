//! The command line of a task crate's binary:
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     perago_worker::cli::main(perago::tasks![validate_song, build_features])
//! }
//! ```
//!
//! - `run <task> --input FILE|- [--store DIR] [--log FILE]`: one local execution of a
//!   task on a Conductor `inputData` document; prints the Conductor payload (pretty JSON) and
//!   writes the JSON Lines log record to `--log` (appended) or standard error. Exit 0 on
//!   `COMPLETED`, 1 on `FAILED` / `FAILED_WITH_TERMINAL_ERROR`, 2 on a usage, input-file or
//!   configuration error (e.g. an invalid `PERAGO_FAILURE_REASON_MAX_LENGTH`).
//! - `tasks [--format text|json]`: the registered tasks with their kind and schema types.
//! - `taskdefs [--out DIR] [--owner-email EMAIL]`: the Conductor TaskDefs of the tasks (see
//!   [`crate::taskdef`]), printed as one JSON array or written as `DIR/<task>.json`.
//! - `publish --conductor-url URL [--dry-run] [--register-schemas] [--owner-email EMAIL]`: reads
//!   the live TaskDefs, prints the per-task diff and registers what changed (see
//!   [`crate::taskdef::publish`]); exit 1 when the server refuses or fails.
//! - `worker [--conductor-url URL] [--concurrency N] ...`: serve the tasks against a Conductor server
//!   (see [`worker`] and [`crate::worker`]); the JSON Lines log goes to `--log` or standard
//!   error; exit 0 after a graceful shutdown (SIGINT/SIGTERM), 2 on a configuration error.
//! - `workflows check [--taskdefs DIR] PATH...`: WorkflowDefs checked against these tasks' schemas
//!   (see [`workflows`] and [`crate::workflow`]); exit 1 on an error finding.
//!
//! Each subcommand is a module with its clap `Args` and a `run` function, so more (TaskDefs,
//! publishing, the worker) slot in as further variants of [`Command`].

pub mod publish;
pub mod run;
pub mod schemas;
pub mod store;
pub mod taskdefs;
pub mod tasks;
pub mod worker;
pub mod workflows;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use perago::task::Registry;
use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

/// Exit status of a completed run (and of every other successful command).
pub const EXIT_OK: u8 = 0;
/// Exit status of a run that failed (`FAILED` or `FAILED_WITH_TERMINAL_ERROR`).
pub const EXIT_FAILED: u8 = 1;
/// Exit status of a usage, input-file or configuration error.
pub const EXIT_USAGE: u8 = 2;

/// Why a command stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// A usage, input-file or configuration error: exit status 2, the message on standard
    /// error.
    Usage(String),
    /// Standard output was closed by its reader (`… | head`): the command stops quietly with
    /// exit status 0, as a filter does.
    Closed,
}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        CommandError::Usage(message)
    }
}

/// The variable naming the Conductor server when `--conductor-url` is not given (the
/// Conductor SDKs' name; `http://host:8080` or `…/api`).
pub const SERVER_URL_ENV: &str = "CONDUCTOR_SERVER_URL";

/// The Conductor server of `publish` and `worker`: `--conductor-url`, else
/// [`SERVER_URL_ENV`] through `lookup`.
pub fn server_url(
    flag: Option<&str>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    flag.map(str::to_owned)
        .or_else(|| lookup(SERVER_URL_ENV))
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty())
        .ok_or_else(|| {
            format!(
                "no Conductor server: give --conductor-url URL or set {SERVER_URL_ENV} (e.g. \
                 http://localhost:8080)"
            )
        })
}

/// Opens a JSON Lines log file for appending (created when missing); the error names it.
pub fn open_log(path: &std::path::Path) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A failed write to standard output: [`CommandError::Closed`] for a closed pipe.
pub fn output_error(e: io::Error) -> CommandError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CommandError::Closed
    } else {
        CommandError::Usage(format!("cannot write to standard output: {e}"))
    }
}

/// The arguments.
#[derive(Debug, Parser)]
#[command(
    about = "Run and describe the perago tasks of this binary",
    disable_help_subcommand = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task locally on a Conductor inputData document and print the Conductor payload.
    Run(run::RunArgs),
    /// List the registered tasks: name, kind, params and result schema types.
    Tasks(tasks::TasksArgs),
    /// Print the Conductor TaskDefs of the tasks (a JSON array), or write one file per task.
    Taskdefs(taskdefs::TaskdefsArgs),
    /// Write the closed schema of every params and result type, one file each.
    Schemas(schemas::SchemasArgs),
    /// Register the TaskDefs with a Conductor server: print the diff, then upsert what changed.
    Publish(publish::PublishArgs),
    /// Serve the tasks against a Conductor server until SIGINT or SIGTERM.
    Worker(Box<worker::WorkerArgs>),
    /// Check WorkflowDefs against the tasks' schemas (these tasks', and --taskdefs DIR's).
    Workflows {
        #[command(subcommand)]
        command: workflows::WorkflowsCommand,
    },
}

/// The whole program: parses the process arguments and runs the subcommand over `registry`.
pub fn main(registry: Registry) -> ExitCode {
    // Unlocked handles: each write takes the lock for itself. Holding standard error's lock
    // for the whole run would block the worker's threads, which log there, forever.
    let code = run_with(
        &registry,
        std::env::args_os(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

/// [`main`] with explicit arguments (the first is the program name) and outputs; returns the
/// exit status.
pub fn run_with<I, T>(registry: &Registry, args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let bin = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "perago-task".to_owned());
    let matches = match Cli::command().bin_name(&bin).try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                EXIT_USAGE
            } else {
                let _ = write!(out, "{text}");
                EXIT_OK
            };
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = write!(err, "{}", e.render());
            return EXIT_USAGE;
        }
    };
    let result = match cli.command {
        Command::Run(args) => run::run(registry, &args, out, err),
        Command::Tasks(args) => tasks::run(registry, &args, out),
        Command::Taskdefs(args) => taskdefs::run(registry, &args, out),
        Command::Schemas(args) => schemas::run(registry, &args, out),
        Command::Publish(args) => publish::run(registry, &args, out, err),
        Command::Worker(args) => worker::run(registry, &args),
        Command::Workflows { command } => workflows::run(Some(registry), &command, out),
    };
    match result {
        Ok(code) => code,
        Err(CommandError::Closed) => EXIT_OK,
        Err(CommandError::Usage(message)) => {
            let _ = writeln!(err, "{bin}: {message}");
            EXIT_USAGE
        }
    }
}
