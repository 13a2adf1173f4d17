//! What a new TaskDef changes for the documents that flow through the task, against the one
//! published: its input (callers written for the old schema keep sending what it accepted) and
//! its output (consumers written for the old schema keep reading what the new one allows)
//! (`perago_compat::evolve`); and the WorkflowDefs whose wiring the change breaks.
//!
//! A TaskDef has no version: workers poll by name, so a new worker meets every workflow
//! already registered and running (`docs/src/reference/conductor.md` §10.1). A raised
//! `schema_version` says the schema changed; whether the change is safe is said here.

use crate::workflow::{Contracts, Severity, check_file};
use perago_compat::{Direction, Evolved, Schema, evolve};
use serde_json::Value;
use std::collections::BTreeSet;

/// The changes of one of a task's schemas.
#[derive(Debug, Clone)]
pub struct SchemaChanges {
    pub task: String,
    /// `inputSchema` or `outputSchema`.
    pub field: &'static str,
    pub changes: Vec<Evolved>,
}

impl SchemaChanges {
    pub fn breaks(&self) -> bool {
        self.changes.iter().any(|c| c.effect.breaks())
    }
}

/// The changes from the `published` TaskDef to the `new` one, schema by schema (none for a
/// schema whose content is the same).
pub fn changes(published: &Value, new: &Value) -> Result<Vec<SchemaChanges>, String> {
    let task = new.get("name").and_then(Value::as_str).unwrap_or_default();
    let mut out = Vec::new();
    for (field, direction) in [
        ("inputSchema", Direction::Input),
        ("outputSchema", Direction::Output),
    ] {
        let (Some(old), Some(now)) = (
            published.get(field).and_then(|s| s.get("data")),
            new.get(field).and_then(|s| s.get("data")),
        ) else {
            continue;
        };
        if old == now {
            continue;
        }
        let read = |which: &str, schema: &Value| {
            Schema::from_value(&format!("{task}.{field}.{which}.json"), schema).map_err(|e| {
                format!("task `{task}`: the {which} {field} is not a schema perago reads: {e}")
            })
        };
        let changes = evolve(&read("published", old)?, &read("new", now)?, direction);
        out.push(SchemaChanges {
            task: task.to_owned(),
            field,
            changes,
        });
    }
    Ok(out)
}

/// One line per change (breaking ones only with `breaking_only`):
/// `` task `t` inputSchema /properties/params: breaking: required_added: ... (e.g. {...}) ``.
pub fn describe(all: &[SchemaChanges], breaking_only: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for s in all {
        for c in s
            .changes
            .iter()
            .filter(|c| !breaking_only || c.effect.breaks())
        {
            let verdict = if c.effect.breaks() {
                "breaking"
            } else {
                "compatible"
            };
            let witness = c
                .witness
                .as_ref()
                .map_or(String::new(), |w| format!(" (e.g. {w})"));
            let pointer = if c.pointer.is_empty() {
                "/"
            } else {
                c.pointer.as_str()
            };
            lines.push(format!(
                "task `{}` {} {pointer}: {verdict}: {}: {}{witness}",
                s.task,
                s.field,
                c.code_text(),
                c.message
            ));
        }
    }
    lines
}

/// The WorkflowDefs (`(source, definition)`) whose wiring `new` breaks: one line for each error
/// finding they have against `new` and not against `old`.
pub fn broken_workflows(
    workflows: &[(String, Value)],
    old: &Contracts,
    new: &Contracts,
) -> Vec<String> {
    let errors =
        |contracts: &Contracts, source: &str, def: &Value| -> Vec<(String, String, String)> {
            check_file(source, def, contracts)
                .map(|findings| {
                    findings
                        .into_iter()
                        .filter(|f| f.severity == Severity::Error)
                        .map(|f| (f.pointer.clone(), f.code.to_owned(), f.text()))
                        .collect()
                })
                .unwrap_or_default()
        };
    let mut lines = Vec::new();
    for (source, def) in workflows {
        let before: BTreeSet<(String, String)> = errors(old, source, def)
            .into_iter()
            .map(|(p, c, _)| (p, c))
            .collect();
        for (pointer, code, text) in errors(new, source, def) {
            if !before.contains(&(pointer, code)) {
                lines.push(text);
            }
        }
    }
    lines
}
