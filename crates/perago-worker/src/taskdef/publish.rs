//! Publishing TaskDefs to a Conductor server: read the live defs, print a per-task diff, and
//! register what changed with one `POST /api/metadata/taskdefs` (an upsert).
//!
//! 1. `GET /api/metadata/taskdefs/{name}` for every task (404: new); with `register_schemas`,
//!    `GET /api/schema/{name}/{version}` for each SchemaDef too.
//! 2. Print `name: new | changed (field: old → new, …) | unchanged` ([`super::diff`]).
//! 3. Refuse, before sending anything, a schema whose content differs from the server's at the
//!    same version, or whose version would go down.
//! 4. Unless `dry_run`: one `POST /api/metadata/taskdefs` with the new and changed TaskDefs
//!    (nothing when all are unchanged); with `register_schemas`, one `POST /api/schema` with the
//!    SchemaDefs the registry lacks (a 404 there: the server has no schema registry; a warning,
//!    since the schemas travel inline in the TaskDefs anyway).
//!
//! Connection errors and 5xx are retried by the [`Client`]; any failure is a [`PublishError`]
//! saying what was and was not registered. The auth token is never printed.

use super::TaskDef;
use super::diff::{TaskDiff, diff};
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
    let names: Vec<String> = taskdefs.iter().map(|d| d.name.clone()).collect();
    let fail_before = |message: String, source: Option<perago_conductor::Error>| PublishError {
        message,
        source: source.map(Box::new),
        registered: Vec::new(),
        not_registered: names.clone(),
        schemas_not_registered: Vec::new(),
    };
    let _ = writeln!(
        out,
        "Conductor {}: {} TaskDef{}{}",
        client.base_url(),
        taskdefs.len(),
        if taskdefs.len() == 1 { "" } else { "s" },
        if options.dry_run { " (dry run)" } else { "" }
    );

    // 1. Read.
    let mut locals = Vec::new();
    let mut diffs = Vec::new();
    let mut guard = Vec::new();
    for def in taskdefs {
        let live = client.get_taskdef(&def.name).map_err(|e| {
            fail_before(
                format!("cannot read the live TaskDef `{}`", def.name),
                Some(e),
            )
        })?;
        let local = def.to_json();
        if let Some(live) = &live {
            guard.extend(version_guard(def, live, "the server's TaskDef"));
        }
        diffs.push(diff(&local, live.as_ref()));
        locals.push(local);
    }
    let mut schema_defs: Vec<(String, Value)> = Vec::new();
    if options.register_schemas {
        for def in taskdefs {
            for schema in def.schema_defs() {
                let label = schema_label(&schema);
                let name = schema["name"].as_str().unwrap_or_default().to_owned();
                let version = schema["version"].as_u64().unwrap_or(1) as u32;
                let live = client.get_schema(&name, version).map_err(|e| {
                    fail_before(format!("cannot read the live schema {label}"), Some(e))
                })?;
                match live {
                    Some(live) if live.get("data") == schema.get("data") => {}
                    Some(_) => guard.push(format!(
                        "schema {label} differs from the server's registry at the same version; \
                         raise `schema_version` of task `{}`",
                        def.name
                    )),
                    None => schema_defs.push((label, schema)),
                }
            }
        }
    }

    // 2. Show.
    for d in &diffs {
        let _ = writeln!(out, "{d}");
    }

    // 3. Refuse a changed schema under an old version.
    if !guard.is_empty() {
        return Err(fail_before(
            format!(
                "refusing to publish, nothing was sent:\n  {}",
                guard.join("\n  ")
            ),
            None,
        ));
    }

    let to_send: Vec<Value> = diffs
        .iter()
        .zip(&locals)
        .filter(|(d, _)| d.needs_publish())
        .map(|(_, l)| l.clone())
        .collect();
    let send_names: Vec<String> = diffs
        .iter()
        .filter(|d| d.needs_publish())
        .map(|d| d.name.clone())
        .collect();
    let schema_labels: Vec<String> = schema_defs.iter().map(|(l, _)| l.clone()).collect();

    // 4. Send.
    if options.dry_run {
        if send_names.is_empty() {
            let _ = writeln!(
                out,
                "dry run: every TaskDef is unchanged; nothing would be sent"
            );
        } else {
            let _ = writeln!(
                out,
                "dry run: would POST {TASKDEFS_PATH} with {} TaskDef{}: {}",
                send_names.len(),
                if send_names.len() == 1 { "" } else { "s" },
                send_names.join(", ")
            );
        }
        if !schema_labels.is_empty() {
            let _ = writeln!(
                out,
                "dry run: would POST {SCHEMA_PATH} with {}",
                schema_labels.join(", ")
            );
        }
        return Ok(Report {
            diffs,
            registered: Vec::new(),
            schemas: if options.register_schemas {
                Schemas::WouldRegister(schema_labels)
            } else {
                Schemas::NotRequested
            },
        });
    }

    if send_names.is_empty() {
        let _ = writeln!(out, "nothing to publish: every TaskDef is unchanged");
    } else {
        client
            .register_taskdefs(&to_send)
            .map_err(|e| PublishError {
                message: format!(
                    "POST {TASKDEFS_PATH} with {} TaskDef{} failed",
                    send_names.len(),
                    if send_names.len() == 1 { "" } else { "s" }
                ),
                source: Some(Box::new(e)),
                registered: Vec::new(),
                not_registered: send_names.clone(),
                schemas_not_registered: schema_labels.clone(),
            })?;
        let _ = writeln!(
            out,
            "registered {} TaskDef{}: {}",
            send_names.len(),
            if send_names.len() == 1 { "" } else { "s" },
            send_names.join(", ")
        );
    }

    let schemas = if !options.register_schemas {
        Schemas::NotRequested
    } else if schema_defs.is_empty() {
        let _ = writeln!(out, "schemas: the registry has them all");
        Schemas::Registered(Vec::new())
    } else {
        let bodies: Vec<Value> = schema_defs.iter().map(|(_, s)| s.clone()).collect();
        match client.register_schemas(&bodies) {
            Ok(SchemaRegistration::Registered) => {
                let _ = writeln!(out, "registered schemas: {}", schema_labels.join(", "));
                Schemas::Registered(schema_labels)
            }
            Ok(SchemaRegistration::NoRegistry) => {
                let _ = writeln!(
                    out,
                    "warning: no schema registry on this server (POST {SCHEMA_PATH}: 404); the \
                     schemas travel inline in the TaskDefs"
                );
                Schemas::NoRegistry(schema_labels)
            }
            Err(e) => {
                return Err(PublishError {
                    message: format!("POST {SCHEMA_PATH} failed"),
                    source: Some(Box::new(e)),
                    registered: send_names,
                    not_registered: Vec::new(),
                    schemas_not_registered: schema_labels,
                });
            }
        }
    };
    Ok(Report {
        diffs,
        registered: send_names,
        schemas,
    })
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
fn version_guard(def: &TaskDef, live: &Value, whose: &str) -> Vec<String> {
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
