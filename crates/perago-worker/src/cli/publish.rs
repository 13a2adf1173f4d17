//! `publish [--conductor-url URL] [--dry-run] [--register-schemas] [--owner-email EMAIL]
//! [--allow-breaking] [--workflows DIR]`.

use super::CommandError;
use crate::taskdef::{self, publish};
use crate::workflow::{self, Contracts};
use perago::task::Registry;
use perago_conductor::{AUTH_TOKEN_ENV, Client};
use std::io::Write;

/// The arguments of `publish`.
#[derive(Debug, clap::Args)]
#[command(after_help = format!(
    "An X-Authorization token (Orkes) is read from ${AUTH_TOKEN_ENV} when set; it is never printed."
))]
pub struct PublishArgs {
    /// The Conductor server, e.g. `http://localhost:8080` (a trailing `/api` is accepted)
    /// [env: CONDUCTOR_SERVER_URL]
    #[arg(long, value_name = "URL")]
    pub conductor_url: Option<String>,
    /// Only read the live TaskDefs and print the diff; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also register the input and output SchemaDefs with `POST /api/schema` (a server without a
    /// schema registry gets a warning: the schemas travel inline in the TaskDefs anyway).
    #[arg(long)]
    pub register_schemas: bool,
    /// The `ownerEmail` of tasks that set no `owner_email` (default: $PERAGO_OWNER_EMAIL).
    #[arg(long, value_name = "EMAIL")]
    pub owner_email: Option<String>,
    /// Publish a schema change that breaks callers (params) or consumers (result) of a task;
    /// without it such a change is refused, naming the change, a witness and the WorkflowDefs
    /// it breaks.
    #[arg(long)]
    pub allow_breaking: bool,
    /// Also register the WorkflowDefs of this directory's `*.json` files, once they pass
    /// `workflows check` against these tasks and the server's (nothing is sent otherwise).
    #[arg(long, value_name = "DIR")]
    pub workflows: Option<std::path::PathBuf>,
}

/// Publishes the TaskDefs: exit 0 when everything was registered (or nothing had to be), 1 when
/// the server refused or failed (the error says what was and was not registered), 2 on a usage or
/// TaskDef error (nothing sent).
pub fn run(
    registry: &Registry,
    args: &PublishArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, CommandError> {
    let settings = taskdef::settings_from_env(args.owner_email.clone());
    let defs =
        taskdef::assemble_all(registry, &settings).map_err(|e| format!("{e}\nnothing was sent"))?;
    let url = super::server_url(args.conductor_url.as_deref(), |var| std::env::var(var).ok())?;
    let client = Client::from_env(&url).map_err(|e| e.to_string())?;
    let workflows = match &args.workflows {
        Some(dir) => match checked_workflows(&client, &defs, dir) {
            Ok(workflows) => workflows,
            Err(e) => {
                let _ = writeln!(err, "{e}");
                return Ok(super::EXIT_FAILED);
            }
        },
        None => Vec::new(),
    };
    let options = publish::Options {
        dry_run: args.dry_run,
        register_schemas: args.register_schemas,
        allow_breaking: args.allow_breaking,
    };
    let given: Vec<(String, serde_json::Value)> = workflows
        .iter()
        .map(|w| {
            let name = w
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            (format!("WorkflowDef {name} (--workflows)"), w.clone())
        })
        .collect();
    let published = publish::publish_with(&client, &defs, options, &given, out)
        .map_err(|e| format!("publish failed: {e}"))
        .and_then(|_| {
            let workflows: Vec<&serde_json::Value> = workflows.iter().collect();
            workflow::publish::publish(&client, &workflows, args.dry_run, out)
                .map_err(|e| format!("publish failed: {e}"))
        });
    match published {
        Ok(_) => Ok(super::EXIT_OK),
        Err(e) => {
            let _ = writeln!(err, "{e}");
            Ok(super::EXIT_FAILED)
        }
    }
}

/// The WorkflowDefs of `dir`, checked against these TaskDefs and the server's others.
fn checked_workflows(
    client: &Client,
    defs: &[taskdef::TaskDef],
    dir: &std::path::Path,
) -> Result<Vec<serde_json::Value>, String> {
    let mut contracts = Contracts::from_server(client)
        .map_err(|e| format!("reading the server's TaskDefs: {e}; nothing was sent"))?;
    for def in defs {
        contracts.add_taskdef(&def.to_json(), "this binary")?;
    }
    workflow::checked_definitions(&workflow::json_files(dir)?, &mut contracts)
}
