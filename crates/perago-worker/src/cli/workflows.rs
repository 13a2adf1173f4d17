//! `workflows check [--taskdefs DIR] [--conductor-url URL] [--format text|json] PATH...`: the
//! WorkflowDefs of files (or directories of them) checked against the tasks' schemas (see
//! [`crate::workflow`]). A task binary checks against its own tasks too; `perago workflows
//! check` against `--taskdefs` or a server.

use super::CommandError;
use crate::taskdef;
use crate::workflow::{self, Contracts, Format};
use perago::task::Registry;
use perago_conductor::Client;
use std::io::Write;
use std::path::PathBuf;

/// `workflows` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum WorkflowsCommand {
    /// Check how WorkflowDefs wire tasks against the tasks' schemas, before Conductor runs them.
    ///
    /// Each finding is `FILE:POINTER: error|warning|note[CODE]: message`, POINTER an RFC 6901
    /// JSON Pointer into the file. Exit status: 0 with no error (warnings allowed), 1 with at
    /// least one error, 2 on a usage error or a file that is not JSON or holds no WorkflowDef.
    Check(CheckArgs),
}

/// The arguments of `workflows check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A directory of Conductor TaskDef JSON files (one TaskDef or a list per file; what
    /// `taskdefs --out` writes, or any TaskDef with an inline `inputSchema`/`outputSchema`).
    #[arg(long, value_name = "DIR")]
    pub taskdefs: Option<PathBuf>,
    /// Read the TaskDefs, and the WorkflowDefs of sub-workflows, from a Conductor server.
    #[arg(long, value_name = "URL")]
    pub conductor_url: Option<String>,
    /// Output format: text, or JSON Lines (one finding an object).
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
    /// WorkflowDef files (one WorkflowDef or a list per file), or directories of `*.json` ones.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

/// How findings are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

/// `workflows ...` for a task binary (`registry`) or for `perago` (none).
pub fn run(
    registry: Option<&Registry>,
    command: &WorkflowsCommand,
    out: &mut dyn Write,
) -> Result<u8, CommandError> {
    let WorkflowsCommand::Check(args) = command;
    let mut contracts = contracts(registry, args)?;
    let files = files(&args.paths)?;
    let findings = workflow::check_files(&files, &mut contracts)?;
    let format = match args.format {
        OutputFormat::Text => Format::Text,
        OutputFormat::Json => Format::Json,
    };
    workflow::report(&findings, format, out).map_err(super::output_error)
}

/// The contracts: the binary's own tasks, `--taskdefs`, `--conductor-url`.
fn contracts(registry: Option<&Registry>, args: &CheckArgs) -> Result<Contracts, CommandError> {
    let mut contracts = match &args.taskdefs {
        Some(dir) => Contracts::from_taskdef_dir(dir)?,
        None => Contracts::default(),
    };
    if let Some(url) = &args.conductor_url {
        let client = Client::from_env(url).map_err(|e| e.to_string())?;
        let live = Contracts::from_server(&client)
            .map_err(|e| format!("reading the TaskDefs and WorkflowDefs of {url}: {e}"))?;
        contracts.tasks.extend(live.tasks);
        contracts.workflows.extend(live.workflows);
    }
    if let Some(registry) = registry {
        let settings = taskdef::settings_from_env(None);
        let defs = taskdef::assemble_all(registry, &settings).map_err(|e| e.to_string())?;
        for def in defs {
            contracts.add_taskdef(&def.to_json(), "this binary")?;
        }
    } else if args.taskdefs.is_none() && args.conductor_url.is_none() {
        return Err(CommandError::Usage(
            "no TaskDefs to check against: give --taskdefs DIR or --conductor-url URL".into(),
        ));
    }
    Ok(contracts)
}

/// The files of `paths`: files as given, directories' `*.json` files.
fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CommandError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(workflow::json_files(path)?);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}
