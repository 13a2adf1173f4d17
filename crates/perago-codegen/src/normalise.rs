//! Normalising a linted schema: every object that declares no `additionalProperties` is closed,
//! nested objects and `$defs` included, as the contract's `extra="forbid"` rule requires.
//! The closed form is what the IR is built from and what TaskDefs carry.

use perago_schema::load::Document;
use serde_json::Value;

/// Closes every object schema in `schema` that does not declare `additionalProperties`.
pub fn close_objects(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let is_object = map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        };
    let merged = map.contains_key("allOf");
    // Schemas applied in place beside the object's own members (objects generated code
    // defers to the interpreter): what they declare belongs to the object too.
    let applied = IN_PLACE.iter().any(|k| map.contains_key(*k))
        || (is_object && (map.contains_key("$ref") || map.contains_key("anyOf")));
    if is_object
        && !merged
        && !applied
        && !map.contains_key("oneOf")
        && !map.contains_key("additionalProperties")
    {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if merged {
        // An `allOf` of objects is closed over all its parts at once; a part is not closed.
        map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
    } else if applied
        && (is_object || parts_declare(map))
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
    {
        // Closed over what is evaluated, as the interpreter closes it.
        map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
    }
    if merged || applied {
        close_parts(map);
    }
    close_members(map);
}

/// Closes a schema generated code defers whole to the interpreter (`lint::Deferrals`) as the
/// interpreter closes it, so that its standalone form means what the interpreter checks:
/// where a value is entered (`entered`), over everything evaluated in place
/// (`unevaluatedProperties: false`, the interpreter's `Close::Dynamic`, which for a schema
/// without in-place parts is `additionalProperties: false`); its in-place parts stay open.
/// `root` is the document, for the local `$ref`s it follows.
pub fn close_deferred(schema: &mut Value, entered: bool, root: &Document) {
    let Value::Object(map) = schema else { return };
    if entered
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
        && declares(map, root, 0)
    {
        map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
    }
    for (k, v) in map.iter_mut() {
        match (k.as_str(), v) {
            ("properties" | "patternProperties", Value::Object(children)) => {
                children
                    .values_mut()
                    .for_each(|c| close_deferred(c, true, root));
            }
            ("$defs", Value::Object(children)) => children.values_mut().for_each(close_objects),
            ("dependentSchemas", Value::Object(children)) => {
                children
                    .values_mut()
                    .for_each(|c| close_deferred(c, false, root));
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(children)) => {
                children
                    .iter_mut()
                    .for_each(|c| close_deferred(c, false, root));
            }
            ("prefixItems", Value::Array(children)) => {
                children
                    .iter_mut()
                    .for_each(|c| close_deferred(c, true, root));
            }
            (
                "items"
                | "additionalProperties"
                | "contains"
                | "unevaluatedItems"
                | "unevaluatedProperties",
                c,
            ) => close_deferred(c, true, root),
            ("not" | "if" | "then" | "else", c) => close_deferred(c, false, root),
            _ => {}
        }
    }
}

/// True when an object schema, or a part it applies in place (`not` and `if` aside: what they
/// evaluate is not what the object is made of), declares members (the interpreter's
/// `closure_closable`).
fn declares(map: &serde_json::Map<String, Value>, root: &Document, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    let own = !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
        && (map.contains_key("properties")
            || map.contains_key("patternProperties")
            || match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            });
    let part = |v: &Value| v.as_object().is_some_and(|m| declares(m, root, depth + 1));
    let referenced = match map.get("$ref").and_then(Value::as_str) {
        Some(r) => match r.strip_prefix('#') {
            // Written against the file as written (`#/definitions/A` in draft-07).
            Some(pointer) => root
                .root
                .pointer(&root.upgraded_pointer(pointer))
                .is_some_and(part),
            // Another file's root or `$defs` entry: a contract's files declare objects.
            None => true,
        },
        None => false,
    };
    own || referenced
        || ["allOf", "anyOf", "oneOf"]
            .iter()
            .filter_map(|k| map.get(*k).and_then(Value::as_array))
            .flatten()
            .any(part)
        || ["then", "else"]
            .iter()
            .filter_map(|k| map.get(*k))
            .any(part)
        || map
            .get("dependentSchemas")
            .and_then(Value::as_object)
            .is_some_and(|d| d.values().any(part))
}

/// The keywords whose schemas apply in place to the value (`allOf` aside).
const IN_PLACE: &[&str] = &["not", "if", "then", "else", "dependentSchemas"];

/// The in-place parts of a schema: its `allOf` parts, `if`, `then`, `else`, `not` and
/// `dependentSchemas` values.
fn parts_mut(map: &mut serde_json::Map<String, Value>) -> Vec<&mut Value> {
    let mut parts = Vec::new();
    for (k, v) in map.iter_mut() {
        match (k.as_str(), v) {
            ("allOf", Value::Array(list)) => parts.extend(list.iter_mut()),
            ("dependentSchemas", Value::Object(deps)) => parts.extend(deps.values_mut()),
            ("if" | "then" | "else" | "not", v) => parts.push(v),
            _ => {}
        }
    }
    parts
}

/// True when an in-place part other than `if` and `not` (what those evaluate is not what the
/// object is made of) declares members.
fn parts_declare(map: &serde_json::Map<String, Value>) -> bool {
    let declares =
        |v: &Value| v.get("properties").is_some() || v.get("patternProperties").is_some();
    ["then", "else"]
        .iter()
        .filter_map(|k| map.get(*k))
        .chain(
            map.get("dependentSchemas")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|d| d.values()),
        )
        .any(declares)
}

/// Closes what is below a schema's in-place parts, and their own parts', but not the parts
/// themselves.
fn close_parts(map: &mut serde_json::Map<String, Value>) {
    for part in parts_mut(map) {
        if let Value::Object(part) = part {
            close_members(part);
            close_parts(part);
        }
    }
}

/// Closes the schemas below `map`'s keywords.
fn close_members(map: &mut serde_json::Map<String, Value>) {
    for keyword in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(children)) = map.get_mut(keyword) {
            children.values_mut().for_each(close_objects);
        }
    }
    for keyword in ["oneOf", "anyOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(keyword) {
            children.iter_mut().for_each(close_objects);
        }
    }
    for keyword in ["items", "additionalProperties", "contains"] {
        if let Some(child) = map.get_mut(keyword) {
            close_objects(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closes_nested_objects_and_defs_but_keeps_maps() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "inner": {"type": "object", "properties": {"a": {"type": "string"}}},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {}}},
                "list": {"type": "array", "items": {"type": ["object", "null"]}}
            },
            "$defs": {"D": {"type": "object"}}
        });
        close_objects(&mut schema);
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["inner"]["additionalProperties"], false);
        assert_eq!(
            schema["properties"]["map"]["additionalProperties"]["additionalProperties"],
            false
        );
        assert_eq!(
            schema["properties"]["list"]["items"]["additionalProperties"],
            false
        );
        assert_eq!(schema["$defs"]["D"]["additionalProperties"], false);
    }
}
