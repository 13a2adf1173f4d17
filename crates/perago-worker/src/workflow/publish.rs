//! Publishing WorkflowDefs: each compared with the server's definition of the same name and
//! version, what is new or changed registered with one `PUT /api/metadata/workflow` (an
//! upsert, `docs/src/reference/conductor.md` §10.3), what is unchanged not sent. Callers check
//! the definitions first ([`super::check_files`]) and publish none when one has an error.

use perago_conductor::Client;
use serde_json::Value;
use std::io::Write;

/// How a definition compares with the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The server has no definition of that name and version.
    New,
    /// The server's differs in a member the local one sets.
    Changed,
    /// The server's holds everything the local one says (it may add its own fields).
    Unchanged,
}

/// What publishing did, or would do with `dry_run`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// `(name, version, status)` of each definition, in the order given.
    pub workflows: Vec<(String, i64, Status)>,
    /// How many were sent.
    pub registered: usize,
}

/// Compares each definition with the server's and registers the new and changed ones (none
/// with `dry_run`), printing one line each to `out`; with no definitions, does nothing.
pub fn publish(
    client: &Client,
    workflows: &[&Value],
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<Report, String> {
    let mut report = Report::default();
    if workflows.is_empty() {
        return Ok(report);
    }
    let mut outgoing = Vec::new();
    for def in workflows {
        let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
        let version = def.get("version").and_then(Value::as_i64).unwrap_or(1);
        let live = client.get_workflow(name, Some(version)).map_err(|e| {
            format!("reading WorkflowDef {name} version {version}: {e}; nothing was sent")
        })?;
        let status = match live {
            None => Status::New,
            Some(live) if holds(&live, def) => Status::Unchanged,
            Some(_) => Status::Changed,
        };
        let said = match status {
            Status::New => "new",
            Status::Changed => "changed",
            Status::Unchanged => "unchanged",
        };
        let _ = writeln!(out, "workflow {name} version {version}: {said}");
        if status != Status::Unchanged {
            outgoing.push((*def).clone());
        }
        report.workflows.push((name.to_owned(), version, status));
    }
    if dry_run || outgoing.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            if dry_run {
                "dry run: no WorkflowDef sent"
            } else {
                "no WorkflowDef to send"
            }
        );
        return Ok(report);
    }
    client
        .register_workflows(&outgoing)
        .map_err(|e| format!("registering {} WorkflowDef(s): {e}", outgoing.len()))?;
    report.registered = outgoing.len();
    let _ = writeln!(out, "registered {} WorkflowDef(s)", outgoing.len());
    Ok(report)
}

/// Whether `live` says everything `local` says: each member of an object, each item of a list
/// (of the same length), each other value equal. What the server adds (`createTime`, defaults
/// of fields left out) is not a change.
fn holds(live: &Value, local: &Value) -> bool {
    match (live, local) {
        (Value::Object(l), Value::Object(m)) => m
            .iter()
            .all(|(k, v)| l.get(k).is_some_and(|lv| holds(lv, v))),
        (Value::Array(l), Value::Array(m)) => {
            l.len() == m.len() && l.iter().zip(m).all(|(a, b)| holds(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => live == local,
    }
}

#[cfg(test)]
mod tests {
    use super::holds;
    use serde_json::json;

    #[test]
    fn what_the_server_adds_is_no_change() {
        let local = json!({"name": "w", "tasks": [{"name": "a", "inputParameters": {"x": 1}}]});
        let live = json!({"name": "w", "createTime": 5, "tasks": [{"name": "a", "optional": false, "inputParameters": {"x": 1.0}}]});
        assert!(holds(&live, &local));
        let changed = json!({"name": "w", "tasks": [{"name": "a", "inputParameters": {"x": 2}}]});
        assert!(!holds(&live, &changed));
        let longer = json!({"name": "w", "tasks": [{"name": "a"}, {"name": "b"}]});
        assert!(!holds(&live, &longer));
    }
}
