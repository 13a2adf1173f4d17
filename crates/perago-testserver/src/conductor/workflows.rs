//! WorkflowDefs: the `/api/metadata/workflow` endpoints (`docs/src/reference/conductor.md`
//! §10.3). A definition is stored as sent, with `createTime` (and `updateTime` on an update)
//! set by the server, keyed by name and version (`version` 1 when absent, as the Java field
//! initialiser has it). Registration checks what Conductor's constraints check: a name, a
//! non-empty task list, each task's `name` and `taskReferenceName`, and reference names
//! unique across the whole definition, nested tasks included.

use super::ids::now_ms;
use super::jackson;
use super::reply::{Reply, ValidationError};
use super::state::State;
use serde_json::{Map, Value, json};

/// The (name, version) of a definition.
fn key(def: &Map<String, Value>) -> (String, i64) {
    let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
    let version = def.get("version").and_then(Value::as_i64).unwrap_or(1);
    (name.to_owned(), version)
}

/// Every task of a list, nested ones included.
fn all_tasks<'v>(tasks: &'v [Value], out: &mut Vec<&'v Map<String, Value>>) {
    for task in tasks.iter().filter_map(Value::as_object) {
        out.push(task);
        let lists = ["defaultCase", "loopOver"]
            .iter()
            .filter_map(|k| task.get(*k).and_then(Value::as_array));
        let cases = task
            .get("decisionCases")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|c| c.values().filter_map(Value::as_array));
        let forks = task
            .get("forkTasks")
            .and_then(Value::as_array)
            .into_iter()
            .flat_map(|f| f.iter().filter_map(Value::as_array));
        for list in lists.chain(cases).chain(forks) {
            all_tasks(list, out);
        }
    }
}

/// What the constraints on `WorkflowDef` and `WorkflowTask` refuse, at `path`.
fn validate(def: &Map<String, Value>, path: &str) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    let mut add = |message: String| {
        errors.push(ValidationError {
            path: path.to_owned(),
            message,
            invalid_value: None,
        })
    };
    let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() {
        add("WorkflowDef name cannot be null or empty".into());
    }
    let tasks = def.get("tasks").and_then(Value::as_array);
    let Some(tasks) = tasks.filter(|t| !t.is_empty()) else {
        add("WorkflowTask list cannot be empty".into());
        return errors;
    };
    let mut all = Vec::new();
    all_tasks(tasks, &mut all);
    let mut seen = std::collections::BTreeSet::new();
    for task in all {
        let text = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or_default();
        if text("name").is_empty() {
            add("WorkflowTask name cannot be empty or null".into());
        }
        let reference = text("taskReferenceName");
        if reference.is_empty() {
            add("WorkflowTask taskReferenceName name cannot be empty or null".into());
        } else if !seen.insert(reference.to_owned()) {
            add(format!(
                "taskReferenceName: {reference} should be unique across tasks for a given workflowDefinition: {name}"
            ));
        }
    }
    errors
}

/// Reads a body as JSON the way Jackson does; a body that is not JSON is a 500.
fn parse(body: &str) -> Result<Value, Reply> {
    jackson::parse_body(body).map_err(|e| Reply::internal(e.0))
}

/// `POST /api/metadata/workflow`: one definition; 409 when that name and version exist.
pub(crate) fn create(state: &mut State, body: &str) -> Reply {
    let parsed = match parse(body) {
        Ok(v) => v,
        Err(reply) => return reply,
    };
    let Value::Object(mut def) = parsed else {
        return Reply::internal(
            "JSON parse error: Cannot deserialize value of type `com.netflix.conductor.common.metadata.workflow.WorkflowDef` from Array value",
        );
    };
    let errors = validate(&def, "create.workflowDef");
    if !errors.is_empty() {
        return Reply::validation(&errors);
    }
    let (name, version) = key(&def);
    if state.workflow_defs.contains_key(&(name.clone(), version)) {
        return Reply::error(
            409,
            format!("Workflow with {name}.{version} already exists!"),
        );
    }
    def.insert("createTime".into(), json!(now_ms()));
    state.workflow_defs.insert((name, version), def);
    state.touch();
    Reply::ok_empty()
}

/// `PUT /api/metadata/workflow`: a list, each created or replaced (an upsert).
pub(crate) fn update(state: &mut State, body: &str) -> Reply {
    let parsed = match parse(body) {
        Ok(v) => v,
        Err(reply) => return reply,
    };
    let Value::Array(items) = parsed else {
        return Reply::internal(
            "JSON parse error: Cannot deserialize value of type `java.util.ArrayList<com.netflix.conductor.common.metadata.workflow.WorkflowDef>` from Object value (token `JsonToken.START_OBJECT`)",
        );
    };
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Value::Object(def) => {
                errors.extend(validate(&def, &format!("update.workflowDefs[{i}]")));
                defs.push(def);
            }
            _ => return Reply::internal("JSON parse error: a WorkflowDef is an object"),
        }
    }
    if !errors.is_empty() {
        return Reply::validation(&errors);
    }
    let now = now_ms();
    for mut def in defs {
        let key = key(&def);
        if let Some(created) = state
            .workflow_defs
            .get(&key)
            .and_then(|d| d.get("createTime"))
        {
            def.insert("createTime".into(), created.clone());
        }
        def.insert("updateTime".into(), json!(now));
        state.workflow_defs.insert(key, def);
    }
    state.touch();
    Reply::ok_empty()
}

/// `GET /api/metadata/workflow/{name}[?version=N]`: that version, or the latest.
pub(crate) fn get(state: &State, name: &str, version: Option<i64>) -> Reply {
    let found = match version {
        Some(v) => state.workflow_defs.get(&(name.to_owned(), v)),
        None => state
            .workflow_defs
            .range((name.to_owned(), i64::MIN)..=(name.to_owned(), i64::MAX))
            .next_back()
            .map(|(_, def)| def),
    };
    match found {
        Some(def) => Reply::json(200, &Value::Object(def.clone())),
        None => Reply::not_found(format!(
            "No such workflow found by name: {name}, version: {}",
            version.map_or("null".to_owned(), |v| v.to_string())
        )),
    }
}

/// `GET /api/metadata/workflow`: every definition, every version.
pub(crate) fn list(state: &State) -> Reply {
    let all: Vec<Value> = state
        .workflow_defs
        .values()
        .map(|d| Value::Object(d.clone()))
        .collect();
    Reply::json(200, &Value::Array(all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_unique_across_nested_tasks() {
        let def = json!({"name": "w", "tasks": [
            {"name": "a", "taskReferenceName": "x", "type": "SWITCH",
             "decisionCases": {"c": [{"name": "b", "taskReferenceName": "x"}]}}
        ]});
        let errors = validate(def.as_object().unwrap(), "p");
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].message.contains("should be unique"),
            "{}",
            errors[0].message
        );
        let empty = json!({"name": "", "tasks": []});
        assert_eq!(validate(empty.as_object().unwrap(), "p").len(), 2);
    }
}
