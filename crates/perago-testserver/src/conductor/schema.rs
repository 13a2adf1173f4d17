//! The schema registry, `/api/schema` (`docs/src/reference/conductor.md` §2.5; OSS PR #1592 `SchemaResource`
//! and `SchemaServiceImpl`). When [`crate::Options::schema_registry`] is off the
//! router answers 404 for every schema path instead, like OSS ≤ 3.32.

use super::ids::now_ms;
use super::jackson;
use super::metadata::{read_schema_def, write_schema_def};
use super::reply::Reply;
use super::state::State;
use serde_json::{Map, Value, json};

/// `POST /api/schema?newVersion=`: a list, or a bare object (the server sets
/// `accept-single-value-as-array`). Saved one at a time, not atomically: a bad
/// element leaves the earlier ones saved.
pub(crate) fn save(state: &mut State, body: &str, new_version: bool) -> Reply {
    let parsed = match jackson::parse_body(body) {
        Ok(v) => v,
        Err(e) => return Reply::internal(e.0),
    };
    let items = match parsed {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        single => vec![single],
    };
    let mut schemas = Vec::with_capacity(items.len());
    for item in &items {
        if item.is_null() {
            return Reply::bad_request("Schema cannot be null");
        }
        match read_schema_def(item) {
            Ok(schema) => schemas.push(schema),
            Err(e) => return Reply::internal(e.0),
        }
    }
    let mut reply = Reply::ok_empty();
    for schema in schemas {
        if let Err(message) = save_one(state, schema, new_version) {
            reply = Reply::bad_request(message);
            break;
        }
    }
    state.touch();
    reply
}

/// `SchemaServiceImpl.saveSchema`: upsert at the given version (< 1 → 1),
/// keeping the original `createTime`; or with `newVersion`, insert at max + 1.
fn save_one(
    state: &mut State,
    mut schema: Map<String, Value>,
    new_version: bool,
) -> Result<(), &'static str> {
    let name = schema
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty())
        .ok_or("Schema name cannot be blank")?
        .to_owned();
    let now = now_ms();
    let version = if new_version {
        latest(state, &name).map_or(0, |(v, _)| v) + 1
    } else {
        schema
            .get("version")
            .and_then(Value::as_i64)
            .unwrap_or(1)
            .max(1)
    };
    schema.insert("version".into(), json!(version));
    let existing_create = state
        .schemas
        .get(&(name.clone(), version))
        .and_then(|s| s.get("createTime"))
        .cloned();
    match existing_create {
        Some(create) if !new_version => {
            schema.insert("createTime".into(), create);
            schema.insert("updateTime".into(), json!(now));
        }
        _ => {
            schema.insert("createTime".into(), json!(now));
            schema.remove("updateTime");
        }
    }
    state.schemas.insert((name, version), schema);
    Ok(())
}

fn latest<'a>(state: &'a State, name: &str) -> Option<(i64, &'a Map<String, Value>)> {
    state
        .schemas
        .range((name.to_owned(), i64::MIN)..=(name.to_owned(), i64::MAX))
        .next_back()
        .map(|((_, v), s)| (*v, s))
}

/// `GET /api/schema?short=`: every version; `short` keeps name and version only.
pub(crate) fn list(state: &State, short: bool) -> Reply {
    let all: Vec<Value> = state
        .schemas
        .values()
        .map(|schema| {
            if short {
                let mut brief = Map::new();
                for key in ["name", "version"] {
                    if let Some(v) = schema.get(key) {
                        brief.insert(key.into(), v.clone());
                    }
                }
                write_schema_def(&brief)
            } else {
                write_schema_def(schema)
            }
        })
        .collect();
    Reply::json(200, &Value::Array(all))
}

/// `GET /api/schema/{name}`: the latest version.
pub(crate) fn get_latest(state: &State, name: &str) -> Reply {
    match latest(state, name) {
        Some((_, schema)) => Reply::json(200, &write_schema_def(schema)),
        None => Reply::not_found(format!("No such schema found by name {name}")),
    }
}

/// `GET /api/schema/{name}/{version}`.
pub(crate) fn get_version(state: &State, name: &str, version: &str) -> Reply {
    let version = match parse_version(version) {
        Ok(v) => v,
        Err(reply) => return reply,
    };
    match state.schemas.get(&(name.to_owned(), version)) {
        Some(schema) => Reply::json(200, &write_schema_def(schema)),
        None => Reply::not_found(format!(
            "No such schema found by name {name} and version {version}"
        )),
    }
}

/// `DELETE /api/schema/{name}`: every version; 404 when there is none.
pub(crate) fn delete_all(state: &mut State, name: &str) -> Reply {
    let before = state.schemas.len();
    state.schemas.retain(|(n, _), _| n != name);
    if state.schemas.len() == before {
        return Reply::not_found(format!("No such schema found by name {name}"));
    }
    state.touch();
    Reply::ok_empty()
}

/// `DELETE /api/schema/{name}/{version}`: one version; 404 when missing.
pub(crate) fn delete_version(state: &mut State, name: &str, version: &str) -> Reply {
    let version = match parse_version(version) {
        Ok(v) => v,
        Err(reply) => return reply,
    };
    if state.schemas.remove(&(name.to_owned(), version)).is_none() {
        return Reply::not_found(format!(
            "No such schema found by name {name} and version {version}"
        ));
    }
    state.touch();
    Reply::ok_empty()
}

/// The `{version}` path variable is an `Integer`; a non-number fails conversion,
/// which Conductor's catch-all exception mapper answers with 500.
fn parse_version(text: &str) -> Result<i64, Reply> {
    text.parse::<i32>().map(i64::from).map_err(|_| {
        Reply::internal(format!(
            "Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; For input string: \"{text}\""
        ))
    })
}
