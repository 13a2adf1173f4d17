//! The `data` of a TaskDef's SchemaDef: an envelope schema (the closed input or output of a task
//! kind, [`perago::Contract::schema`] of the envelope type) with its open `params` / `result` slot
//! filled by the task's own closed schema, every `$defs` bundled at the root, so the document
//! stands alone.

use super::SCHEMA_DIALECT;
use perago_schema::load::{pointer_token, unescape_pointer_token};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The envelope `envelope` (a standalone schema) with `properties.<slot>` replaced by the
/// standalone schema `ty`; `title` and `description` replace the envelope's; every `default`
/// and `examples` is dropped.
pub(crate) fn fill(
    envelope: &str,
    slot: &str,
    ty: &str,
    title: &str,
    description: &str,
) -> Result<Value, String> {
    let Value::Object(mut env) = parse(envelope, "the envelope schema")? else {
        return Err("the envelope schema is not an object".to_owned());
    };
    let Value::Object(mut body) = parse(ty, &format!("the {slot} schema"))? else {
        return Err(format!("the {slot} schema is not an object"));
    };

    env.shift_remove("$schema");
    env.shift_remove("$id");
    env.shift_remove("examples");
    env.shift_remove("title");
    env.shift_remove("description");
    let mut defs = match env.shift_remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    if !env
        .get("properties")
        .and_then(|p| p.get(slot))
        .is_some_and(Value::is_object)
    {
        return Err(format!("the envelope schema has no `{slot}` property"));
    }

    // The type's own `$defs` join the envelope's: an identical definition of the same name is
    // shared, a different one is renamed.
    body.shift_remove("$schema");
    body.shift_remove("$id");
    let own_defs = match body.shift_remove("$defs") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    let mut renames: HashMap<String, String> = HashMap::new();
    let mut incoming: Vec<(String, Value)> = Vec::new();
    for (name, def) in own_defs {
        let claimed = incoming.iter().any(|(n, _)| *n == name);
        let target = if !claimed && defs.get(&name).is_none_or(|existing| *existing == def) {
            name.clone()
        } else {
            fresh_name(&name, &defs, &incoming)
        };
        renames.insert(name.clone(), target.clone());
        incoming.push((target, def));
    }
    // A schema that refers to its own root (`$ref: "#"`) becomes a definition itself.
    let mut body = Value::Object(body);
    let self_name = if refers_to_root(&body) {
        let base = body
            .get("title")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .unwrap_or(slot);
        let base = base.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
        Some(fresh_name(&base, &defs, &incoming))
    } else {
        None
    };
    let rewrite = |schema: &mut Value| {
        walk(schema, &mut |map| {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                if reference == "#" {
                    if let Some(name) = &self_name {
                        *reference = format!("#/$defs/{}", pointer_token(name));
                    }
                } else if let Some(token) = reference.strip_prefix("#/$defs/")
                    && let Some(new) = renames.get(&unescape_pointer_token(token))
                {
                    *reference = format!("#/$defs/{}", pointer_token(new));
                }
            }
        });
    };
    rewrite(&mut body);
    for (name, mut def) in incoming {
        rewrite(&mut def);
        if !defs.contains_key(&name) {
            defs.insert(name, def);
        }
    }
    let slot_schema = match &self_name {
        Some(name) => {
            defs.insert(name.clone(), body);
            let mut reference = Map::new();
            reference.insert(
                "$ref".to_owned(),
                Value::String(format!("#/$defs/{}", pointer_token(name))),
            );
            Value::Object(reference)
        }
        None => body,
    };
    if let Some(Value::Object(props)) = env.get_mut("properties") {
        props.insert(slot.to_owned(), slot_schema);
    }

    let mut out = Map::new();
    out.insert(
        "$schema".to_owned(),
        Value::String(SCHEMA_DIALECT.to_owned()),
    );
    out.insert("title".to_owned(), Value::String(title.to_owned()));
    out.insert(
        "description".to_owned(),
        Value::String(description.to_owned()),
    );
    out.extend(env);
    if !defs.is_empty() {
        out.insert("$defs".to_owned(), Value::Object(defs));
    }
    let mut data = Value::Object(out);
    // Annotations carrying instance values: defaults are applied by the worker, never by
    // Conductor, and examples of a part are no examples of the whole.
    walk(&mut data, &mut |map| {
        map.shift_remove("default");
        map.shift_remove("examples");
    });
    Ok(data)
}

fn parse(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))
}

fn fresh_name(base: &str, defs: &Map<String, Value>, incoming: &[(String, Value)]) -> String {
    let taken = |n: &str| defs.contains_key(n) || incoming.iter().any(|(m, _)| m == n);
    if !taken(base) {
        return base.to_owned();
    }
    (2..)
        .map(|i| format!("{base}{i}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_owned())
}

fn refers_to_root(schema: &Value) -> bool {
    let mut found = false;
    let mut copy = schema.clone();
    walk(&mut copy, &mut |map| {
        if map.get("$ref").and_then(Value::as_str) == Some("#") {
            found = true;
        }
    });
    found
}

/// Calls `f` on every schema object below and including `schema`, following the keywords that
/// hold subschemas (so a property *named* `default` or `$ref` is left alone).
pub(crate) fn walk(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(map) = schema else { return };
    f(map);
    for (key, child) in map.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(children) = child {
                    for sub in children.values_mut() {
                        walk(sub, f);
                    }
                }
            }
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "unevaluatedItems"
            | "unevaluatedProperties" => match child {
                Value::Array(items) => items.iter_mut().for_each(|s| walk(s, f)),
                other => walk(other, f),
            },
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = child {
                    items.iter_mut().for_each(|s| walk(s, f));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ENVELOPE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Env","type":"object",
        "properties":{"workspace":{"$ref":"#/$defs/Ws"},"params":{"type":"object","additionalProperties":{}}},
        "required":["workspace","params"],"additionalProperties":false,"examples":[{}],
        "$defs":{"Ws":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}}"##;

    #[test]
    fn fills_the_slot_and_bundles_defs() {
        let ty = json!({
            "$schema": SCHEMA_DIALECT, "title": "P", "type": "object",
            "properties": {
                "ws": {"$ref": "#/$defs/Ws"},
                "c": {"$ref": "#/$defs/C"},
                "default": {"type": "integer", "default": 3}
            },
            "additionalProperties": false,
            "$defs": {
                "Ws": {"type": "integer"},
                "C": {"type": "object", "properties": {"x": {"type": "string", "default": "d"}}, "additionalProperties": false}
            }
        });
        let data = fill(ENVELOPE, "params", &ty.to_string(), "t_input", "The input.").unwrap();
        assert_eq!(
            data,
            json!({
                "$schema": SCHEMA_DIALECT, "title": "t_input", "description": "The input.",
                "type": "object",
                "properties": {
                    "workspace": {"$ref": "#/$defs/Ws"},
                    "params": {
                        "title": "P", "type": "object",
                        "properties": {
                            "ws": {"$ref": "#/$defs/Ws2"},
                            "c": {"$ref": "#/$defs/C"},
                            "default": {"type": "integer"}
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["workspace", "params"],
                "additionalProperties": false,
                "$defs": {
                    "Ws": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
                    "Ws2": {"type": "integer"},
                    "C": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false}
                }
            })
        );
    }

    #[test]
    fn a_self_referring_type_becomes_a_definition() {
        let ty = json!({
            "$schema": SCHEMA_DIALECT, "title": "Tree", "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
            "additionalProperties": false
        });
        let data = fill(ENVELOPE, "params", &ty.to_string(), "t", "d").unwrap();
        assert_eq!(
            data["properties"]["params"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert_eq!(
            data["$defs"]["Tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
    }

    #[test]
    fn identical_definitions_are_shared() {
        let ty = json!({
            "type": "object", "properties": {"w": {"$ref": "#/$defs/Ws"}},
            "$defs": {"Ws": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}}
        });
        let data = fill(ENVELOPE, "params", &ty.to_string(), "t", "d").unwrap();
        assert_eq!(data["$defs"].as_object().unwrap().len(), 1);
        assert_eq!(
            data["properties"]["params"]["properties"]["w"],
            json!({"$ref": "#/$defs/Ws"})
        );
    }

    #[test]
    fn a_missing_slot_is_an_error() {
        let e = fill(ENVELOPE, "result", "{}", "t", "d").unwrap_err();
        assert!(e.contains("no `result` property"), "{e}");
    }
}
