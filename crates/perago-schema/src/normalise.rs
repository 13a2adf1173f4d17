//! Normalising a linted schema: every object that declares no `additionalProperties` is closed,
//! nested objects and `$defs` included, as the contract's `extra="forbid"` rule requires.
//! The closed form is what the IR is built from and what TaskDefs carry.

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
    if is_object
        && !merged
        && !map.contains_key("oneOf")
        && !map.contains_key("additionalProperties")
    {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if merged {
        // An `allOf` of objects is closed over all its parts at once; a part is not closed.
        map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
        close_parts(map);
    }
    close_members(map);
}

/// Closes what is below an `allOf` part, and its own parts', but not the part itself.
fn close_parts(map: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(parts)) = map.get_mut("allOf") {
        for part in parts {
            if let Value::Object(part) = part {
                close_members(part);
                close_parts(part);
            }
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
    for keyword in ["items", "additionalProperties"] {
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
