//! Task definitions: Conductor's `TaskDef` model (`docs/src/reference/conductor.md` §1) and the
//! `/api/metadata/taskdefs` endpoints (spec §3).
//!
//! A TaskDef is stored the way the Java object holds it after Jackson read it:
//! only known fields, field initialisers as defaults, Java nulls absent. It is
//! written back the way Jackson writes it (`NON_NULL`, getters with defaults),
//! so clients see exactly the server-set fields and defaults a real server
//! returns and must learn to ignore them.

use super::ids::now_ms;
use super::jackson::{self, NotReadable};
use super::reply::{Reply, ValidationError};
use super::state::State;
use serde_json::{Map, Value, json};

const TIMEOUT_POLICIES: &[&str] = &["RETRY", "TIME_OUT_WF", "ALERT_ONLY"];
const RETRY_LOGICS: &[&str] = &["FIXED", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF"];
const SCHEMA_TYPES: &[&str] = &["JSON", "AVRO", "PROTOBUF"];

/// Java type of a model field, which decides how Jackson reads it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    /// `int` / `long` primitives: null → 0.
    Int,
    Long,
    /// `Integer` / `Long`: null stays null.
    BoxedInt,
    BoxedLong,
    Bool,
    StrList,
    Map,
    Enum(&'static str, &'static [&'static str]),
    Schema,
}

/// Auditable's fields come first: Jackson lists superclass properties first.
const AUDITABLE: &[(&str, Kind)] = &[
    ("ownerApp", Kind::Str),
    ("createTime", Kind::BoxedLong),
    ("updateTime", Kind::BoxedLong),
    ("createdBy", Kind::Str),
    ("updatedBy", Kind::Str),
];

/// TaskDef's own fields in declaration order (spec §1 table).
const TASK_DEF: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("description", Kind::Str),
    ("retryCount", Kind::Int),
    ("timeoutSeconds", Kind::Long),
    ("inputKeys", Kind::StrList),
    ("outputKeys", Kind::StrList),
    (
        "timeoutPolicy",
        Kind::Enum("TaskDef$TimeoutPolicy", TIMEOUT_POLICIES),
    ),
    ("retryLogic", Kind::Enum("TaskDef$RetryLogic", RETRY_LOGICS)),
    ("retryDelaySeconds", Kind::Int),
    ("responseTimeoutSeconds", Kind::Long),
    ("concurrentExecLimit", Kind::BoxedInt),
    ("inputTemplate", Kind::Map),
    ("rateLimitPerFrequency", Kind::BoxedInt),
    ("rateLimitFrequencyInSeconds", Kind::BoxedInt),
    ("isolationGroupId", Kind::Str),
    ("executionNameSpace", Kind::Str),
    ("ownerEmail", Kind::Str),
    ("pollTimeoutSeconds", Kind::BoxedInt),
    ("backoffScaleFactor", Kind::BoxedInt),
    ("maxRetryDelaySeconds", Kind::Int),
    ("backoffJitterMs", Kind::Int),
    ("baseType", Kind::Str),
    ("totalTimeoutSeconds", Kind::Long),
    ("taskStatusListenerEnabled", Kind::Bool),
    ("inputSchema", Kind::Schema),
    ("outputSchema", Kind::Schema),
    ("enforceSchema", Kind::Bool),
    ("runtimeMetadata", Kind::StrList),
];

/// SchemaDef's own fields (spec §2.1).
const SCHEMA_DEF: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("version", Kind::Int),
    ("type", Kind::Enum("SchemaDef$Type", SCHEMA_TYPES)),
    ("data", Kind::Map),
    ("externalRef", Kind::Str),
];

/// Field initialisers of TaskDef (spec §1 "server default").
fn task_def_defaults() -> Map<String, Value> {
    let Value::Object(map) = json!({
        "retryCount": 3,
        "timeoutSeconds": 0,
        "inputKeys": [],
        "outputKeys": [],
        "timeoutPolicy": "TIME_OUT_WF",
        "retryLogic": "FIXED",
        "retryDelaySeconds": 60,
        "responseTimeoutSeconds": 3600,
        "inputTemplate": {},
        "backoffScaleFactor": 1,
        "maxRetryDelaySeconds": 0,
        "backoffJitterMs": 0,
        "totalTimeoutSeconds": 0,
        "taskStatusListenerEnabled": true,
        "enforceSchema": false,
        "runtimeMetadata": [],
    }) else {
        unreachable!("a JSON object literal")
    };
    map
}

/// Reads one field as Jackson would; `Ok(None)` is a Java null.
fn read_field(kind: Kind, name: &str, value: &Value) -> Result<Option<Value>, NotReadable> {
    Ok(match kind {
        Kind::Str => jackson::string(value, name)?.map(Value::String),
        Kind::Int => Some(json!(jackson::int(value, name)?)),
        Kind::Long => Some(json!(jackson::long(value, name)?)),
        Kind::BoxedInt => jackson::boxed_int(value, name)?.map(|n| json!(n)),
        Kind::BoxedLong => jackson::boxed_long(value, name)?.map(|n| json!(n)),
        Kind::Bool => Some(json!(jackson::boolean(value, name)?)),
        Kind::StrList => jackson::string_list(value, name)?.map(Value::Array),
        Kind::Map => jackson::object(value, name)?.map(Value::Object),
        Kind::Enum(java, variants) => {
            jackson::enumeration(value, java, variants, name)?.map(Value::String)
        }
        Kind::Schema => match value {
            Value::Null => None,
            Value::Object(_) => Some(Value::Object(read_schema_def(value)?)),
            other => {
                return Err(NotReadable(format!(
                    "JSON parse error: Cannot construct instance of `SchemaDef` from {other} (property \"{name}\")"
                )));
            }
        },
    })
}

/// Applies the known fields of `input` over `defaults`, dropping unknown ones.
fn read_model(
    input: &Value,
    java_type: &str,
    fields: &[&[(&str, Kind)]],
    mut defaults: Map<String, Value>,
) -> Result<Map<String, Value>, NotReadable> {
    let Value::Object(object) = input else {
        return Err(NotReadable(format!(
            "JSON parse error: Cannot construct instance of `{java_type}` from {input}"
        )));
    };
    for &(name, kind) in fields.iter().flat_map(|f| f.iter()) {
        if let Some(value) = object.get(name) {
            match read_field(kind, name, value)? {
                Some(v) => defaults.insert(name.to_owned(), v),
                None => defaults.remove(name),
            };
        }
    }
    Ok(defaults)
}

/// Reads a TaskDef request object into its stored form.
pub(crate) fn read_task_def(input: &Value) -> Result<Map<String, Value>, NotReadable> {
    read_model(
        input,
        "TaskDef",
        &[AUDITABLE, TASK_DEF],
        task_def_defaults(),
    )
}

/// Reads a SchemaDef (top-level in `/api/schema`, or nested in a TaskDef).
/// `version` defaults to 1 (`@Builder.Default`, spec §2.1).
pub(crate) fn read_schema_def(input: &Value) -> Result<Map<String, Value>, NotReadable> {
    let mut defaults = Map::new();
    defaults.insert("version".into(), json!(1));
    read_model(input, "SchemaDef", &[AUDITABLE, SCHEMA_DEF], defaults)
}

/// Writes Auditable + own fields in Jackson's order with `NON_NULL`;
/// `createTime`/`updateTime` getters answer 0 for null.
fn write_model(
    stored: &Map<String, Value>,
    fields: &[(&str, Kind)],
    getter_defaults: &[(&str, Value)],
) -> Value {
    let mut out = Map::new();
    for &(name, kind) in AUDITABLE.iter().chain(fields) {
        let value = stored.get(name).cloned().or_else(|| match name {
            "createTime" | "updateTime" => Some(json!(0)),
            _ => getter_defaults
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone()),
        });
        let value = match (kind, value) {
            (Kind::Schema, Some(Value::Object(schema))) => Some(write_schema_def(&schema)),
            (_, v) => v,
        };
        if let Some(value) = value {
            out.insert(name.to_owned(), value);
        }
    }
    Value::Object(out)
}

/// A TaskDef as `GET /api/metadata/taskdefs/{name}` returns it: the
/// `rateLimitPerFrequency` (0) and `rateLimitFrequencyInSeconds` (1) getters
/// always answer, and nested SchemaDefs carry `createTime: 0`/`updateTime: 0` (§1).
pub(crate) fn write_task_def(stored: &Map<String, Value>) -> Value {
    write_model(
        stored,
        TASK_DEF,
        &[
            ("rateLimitPerFrequency", json!(0)),
            ("rateLimitFrequencyInSeconds", json!(1)),
        ],
    )
}

/// A SchemaDef as Jackson writes it.
pub(crate) fn write_schema_def(stored: &Map<String, Value>) -> Value {
    write_model(stored, SCHEMA_DEF, &[])
}

fn int_field(def: &Map<String, Value>, name: &str) -> Option<i64> {
    def.get(name).and_then(Value::as_i64)
}

/// Collects constraint violations under one property path.
struct Violations<'a> {
    path: &'a str,
    errors: Vec<ValidationError>,
}

impl Violations<'_> {
    /// `field` empty = a class-level violation, reported at the object's own path.
    fn add(&mut self, field: &str, message: String, invalid_value: Option<String>) {
        let path = if field.is_empty() {
            self.path.to_owned()
        } else {
            format!("{}.{field}", self.path)
        };
        self.errors.push(ValidationError {
            path,
            message,
            invalid_value,
        });
    }

    /// `@Min(min)` on an integral field; absent (Java null) passes.
    fn minimum(
        &mut self,
        def: &Map<String, Value>,
        field: &str,
        min: i64,
        message: impl Fn(i64) -> String,
    ) {
        if let Some(value) = int_field(def, field).filter(|v| *v < min) {
            self.add(field, message(value), Some(value.to_string()));
        }
    }
}

/// Bean validation of one TaskDef (spec §1 constraints), in field order, then
/// the class-level `@TaskTimeoutConstraint` at the object's own path.
pub(crate) fn validate_task_def(
    def: &Map<String, Value>,
    path: &str,
    owner_email_mandatory: bool,
) -> Vec<ValidationError> {
    let mut v = Violations {
        path,
        errors: Vec::new(),
    };
    let name = def.get("name").and_then(Value::as_str);
    if name.is_none_or(str::is_empty) {
        v.add(
            "name",
            "TaskDef name cannot be null or empty".into(),
            name.map(str::to_owned),
        );
    }
    // `@Min` messages: `{value}` is the annotation's bound, not the input (§1),
    // except responseTimeoutSeconds, whose template uses `${validatedValue}`.
    v.minimum(def, "retryCount", 0, |_| {
        "TaskDef retryCount: 0 must be >= 0".into()
    });
    v.minimum(def, "responseTimeoutSeconds", 1, |n| {
        format!("TaskDef responseTimeoutSeconds: {n} should be minimum 1 second")
    });
    let email = def.get("ownerEmail").and_then(Value::as_str);
    if owner_email_mandatory && email.is_none_or(str::is_empty) {
        v.add(
            "ownerEmail",
            "ownerEmail cannot be empty".into(),
            email.map(str::to_owned),
        );
    }
    v.minimum(def, "pollTimeoutSeconds", 0, |_| {
        "TaskDef pollTimeoutSeconds: 0 must be >= 0".into()
    });
    v.minimum(def, "backoffScaleFactor", 1, |_| {
        "Backoff scale factor. Applicable for LINEAR_BACKOFF".into()
    });
    v.minimum(def, "maxRetryDelaySeconds", 0, |_| {
        "TaskDef maxRetryDelaySeconds: 0 must be >= 0".into()
    });
    v.minimum(def, "backoffJitterMs", 0, |_| {
        "TaskDef backoffJitterMs: 0 must be >= 0".into()
    });
    v.minimum(def, "totalTimeoutSeconds", 0, |_| {
        "TaskDef totalTimeoutSeconds: 0 must be >= 0".into()
    });

    // TaskDef.toString() is its name, so a missing one prints "null".
    let display_name = name.unwrap_or("null");
    let timeout = int_field(def, "timeoutSeconds").unwrap_or(0);
    let response = int_field(def, "responseTimeoutSeconds").unwrap_or(0);
    let total = int_field(def, "totalTimeoutSeconds").unwrap_or(0);
    if timeout > 0 && response > timeout {
        v.add(
            "",
            format!("TaskDef: {display_name} responseTimeoutSeconds: {response} must be less than timeoutSeconds: {timeout}"),
            None,
        );
    }
    if timeout > 0 && total > 0 && timeout > total {
        v.add(
            "",
            format!("TaskDef: {display_name} timeoutSeconds: {timeout} must be less than or equal to totalTimeoutSeconds: {total}"),
            None,
        );
    }
    v.errors
}

/// `POST /api/metadata/taskdefs`: a non-empty JSON array, validated as a whole,
/// then upserted with `createTime` = now and `updateTime` cleared (§3).
pub(crate) fn register(state: &mut State, body: &str) -> Reply {
    let parsed = match jackson::parse_body(body) {
        Ok(v) => v,
        Err(e) => return Reply::internal(e.0),
    };
    let items = match parsed {
        Value::Array(items) => items,
        Value::Null => {
            return Reply::validation(&[ValidationError {
                path: "registerTaskDef.taskDefinitions".into(),
                message: "TaskDefList cannot be empty or null".into(),
                invalid_value: None,
            }]);
        }
        object @ Value::Object(_) if state.options.accept_single_taskdef => vec![object],
        _ => {
            return Reply::internal(
                "JSON parse error: Cannot deserialize value of type `java.util.ArrayList<com.netflix.conductor.common.metadata.tasks.TaskDef>` from Object value (token `JsonToken.START_OBJECT`)",
            );
        }
    };
    if items.is_empty() {
        return Reply::validation(&[ValidationError {
            path: "registerTaskDef.taskDefinitions".into(),
            message: "TaskDefList is empty".into(),
            invalid_value: None,
        }]);
    }
    let mut defs = Vec::with_capacity(items.len());
    for item in &items {
        if item.is_null() {
            // A null element skips validation and fails in the service.
            return Reply::internal(
                "Cannot invoke \"TaskDef.setCreatedBy(String)\" because \"taskDefinition\" is null",
            );
        }
        match read_task_def(item) {
            Ok(def) => defs.push(def),
            Err(e) => return Reply::internal(e.0),
        }
    }
    let errors: Vec<ValidationError> = defs
        .iter()
        .enumerate()
        .flat_map(|(i, def)| {
            validate_task_def(
                def,
                &format!("registerTaskDef.taskDefinitions[{i}]"),
                state.options.owner_email_mandatory,
            )
        })
        .collect();
    if !errors.is_empty() {
        return Reply::validation(&errors);
    }
    let now = now_ms();
    for mut def in defs {
        def.insert("createdBy".into(), json!(""));
        def.insert("createTime".into(), json!(now));
        def.remove("updatedBy");
        def.remove("updateTime");
        let name = def
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        state.task_defs.insert(name, def);
    }
    state.touch();
    Reply::ok_empty()
}

/// `PUT /api/metadata/taskdefs`: one TaskDef; 404 when it does not exist;
/// keeps `createTime`/`createdBy`, sets `updateTime` (§3).
pub(crate) fn update(state: &mut State, body: &str) -> Reply {
    let parsed = match jackson::parse_body(body) {
        Ok(v) => v,
        Err(e) => return Reply::internal(e.0),
    };
    if parsed.is_null() {
        return Reply::validation(&[ValidationError {
            path: "updateTaskDef.taskDefinition".into(),
            message: "TaskDef cannot be null".into(),
            invalid_value: None,
        }]);
    }
    let mut def = match read_task_def(&parsed) {
        Ok(def) => def,
        Err(e) => return Reply::internal(e.0),
    };
    let errors = validate_task_def(
        &def,
        "updateTaskDef.taskDefinition",
        state.options.owner_email_mandatory,
    );
    if !errors.is_empty() {
        return Reply::validation(&errors);
    }
    let name = def
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(existing) = state.task_defs.get(&name) else {
        return Reply::not_found(format!("No such task by name {name}"));
    };
    for kept in ["createTime", "createdBy"] {
        match existing.get(kept) {
            Some(v) => def.insert(kept.into(), v.clone()),
            None => def.remove(kept),
        };
    }
    def.insert("updatedBy".into(), json!(""));
    def.insert("updateTime".into(), json!(now_ms()));
    state.task_defs.insert(name, def);
    state.touch();
    Reply::ok_empty()
}

/// `GET /api/metadata/taskdefs/{name}`.
pub(crate) fn get(state: &State, name: &str) -> Reply {
    match state.task_defs.get(name) {
        Some(def) => Reply::json(200, &write_task_def(def)),
        None => Reply::not_found(format!("No such taskType found by name: {name}")),
    }
}

/// `GET /api/metadata/taskdefs`, by name.
pub(crate) fn list(state: &State) -> Reply {
    Reply::json(
        200,
        &Value::Array(state.task_defs.values().map(write_task_def).collect()),
    )
}

/// `DELETE /api/metadata/taskdefs/{name}`. A missing def is a NotFoundException
/// wrapped in a transaction on the shipped SQLite backend, so 500 (§3).
pub(crate) fn delete(state: &mut State, name: &str) -> Reply {
    if state.task_defs.remove(name).is_some() {
        state.touch();
        Reply::ok_empty()
    } else {
        Reply::internal(format!("No such taskType found by name: {name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_back_carries_defaults_and_drops_unknown_fields() {
        let def = read_task_def(&json!({"name": "t", "tags": ["x"], "retryCount": null})).unwrap();
        let out = write_task_def(&def);
        assert_eq!(out["retryCount"], 0);
        assert_eq!(out["responseTimeoutSeconds"], 3600);
        assert_eq!(out["rateLimitPerFrequency"], 0);
        assert_eq!(out["rateLimitFrequencyInSeconds"], 1);
        assert_eq!(out["createTime"], 0);
        assert!(out.get("tags").is_none());
        assert!(out.get("concurrentExecLimit").is_none());
    }

    #[test]
    fn response_timeout_default_trips_the_timeout_rule() {
        let def = read_task_def(&json!({"name": "t", "ownerEmail": "a@b", "timeoutSeconds": 60}))
            .unwrap();
        let errors = validate_task_def(&def, "p[0]", true);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].path, "p[0]");
        assert_eq!(
            errors[0].message,
            "TaskDef: t responseTimeoutSeconds: 3600 must be less than timeoutSeconds: 60"
        );
    }
}
