//! Publishing TaskDefs to a Conductor server: read the live defs, print a per-task diff, and
//! register what changed with one `POST /api/metadata/taskdefs` (an upsert).
//!
//! 1. `GET /api/metadata/taskdefs/{name}` for every task (404: new); with `register_schemas`,
//!    `GET /api/schema/{name}/{version}` for each SchemaDef too.
//! 2. Print `name: new | changed (field: old → new, …) | unchanged` ([`super::diff`]).
//! 3. Refuse, before sending anything, a schema whose content differs from the server's at the
//!    same version, or whose version would go down; and, unless `allow_breaking`, a schema
//!    change that breaks callers (params) or consumers (result) ([`super::evolution`]),
//!    naming each breaking change, a witness and the WorkflowDefs (registered, or given) whose
//!    wiring it breaks.
//! 4. Unless `dry_run`: one `POST /api/metadata/taskdefs` with the new and changed TaskDefs
//!    (nothing when all are unchanged); with `register_schemas`, one `POST /api/schema` with the
//!    SchemaDefs the registry lacks (a 404 there: the server has no schema registry; a warning,
//!    since the schemas travel inline in the TaskDefs anyway).
//!
//! Connection errors and 5xx are retried by the [`Client`]; any failure is a [`PublishError`]
//! saying what was and was not registered. The auth token is never printed.

use super::TaskDef;
use super::diff::{TaskDiff, diff};
use super::evolution::{self, SchemaChanges};
use crate::workflow::Contracts;
use perago_conductor::Client;
use perago_conductor::metadata::{SCHEMA_PATH, SchemaRegistration, TASKDEFS_PATH};
use serde_json::Value;
use std::fmt;
use std::io::Write;

/// What to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Only read and print the diff; send nothing.
    pub dry_run: bool,
    /// Also register the SchemaDefs with `POST /api/schema`.
    pub register_schemas: bool,
    /// Publish a breaking schema change (reported all the same) instead of refusing it.
    pub allow_breaking: bool,
}

/// What a publish did.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Every task's diff, in order.
    pub diffs: Vec<TaskDiff>,
    /// The TaskDefs sent and accepted (none in a dry run).
    pub registered: Vec<String>,
    /// What happened to the SchemaDefs.
    pub schemas: Schemas,
}

/// The SchemaDefs' side of a publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schemas {
    /// `register_schemas` was off.
    NotRequested,
    /// Registered these (`name` v`version`); empty when the registry had them all.
    Registered(Vec<String>),
    /// The server has no schema registry (404): these were not stored.
    NoRegistry(Vec<String>),
    /// A dry run: these would be registered.
    WouldRegister(Vec<String>),
}

/// A failed publish: why, and what was and was not registered.
#[derive(Debug)]
pub struct PublishError {
    /// What failed.
    pub message: String,
    /// The Conductor error behind it, if any.
    pub source: Option<Box<perago_conductor::Error>>,
    /// TaskDefs the server accepted before the failure.
    pub registered: Vec<String>,
    /// TaskDefs that were to be registered and were not.
    pub not_registered: Vec<String>,
    /// SchemaDefs that were to be registered and were not.
    pub schemas_not_registered: Vec<String>,
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(source) = &self.source {
            write!(f, ": {source}")?;
        }
        if self.registered.is_empty() {
            write!(f, "\nregistered: nothing")?;
        } else {
            write!(f, "\nregistered: {}", self.registered.join(", "))?;
        }
        if !self.not_registered.is_empty() {
            write!(f, "\nnot registered: {}", self.not_registered.join(", "))?;
        }
        if !self.schemas_not_registered.is_empty() {
            write!(
                f,
                "\nschemas not registered: {}",
                self.schemas_not_registered.join(", ")
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for PublishError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e.as_ref() as &(dyn std::error::Error + 'static))
    }
}

/// Publishes `taskdefs` to the server behind `client`, printing the diff and the outcome to
/// `out`.
pub fn publish(
    client: &Client,
    taskdefs: &[TaskDef],
    options: Options,
    out: &mut dyn Write,
) -> Result<Report, PublishError> {
    publish_with(client, taskdefs, options, &[], out)
}

/// [`publish`], with WorkflowDefs about to be published beside the server's registered ones
/// (`(source, definition)`) among those a breaking change is checked against.
pub fn publish_with(
    client: &Client,
    taskdefs: &[TaskDef],
    options: Options,
    workflows: &[(String, Value)],
    out: &mut dyn Write,
) -> Result<Report, PublishError> {
    let _ = writeln!(
        out,
        "Conductor {}: {} TaskDef{}{}",
        client.base_url(),
        taskdefs.len(),
        plural(taskdefs.len()),
        if options.dry_run { " (dry run)" } else { "" }
    );

    // 1. Read.
    let Live {
        locals,
        diffs,
        guard,
        missing_schemas,
        evolutions,
    } = read_live(client, taskdefs, options)?;

    // 2. Show.
    for d in &diffs {
        let _ = writeln!(out, "{d}");
    }

    // 3. Refuse a changed schema under an old version.
    if !guard.is_empty() {
        return Err(nothing_sent(
            taskdefs,
            format!(
                "refusing to publish, nothing was sent:\n  {}",
                guard.join("\n  ")
            ),
            None,
        ));
    }

    // ... and a breaking change, unless allowed.
    if evolutions.iter().any(SchemaChanges::breaks) {
        let report = breaking_report(client, taskdefs, &evolutions, workflows)?;
        if !options.allow_breaking {
            return Err(nothing_sent(
                taskdefs,
                format!(
                    "refusing to publish a breaking schema change, nothing was sent (--allow-breaking publishes it):\n  {}",
                    report.join("\n  ")
                ),
                None,
            ));
        }
        let _ = writeln!(
            out,
            "publishing a breaking schema change (--allow-breaking):"
        );
        for line in &report {
            let _ = writeln!(out, "  {line}");
        }
    }
    for line in evolution::describe(&evolutions, false) {
        if !line.contains(": breaking: ") {
            let _ = writeln!(out, "  {line}");
        }
    }

    // 4. Send.
    let outgoing = Outgoing::new(&diffs, locals, missing_schemas);
    if options.dry_run {
        print_dry_run(&outgoing, out);
        return Ok(Report {
            diffs,
            registered: Vec::new(),
            schemas: if options.register_schemas {
                Schemas::WouldRegister(outgoing.schema_labels)
            } else {
                Schemas::NotRequested
            },
        });
    }
    register_taskdefs(client, &outgoing, out)?;
    let schemas = if options.register_schemas {
        register_schemas(client, &outgoing, out)?
    } else {
        Schemas::NotRequested
    };
    Ok(Report {
        diffs,
        registered: outgoing.names,
        schemas,
    })
}

/// What the server has, against the TaskDefs to publish.
struct Live {
    /// Each TaskDef's JSON, in order.
    locals: Vec<Value>,
    /// Each TaskDef's diff against the server's, in order.
    diffs: Vec<TaskDiff>,
    /// The schemas step 3 refuses, each saying why.
    guard: Vec<String>,
    /// The SchemaDefs the registry lacks, each with its label (`name v1`).
    missing_schemas: Vec<(String, Value)>,
    /// Each changed schema's changes against the server's (versions raised).
    evolutions: Vec<SchemaChanges>,
}

/// Step 1: the live TaskDefs, and with `register_schemas` the live SchemaDefs; a failed read
/// fails the publish before anything is sent.
fn read_live(
    client: &Client,
    taskdefs: &[TaskDef],
    options: Options,
) -> Result<Live, PublishError> {
    let mut live = Live {
        locals: Vec::new(),
        diffs: Vec::new(),
        guard: Vec::new(),
        missing_schemas: Vec::new(),
        evolutions: Vec::new(),
    };
    for def in taskdefs {
        let server = client.get_taskdef(&def.name).map_err(|e| {
            nothing_sent(
                taskdefs,
                format!("cannot read the live TaskDef `{}`", def.name),
                Some(e),
            )
        })?;
        let local = def.to_json();
        if let Some(server) = &server {
            let refused = version_guard(def, server, "the server's TaskDef");
            if refused.is_empty() {
                let changes = evolution::changes(server, &local)
                    .map_err(|e| nothing_sent(taskdefs, e, None))?;
                live.evolutions.extend(changes);
            }
            live.guard.extend(refused);
        }
        live.diffs.push(diff(&local, server.as_ref()));
        live.locals.push(local);
    }
    if options.register_schemas {
        read_schemas(client, taskdefs, &mut live)?;
    }
    Ok(live)
}

/// The registry's SchemaDef at each TaskDef's version: absent ones are missing, different ones
/// are refused.
fn read_schemas(
    client: &Client,
    taskdefs: &[TaskDef],
    live: &mut Live,
) -> Result<(), PublishError> {
    for def in taskdefs {
        for schema in def.schema_defs() {
            let label = schema_label(&schema);
            let name = schema["name"].as_str().unwrap_or_default().to_owned();
            let version = schema["version"].as_u64().unwrap_or(1) as u32;
            let server = client.get_schema(&name, version).map_err(|e| {
                nothing_sent(
                    taskdefs,
                    format!("cannot read the live schema {label}"),
                    Some(e),
                )
            })?;
            match server {
                Some(server) if server.get("data") == schema.get("data") => {}
                Some(_) => live.guard.push(format!(
                    "schema {label} differs from the server's registry at the same version; \
                     raise `schema_version` of task `{}`",
                    def.name
                )),
                None => live.missing_schemas.push((label, schema)),
            }
        }
    }
    Ok(())
}

/// Each breaking change, then the WorkflowDefs it breaks: the server's registered ones and
/// `workflows`, checked against the server's TaskDefs and then against them with `taskdefs`.
fn breaking_report(
    client: &Client,
    taskdefs: &[TaskDef],
    evolutions: &[SchemaChanges],
    workflows: &[(String, Value)],
) -> Result<Vec<String>, PublishError> {
    let mut report = evolution::describe(evolutions, true);
    let read = |what: &str, e: String| {
        nothing_sent(
            taskdefs,
            format!("cannot read the server's {what}: {e}"),
            None,
        )
    };
    let old = Contracts::from_server(client).map_err(|e| read("TaskDefs and WorkflowDefs", e))?;
    let mut new =
        Contracts::from_server(client).map_err(|e| read("TaskDefs and WorkflowDefs", e))?;
    for def in taskdefs {
        new.add_taskdef(&def.to_json(), "this publish")
            .map_err(|e| nothing_sent(taskdefs, e, None))?;
    }
    let mut all: Vec<(String, Value)> = workflows.to_vec();
    let registered = client
        .list_workflows()
        .map_err(|e| read("WorkflowDefs", e.to_string()))?;
    all.extend(registered.into_iter().map(|w| {
        let name = w
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let version = w.get("version").and_then(Value::as_i64).unwrap_or(1);
        (format!("registered WorkflowDef {name} v{version}"), w)
    }));
    let broken = evolution::broken_workflows(&all, &old, &new);
    if broken.is_empty() {
        report.push(format!(
            "no WorkflowDef of the {} checked is broken by it",
            all.len()
        ));
    } else {
        report.push("WorkflowDefs it breaks:".to_owned());
        report.extend(broken.into_iter().map(|b| format!("  {b}")));
    }
    Ok(report)
}

/// A publish that failed before sending anything: none of `taskdefs` was registered.
fn nothing_sent(
    taskdefs: &[TaskDef],
    message: String,
    source: Option<perago_conductor::Error>,
) -> PublishError {
    PublishError {
        message,
        source: source.map(Box::new),
        registered: Vec::new(),
        not_registered: taskdefs.iter().map(|d| d.name.clone()).collect(),
        schemas_not_registered: Vec::new(),
    }
}

/// What step 4 sends: the new and changed TaskDefs, and the SchemaDefs the registry lacks.
struct Outgoing {
    /// The TaskDefs' JSON, in order.
    taskdefs: Vec<Value>,
    /// Their names.
    names: Vec<String>,
    /// The SchemaDefs' JSON.
    schemas: Vec<Value>,
    /// Their labels (`name v1`).
    schema_labels: Vec<String>,
}

impl Outgoing {
    fn new(diffs: &[TaskDiff], locals: Vec<Value>, missing_schemas: Vec<(String, Value)>) -> Self {
        let (names, taskdefs) = diffs
            .iter()
            .zip(locals)
            .filter(|(d, _)| d.needs_publish())
            .map(|(d, local)| (d.name.clone(), local))
            .unzip();
        let (schema_labels, schemas) = missing_schemas.into_iter().unzip();
        Outgoing {
            taskdefs,
            names,
            schemas,
            schema_labels,
        }
    }
}

/// Step 4 of a dry run: what would be sent.
fn print_dry_run(outgoing: &Outgoing, out: &mut dyn Write) {
    let names = &outgoing.names;
    if names.is_empty() {
        let _ = writeln!(
            out,
            "dry run: every TaskDef is unchanged; nothing would be sent"
        );
    } else {
        let _ = writeln!(
            out,
            "dry run: would POST {TASKDEFS_PATH} with {} TaskDef{}: {}",
            names.len(),
            plural(names.len()),
            names.join(", ")
        );
    }
    if !outgoing.schema_labels.is_empty() {
        let _ = writeln!(
            out,
            "dry run: would POST {SCHEMA_PATH} with {}",
            outgoing.schema_labels.join(", ")
        );
    }
}

/// One `POST /api/metadata/taskdefs` with the new and changed TaskDefs, if there are any.
fn register_taskdefs(
    client: &Client,
    outgoing: &Outgoing,
    out: &mut dyn Write,
) -> Result<(), PublishError> {
    let names = &outgoing.names;
    if names.is_empty() {
        let _ = writeln!(out, "nothing to publish: every TaskDef is unchanged");
        return Ok(());
    }
    client
        .register_taskdefs(&outgoing.taskdefs)
        .map_err(|e| PublishError {
            message: format!(
                "POST {TASKDEFS_PATH} with {} TaskDef{} failed",
                names.len(),
                plural(names.len())
            ),
            source: Some(Box::new(e)),
            registered: Vec::new(),
            not_registered: names.clone(),
            schemas_not_registered: outgoing.schema_labels.clone(),
        })?;
    let _ = writeln!(
        out,
        "registered {} TaskDef{}: {}",
        names.len(),
        plural(names.len()),
        names.join(", ")
    );
    Ok(())
}

/// One `POST /api/schema` with the SchemaDefs the registry lacks, if there are any; a server
/// without a registry is a warning, since the schemas travel inline in the TaskDefs.
fn register_schemas(
    client: &Client,
    outgoing: &Outgoing,
    out: &mut dyn Write,
) -> Result<Schemas, PublishError> {
    let labels = &outgoing.schema_labels;
    if outgoing.schemas.is_empty() {
        let _ = writeln!(out, "schemas: the registry has them all");
        return Ok(Schemas::Registered(Vec::new()));
    }
    match client.register_schemas(&outgoing.schemas) {
        Ok(SchemaRegistration::Registered) => {
            let _ = writeln!(out, "registered schemas: {}", labels.join(", "));
            Ok(Schemas::Registered(labels.clone()))
        }
        Ok(SchemaRegistration::NoRegistry) => {
            let _ = writeln!(
                out,
                "warning: no schema registry on this server (POST {SCHEMA_PATH}: 404); the \
                 schemas travel inline in the TaskDefs"
            );
            Ok(Schemas::NoRegistry(labels.clone()))
        }
        Err(e) => Err(PublishError {
            message: format!("POST {SCHEMA_PATH} failed"),
            source: Some(Box::new(e)),
            registered: outgoing.names.clone(),
            not_registered: Vec::new(),
            schemas_not_registered: labels.clone(),
        }),
    }
}

/// `s` after a count other than one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `name v1`.
fn schema_label(schema: &Value) -> String {
    format!(
        "{} v{}",
        schema["name"].as_str().unwrap_or("?"),
        schema["version"].as_u64().unwrap_or(1)
    )
}

/// A schema whose content differs from `live`'s at the same version, or whose version would go
/// down.
/// Why `def`'s schemas cannot replace the `published` TaskDef's under their versions: a schema
/// whose content changed at the same version, or a version that would go down. `whose` names
/// the published one in messages.
pub fn version_guard(def: &TaskDef, live: &Value, whose: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (field, schema) in [
        ("inputSchema", &def.input_schema),
        ("outputSchema", &def.output_schema),
    ] {
        let Some(live_schema) = live.get(field).filter(|s| s.is_object()) else {
            continue;
        };
        let live_version = live_schema
            .get("version")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let version = u64::from(schema.version);
        if version < live_version {
            problems.push(format!(
                "`{}`: {field} `{}` would go from version {live_version} ({whose}) down to \
                 {version}",
                def.name, schema.name
            ));
        } else if version == live_version
            && live_schema.get("data").is_some()
            && live_schema.get("data") != Some(&schema.data)
        {
            problems.push(format!(
                "`{}`: {field} `{}` differs from {whose} at the same version {version}; raise \
                 `schema_version` of the task to {}",
                def.name,
                schema.name,
                version + 1
            ));
        }
    }
    problems
}
