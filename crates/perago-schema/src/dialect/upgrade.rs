//! A draft-07 or 2019-09 document read as its 2020-12 equivalent, so that the interpreter, code
//! generation and the schema a TaskDef carries all speak one dialect:
//!
//! | written | read as |
//! |---|---|
//! | `definitions` (draft-07) | `$defs` |
//! | `dependencies` (draft-07): a name's array / schema | `dependentRequired` / `dependentSchemas` |
//! | `items: [A, B]` with `additionalItems: C` | `prefixItems: [A, B]` with `items: C` |
//! | `additionalItems` beside a schema `items` or none | nothing (the drafts ignore it) |
//! | `$ref` beside other keywords (draft-07) | `$ref` alone, with the annotations, `definitions` and a root's `$id` (the draft ignores the rest) |
//! | `$id: "#name"`, `$id: "uri#name"` (draft-07) | `$anchor: "name"` (and `$id: "uri"`) |
//!
//! A keyword of a later dialect written in an earlier one (`$defs` or `prefixItems` in
//! draft-07) is refused: the draft would ignore it. Locations map both ways
//! ([`upgraded_pointer`], [`written_pointer`]), so `$ref`s keep naming what their author wrote
//! and errors point into the file as written.

use super::{Dialect, SCHEMA_ARRAY_KEYWORDS, SCHEMA_KEYWORDS, SCHEMA_MAP_KEYWORDS, is_annotation};
use serde_json::{Map, Value};

/// A keyword refused where it is written: (JSON Pointer of its schema, keyword, why).
pub type Refusal = (String, String, String);

/// `root`, written in `dialect` (draft-07 or 2019-09), as 2020-12; what had to be refused.
pub fn upgrade(dialect: Dialect, root: &Value) -> (Value, Vec<Refusal>) {
    let mut refusals = Vec::new();
    let root = schema(dialect, root, "", &mut refusals);
    (root, refusals)
}

/// Where a keyword of a later dialect came from, and what the author of a draft writes instead.
fn foreign(dialect: Dialect, keyword: &str) -> Option<&'static str> {
    let draft07 = dialect == Dialect::Draft07;
    Some(match keyword {
        "prefixItems" => "an array `items` (with `additionalItems` for the rest) is a tuple",
        "$dynamicRef" | "$dynamicAnchor" => "dynamic references are 2020-12's",
        "$defs" if draft07 => "write `definitions`",
        "dependentRequired" | "dependentSchemas" if draft07 => "write `dependencies`",
        "$anchor" if draft07 => "write `\"$id\": \"#name\"`",
        "$recursiveRef" | "$recursiveAnchor" if draft07 => "recursive references are 2019-09's",
        "unevaluatedProperties"
        | "unevaluatedItems"
        | "minContains"
        | "maxContains"
        | "contentSchema"
        | "deprecated"
        | "$vocabulary"
            if draft07 =>
        {
            "it is a keyword of 2019-09 and later"
        }
        _ => return None,
    })
}

/// What a keyword's value holds, in the dialect a schema is written in.
#[derive(Clone, Copy, PartialEq)]
enum Holds {
    Schema,
    Schemas,
    NamedSchemas,
    /// A name's array of names or schema (draft-07 `dependencies`).
    Dependencies,
    /// A schema, or (the drafts) an array of schemas.
    Items,
    Other,
}

fn holds(dialect: Dialect, keyword: &str) -> Holds {
    match keyword {
        "items" => Holds::Items,
        "additionalItems" => Holds::Schema,
        "definitions" | "dependencies" if dialect != Dialect::Draft07 => Holds::Other,
        "definitions" => Holds::NamedSchemas,
        "dependencies" => Holds::Dependencies,
        k if SCHEMA_KEYWORDS.contains(&k) => Holds::Schema,
        k if SCHEMA_ARRAY_KEYWORDS.contains(&k) => Holds::Schemas,
        k if SCHEMA_MAP_KEYWORDS.contains(&k) => Holds::NamedSchemas,
        _ => Holds::Other,
    }
}

fn schema(dialect: Dialect, value: &Value, pointer: &str, refusals: &mut Vec<Refusal>) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    // Draft-07: "All other properties in a "$ref" object MUST be ignored" ($id among them);
    // what only annotates stays, `definitions` stays reachable, and a file's root keeps its
    // `$id`, the file's name for other files.
    let alone = dialect.ref_overrides_siblings() && map.contains_key("$ref");
    let root = pointer.is_empty();
    let mut out = Map::new();
    for (k, v) in map {
        let at = format!("{pointer}/{}", crate::path::pointer_token(k));
        let kept = matches!(k.as_str(), "$ref" | "$schema" | "definitions")
            || (root && k == "$id")
            || is_annotation(k);
        if alone && !kept {
            continue;
        }
        if let Some(hint) = foreign(dialect, k) {
            refusals.push((
                pointer.to_owned(),
                k.clone(),
                format!(
                    "not a {} keyword: {hint} (or declare a later dialect in `$schema`)",
                    dialect.name()
                ),
            ));
            continue;
        }
        match (k.as_str(), holds(dialect, k)) {
            ("$id", _) if dialect == Dialect::Draft07 => id(v, &mut out),
            ("additionalItems", _) => {} // read with `items`
            (_, Holds::Items) => match v {
                Value::Array(list) => {
                    if !list.is_empty() {
                        out.insert("prefixItems".to_owned(), schemas(dialect, v, &at, refusals));
                    }
                    if let Some(rest) = map.get("additionalItems") {
                        let at = format!("{pointer}/additionalItems");
                        out.insert("items".to_owned(), schema(dialect, rest, &at, refusals));
                    }
                }
                _ => {
                    out.insert("items".to_owned(), schema(dialect, v, &at, refusals));
                }
            },
            (_, Holds::Schema) => {
                out.insert(k.clone(), schema(dialect, v, &at, refusals));
            }
            (_, Holds::Schemas) => {
                out.insert(k.clone(), schemas(dialect, v, &at, refusals));
            }
            ("definitions", _) => {
                out.insert("$defs".to_owned(), named(dialect, v, &at, refusals));
            }
            (_, Holds::NamedSchemas) => {
                out.insert(k.clone(), named(dialect, v, &at, refusals));
            }
            (_, Holds::Dependencies) => {
                let Value::Object(deps) = v else {
                    refusals.push((pointer.to_owned(), k.clone(), format!("must be an object: each property's array of names, or schema, found {v}")));
                    continue;
                };
                let (mut names, mut schemas) = (Map::new(), Map::new());
                for (name, dep) in deps {
                    if dep.is_array() {
                        names.insert(name.clone(), dep.clone());
                    } else {
                        let at = format!("{at}/{}", crate::path::pointer_token(name));
                        schemas.insert(name.clone(), schema(dialect, dep, &at, refusals));
                    }
                }
                if !names.is_empty() {
                    out.insert("dependentRequired".to_owned(), Value::Object(names));
                }
                if !schemas.is_empty() {
                    out.insert("dependentSchemas".to_owned(), Value::Object(schemas));
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn schemas(dialect: Dialect, value: &Value, pointer: &str, refusals: &mut Vec<Refusal>) -> Value {
    match value {
        Value::Array(list) => Value::Array(
            list.iter()
                .enumerate()
                .map(|(i, s)| schema(dialect, s, &format!("{pointer}/{i}"), refusals))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn named(dialect: Dialect, value: &Value, pointer: &str, refusals: &mut Vec<Refusal>) -> Value {
    match value {
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(name, s)| {
                    let at = format!("{pointer}/{}", crate::path::pointer_token(name));
                    (name.clone(), schema(dialect, s, &at, refusals))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Draft-07's `$id`: a plain-name fragment names the schema in its resource, as `$anchor` does.
fn id(value: &Value, out: &mut Map<String, Value>) {
    let Value::String(id) = value else {
        out.insert("$id".to_owned(), value.clone());
        return;
    };
    match id.split_once('#') {
        Some((uri, name)) if !name.is_empty() && !name.starts_with('/') => {
            if !uri.is_empty() {
                out.insert("$id".to_owned(), Value::String(uri.to_owned()));
            }
            out.insert("$anchor".to_owned(), Value::String(name.to_owned()));
        }
        Some((uri, "")) if !uri.is_empty() => {
            out.insert("$id".to_owned(), Value::String(uri.to_owned()));
        }
        Some(("", "")) => {}
        _ => {
            out.insert("$id".to_owned(), value.clone());
        }
    }
}

/// The location in the upgraded document of the JSON Pointer `pointer` of the document as
/// written (`/definitions/A` → `/$defs/A`, `/items/0` → `/prefixItems/0`).
pub fn upgraded_pointer(dialect: Dialect, written: &Value, pointer: &str) -> String {
    walk(written, pointer, false, |map, token, next| {
        let items_array = map.get("items").is_some_and(Value::is_array);
        match (token, holds(dialect, token)) {
            ("definitions", Holds::NamedSchemas) => ("$defs".to_owned(), Holds::NamedSchemas),
            (_, Holds::Dependencies) => {
                let array = next
                    .and_then(|n| map.get(token)?.get(n))
                    .is_some_and(Value::is_array);
                match array {
                    true => ("dependentRequired".to_owned(), Holds::Dependencies),
                    false => ("dependentSchemas".to_owned(), Holds::NamedSchemas),
                }
            }
            ("items", _) if items_array => ("prefixItems".to_owned(), Holds::Schemas),
            ("additionalItems", _) if items_array => ("items".to_owned(), Holds::Schema),
            ("additionalItems", _) => (token.to_owned(), Holds::Other),
            ("items", _) => (token.to_owned(), Holds::Schema),
            (_, h) => (token.to_owned(), h),
        }
    })
}

/// The location in the document as written of the JSON Pointer `pointer` of the upgraded one.
pub fn written_pointer(dialect: Dialect, written: &Value, pointer: &str) -> String {
    let draft07 = dialect == Dialect::Draft07;
    walk(written, pointer, true, |map, token, _| {
        let items_array = map.get("items").is_some_and(Value::is_array);
        match token {
            "$defs" if draft07 => ("definitions".to_owned(), Holds::NamedSchemas),
            "dependentSchemas" if draft07 => ("dependencies".to_owned(), Holds::NamedSchemas),
            "dependentRequired" if draft07 => ("dependencies".to_owned(), Holds::Dependencies),
            "$anchor" if draft07 => ("$id".to_owned(), Holds::Other),
            "prefixItems" => ("items".to_owned(), Holds::Schemas),
            "items" if items_array => ("additionalItems".to_owned(), Holds::Schema),
            "items" => (token.to_owned(), Holds::Schema),
            _ => (token.to_owned(), holds(dialect, token)),
        }
    })
}

/// Walks `pointer` through the written document, each keyword token of a schema renamed by
/// `rename(schema, token, next token)`, which also says what the keyword's value holds.
fn walk(
    written: &Value,
    pointer: &str,
    to_written: bool,
    rename: impl Fn(&Map<String, Value>, &str, Option<&str>) -> (String, Holds),
) -> String {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(crate::path::unescape_pointer_token)
        .collect();
    let mut out = String::new();
    let mut here = Some(written);
    let mut is_schema = true;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i].as_str();
        let map = here.and_then(Value::as_object).filter(|_| is_schema);
        let (renamed, held) = match map {
            Some(map) => rename(map, token, tokens.get(i + 1).map(String::as_str)),
            None => (token.to_owned(), Holds::Other),
        };
        out.push('/');
        out.push_str(&crate::path::pointer_token(&renamed));
        // The walk is through the document as written.
        let key = if to_written { renamed.as_str() } else { token };
        here = here.and_then(|v| child(v, key));
        i += 1;
        match held {
            Holds::Schema => is_schema = true,
            Holds::Schemas | Holds::NamedSchemas | Holds::Dependencies => {
                if let Some(next) = tokens.get(i) {
                    out.push('/');
                    out.push_str(&crate::path::pointer_token(next));
                    here = here.and_then(|v| child(v, next));
                    i += 1;
                }
                is_schema = held != Holds::Dependencies;
            }
            Holds::Items | Holds::Other => is_schema = false,
        }
    }
    out
}

fn child<'v>(value: &'v Value, token: &str) -> Option<&'v Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(list) => token.parse::<usize>().ok().and_then(|i| list.get(i)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft_07_reads_as_2020_12() {
        let written = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$id": "http://example.com/root.json#",
            "definitions": {"A": {"$id": "#a", "type": "integer"}},
            "properties": {
                "t": {"items": [{"type": "string"}, {"$ref": "#a"}], "additionalItems": false},
                "r": {"$ref": "#/definitions/A", "maxItems": 2, "$id": "x", "title": "R"},
                "d": {"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
            }
        });
        let (root, refusals) = upgrade(Dialect::Draft07, &written);
        assert!(refusals.is_empty(), "{refusals:?}");
        assert_eq!(
            root,
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "$id": "http://example.com/root.json",
                "$defs": {"A": {"$anchor": "a", "type": "integer"}},
                "properties": {
                    "t": {"prefixItems": [{"type": "string"}, {"$ref": "#a"}], "items": false},
                    "r": {"$ref": "#/definitions/A", "title": "R"},
                    "d": {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}
                }
            })
        );
        for (w, u) in [
            ("/definitions/A/type", "/$defs/A/type"),
            ("/properties/t/items/1", "/properties/t/prefixItems/1"),
            ("/properties/t/additionalItems", "/properties/t/items"),
            (
                "/properties/d/dependencies/c/required",
                "/properties/d/dependentSchemas/c/required",
            ),
            (
                "/properties/d/dependencies/a/0",
                "/properties/d/dependentRequired/a/0",
            ),
            ("/properties/t", "/properties/t"),
        ] {
            assert_eq!(upgraded_pointer(Dialect::Draft07, &written, w), u, "{w}");
            assert_eq!(written_pointer(Dialect::Draft07, &written, u), w, "{u}");
        }
    }

    #[test]
    fn keywords_of_later_dialects_are_refused() {
        let written = json!({"$defs": {}, "items": {"prefixItems": [true]}});
        let (_, refusals) = upgrade(Dialect::Draft07, &written);
        let at: Vec<(&str, &str)> = refusals
            .iter()
            .map(|(p, k, _)| (p.as_str(), k.as_str()))
            .collect();
        assert_eq!(at, [("", "$defs"), ("/items", "prefixItems")]);
        let (_, refusals) = upgrade(Dialect::Draft2019_09, &written);
        assert_eq!(refusals.len(), 1);
    }
}
