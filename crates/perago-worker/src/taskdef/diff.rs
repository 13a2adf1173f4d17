//! What publishing would change: a local TaskDef against the live one (`GET
//! /api/metadata/taskdefs/{name}`), field by field.
//!
//! Conductor answers with more than it was sent (`docs/src/reference/conductor.md` §1): server-set fields (`createTime`,
//! `updateTime`, `createdBy`, `updatedBy`, `ownerApp`, also inside the SchemaDefs), fields of
//! primitive type at their defaults (`enforceSchema: false`, `maxRetryDelaySeconds: 0`, …) and
//! getters with defaults (`rateLimitPerFrequency: 0`, `rateLimitFrequencyInSeconds: 1`). So both
//! sides are compared through Conductor's defaults: a field absent on one side counts as its
//! server default, server-set fields and fields Conductor does not know (`tags` on Orkes) are
//! ignored. A field the live def has and perago does not set (say an `isolationGroupId` set by
//! hand) is a change, because the upsert resets it.

use serde_json::{Map, Value, json};
use std::fmt;

/// The fields of Conductor's `TaskDef` (§1) that a publish compares, with the value Conductor
/// uses when the field is absent (`None`: no value).
pub fn server_default(field: &str) -> Option<Option<Value>> {
    let default = match field {
        "name" | "description" | "isolationGroupId" | "executionNameSpace" | "ownerEmail"
        | "pollTimeoutSeconds" | "baseType" | "inputSchema" | "outputSchema" => None,
        "retryCount" => Some(json!(3)),
        "timeoutSeconds" => Some(json!(0)),
        "inputKeys" | "outputKeys" | "runtimeMetadata" => Some(json!([])),
        "timeoutPolicy" => Some(json!("TIME_OUT_WF")),
        "retryLogic" => Some(json!("FIXED")),
        "retryDelaySeconds" => Some(json!(60)),
        "responseTimeoutSeconds" => Some(json!(3600)),
        // null and 0 both mean "no limit".
        "concurrentExecLimit" => Some(json!(0)),
        "inputTemplate" => Some(json!({})),
        "rateLimitPerFrequency" => Some(json!(0)),
        "rateLimitFrequencyInSeconds" => Some(json!(1)),
        "backoffScaleFactor" => Some(json!(1)),
        "maxRetryDelaySeconds" => Some(json!(0)),
        "backoffJitterMs" => Some(json!(0)),
        "totalTimeoutSeconds" => Some(json!(0)),
        "taskStatusListenerEnabled" => Some(json!(true)),
        "enforceSchema" => Some(json!(false)),
        _ => return None,
    };
    Some(default)
}

/// Every compared TaskDef field, in Conductor's declaration order.
pub const FIELDS: &[&str] = &[
    "name",
    "description",
    "retryCount",
    "timeoutSeconds",
    "inputKeys",
    "outputKeys",
    "runtimeMetadata",
    "timeoutPolicy",
    "retryLogic",
    "retryDelaySeconds",
    "responseTimeoutSeconds",
    "concurrentExecLimit",
    "inputTemplate",
    "rateLimitPerFrequency",
    "rateLimitFrequencyInSeconds",
    "isolationGroupId",
    "executionNameSpace",
    "ownerEmail",
    "pollTimeoutSeconds",
    "backoffScaleFactor",
    "maxRetryDelaySeconds",
    "backoffJitterMs",
    "baseType",
    "totalTimeoutSeconds",
    "taskStatusListenerEnabled",
    "inputSchema",
    "outputSchema",
    "enforceSchema",
];

/// The compared fields of a SchemaDef (its Auditable fields are server-set).
const SCHEMA_FIELDS: &[&str] = &["name", "version", "type", "externalRef", "data"];

/// How many changed leaves are listed per field before the rest is counted.
const MAX_LEAVES: usize = 12;

/// One changed field: where, and the effective values (`None`: absent, no default).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `retryCount`, `inputSchema.version`, `inputSchema.data.properties.params.minimum`, …
    pub path: String,
    /// The live value.
    pub old: Option<Value>,
    /// The value perago would publish.
    pub new: Option<Value>,
}

/// A task's TaskDef compared with the live one.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// The server has no TaskDef of this name.
    New,
    /// The server's TaskDef differs: the changes, and how many more leaves were not listed.
    Changed {
        /// The changes, field by field (at most a few leaves per field).
        changes: Vec<Change>,
        /// Changed leaves left out of `changes`.
        more: usize,
    },
    /// Nothing would change.
    Unchanged,
}

/// A task's diff.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDiff {
    /// The task name.
    pub name: String,
    /// New, changed or unchanged.
    pub status: Status,
}

impl TaskDiff {
    /// Whether publishing sends this TaskDef.
    pub fn needs_publish(&self) -> bool {
        !matches!(self.status, Status::Unchanged)
    }
}

/// Compares the TaskDef perago would publish with the live one (`None`: 404).
pub fn diff(local: &Value, live: Option<&Value>) -> TaskDiff {
    let name = local
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let Some(live) = live else {
        return TaskDiff {
            name,
            status: Status::New,
        };
    };
    let mut changes = Vec::new();
    let mut more = 0;
    for field in FIELDS {
        let default = server_default(field).flatten();
        let schema = matches!(*field, "inputSchema" | "outputSchema");
        let old = effective(live.get(*field), &default, schema);
        let new = effective(local.get(*field), &default, schema);
        if old == new {
            continue;
        }
        match (*field, &old, &new) {
            ("inputSchema" | "outputSchema", Some(Value::Object(o)), Some(Value::Object(n))) => {
                for sub in SCHEMA_FIELDS {
                    let default = (*sub == "version").then(|| json!(1));
                    let so = effective(o.get(*sub), &default, false);
                    let sn = effective(n.get(*sub), &default, false);
                    if so == sn {
                        continue;
                    }
                    let path = format!("{field}.{sub}");
                    match (&so, &sn) {
                        (Some(a), Some(b)) if *sub == "data" => {
                            let mut leaves = Vec::new();
                            leaf_changes(&path, a, b, &mut leaves);
                            let shown = leaves.len().min(MAX_LEAVES);
                            more += leaves.len() - shown;
                            changes.extend(leaves.into_iter().take(shown));
                        }
                        _ => changes.push(Change {
                            path,
                            old: so,
                            new: sn,
                        }),
                    }
                }
            }
            _ => changes.push(Change {
                path: (*field).to_owned(),
                old,
                new,
            }),
        }
    }
    let status = if changes.is_empty() && more == 0 {
        Status::Unchanged
    } else {
        Status::Changed { changes, more }
    };
    TaskDiff { name, status }
}

/// The value a field has for Conductor: as given (null counts as absent), else the default.
/// A SchemaDef (`schema`) keeps only its compared fields.
fn effective(value: Option<&Value>, default: &Option<Value>, schema: bool) -> Option<Value> {
    match value {
        None | Some(Value::Null) => default.clone(),
        Some(Value::Object(map)) if schema => {
            let kept: Map<String, Value> = map
                .iter()
                .filter(|(k, v)| SCHEMA_FIELDS.contains(&k.as_str()) && !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Some(Value::Object(kept))
        }
        Some(v) => Some(v.clone()),
    }
}

/// The changed leaves between two JSON values, in the new value's order.
fn leaf_changes(path: &str, old: &Value, new: &Value, out: &mut Vec<Change>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, nv) in n {
                let p = child_path(path, k);
                match o.get(k) {
                    Some(ov) => leaf_changes(&p, ov, nv, out),
                    None => out.push(Change {
                        path: p,
                        old: None,
                        new: Some(nv.clone()),
                    }),
                }
            }
            for (k, ov) in o {
                if !n.contains_key(k) {
                    out.push(Change {
                        path: child_path(path, k),
                        old: Some(ov.clone()),
                        new: None,
                    });
                }
            }
        }
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => {
            for (i, (ov, nv)) in o.iter().zip(n).enumerate() {
                leaf_changes(&format!("{path}[{i}]"), ov, nv, out);
            }
        }
        _ => out.push(Change {
            path: path.to_owned(),
            old: Some(old.clone()),
            new: Some(new.clone()),
        }),
    }
}

fn child_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::String(key.to_owned()))
    }
}

/// A value for a diff line: compact JSON cut at 100 characters, `(none)` when absent.
fn show(value: &Option<Value>) -> String {
    match value {
        None => "(none)".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 100 {
                let cut: String = text.chars().take(97).collect();
                format!("{cut}...")
            } else {
                text
            }
        }
    }
}

/// `name: new`, `name: unchanged`, or `name: changed` and one indented `field: old → new` line
/// per change.
impl fmt::Display for TaskDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            Status::New => write!(f, "{}: new", self.name),
            Status::Unchanged => write!(f, "{}: unchanged", self.name),
            Status::Changed { changes, more } => {
                write!(f, "{}: changed", self.name)?;
                for c in changes {
                    write!(f, "\n    {}: {} → {}", c.path, show(&c.old), show(&c.new))?;
                }
                if *more > 0 {
                    write!(f, "\n    … and {more} more changed schema values")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Value {
        json!({
            "name": "t", "description": "d", "retryCount": 3, "timeoutSeconds": 0,
            "inputKeys": ["params"], "outputKeys": ["result"], "timeoutPolicy": "TIME_OUT_WF",
            "retryLogic": "FIXED", "retryDelaySeconds": 60, "responseTimeoutSeconds": 3600,
            "ownerEmail": "a@b.c", "backoffScaleFactor": 1, "totalTimeoutSeconds": 0,
            "inputSchema": {"name": "t_input", "version": 1, "type": "JSON",
                "data": {"$schema": "s", "type": "object", "properties": {"params": {"minimum": 0}}}},
            "outputSchema": {"name": "t_output", "version": 1, "type": "JSON", "data": {"$schema": "s"}}
        })
    }

    /// What a Conductor server answers for `local()`: server-set fields, defaults of fields
    /// perago does not send, Auditable fields inside the SchemaDefs.
    fn live() -> Value {
        let mut live = local();
        let map = live.as_object_mut().unwrap();
        for (k, v) in [
            ("createTime", json!(1764500000000_u64)),
            ("updateTime", json!(0)),
            ("createdBy", json!("")),
            ("rateLimitPerFrequency", json!(0)),
            ("rateLimitFrequencyInSeconds", json!(1)),
            ("enforceSchema", json!(false)),
            ("maxRetryDelaySeconds", json!(0)),
            ("backoffJitterMs", json!(0)),
            ("taskStatusListenerEnabled", json!(true)),
            ("inputTemplate", json!({})),
            ("runtimeMetadata", json!([])),
            ("tags", json!([{"key": "k", "value": "v"}])),
        ] {
            map.insert(k.to_owned(), v);
        }
        for s in ["inputSchema", "outputSchema"] {
            let schema = map[s].as_object_mut().unwrap();
            schema.insert("createTime".into(), json!(0));
            schema.insert("updateTime".into(), json!(0));
        }
        live
    }

    #[test]
    fn server_set_fields_and_defaults_are_no_change() {
        let d = diff(&local(), Some(&live()));
        assert_eq!(d.status, Status::Unchanged, "{d}");
        assert_eq!(d.to_string(), "t: unchanged");
        assert!(!d.needs_publish());
    }

    #[test]
    fn missing_is_new() {
        let d = diff(&local(), None);
        assert_eq!(d.to_string(), "t: new");
        assert!(d.needs_publish());
    }

    #[test]
    fn changes_are_listed_old_to_new() {
        let mut live = live();
        live["retryCount"] = json!(5);
        live["isolationGroupId"] = json!("grp");
        live["inputSchema"]["data"]["properties"]["params"]["minimum"] = json!(1);
        live["outputSchema"]["version"] = json!(2);
        let d = diff(&local(), Some(&live));
        assert_eq!(
            d.to_string(),
            "t: changed\n    retryCount: 5 → 3\n    isolationGroupId: \"grp\" → (none)\n    \
             inputSchema.data.properties.params.minimum: 1 → 0\n    outputSchema.version: 2 → 1"
        );
    }

    #[test]
    fn odd_keys_are_quoted_and_long_values_cut() {
        let mut changes = Vec::new();
        leaf_changes(
            "d",
            &json!({"a b": 1}),
            &json!({"a b": "x".repeat(200)}),
            &mut changes,
        );
        assert_eq!(changes[0].path, "d[\"a b\"]");
        assert!(show(&changes[0].new).ends_with("..."));
    }
}
