//! `if`/`then`/`else` chains that tell a union apart by one property's value: each `if` is
//! `{properties: {kind: {const: "a"}}, required: ["kind"]}` (or an `enum`), written as a chain
//! of `else`s or as an `allOf` of `if`/`then` parts beside the object's own `properties`; a
//! `then` or `else` may be a `$ref` to a schema of the same file (`{"$ref": "#/$defs/Mail"}`).
//!
//! Such a chain is typed as a `oneOf` decided by that property (a `DecisionTree` with one tag
//! test): one case per set of parts that applies together, each an object of the members its
//! parts declare, checked part after part as the interpreter runs them and closed after them
//! (the interpreter closes an object over what its in-place parts evaluated). A document whose
//! tag is absent (when an `if` requires it), not a value an `if` names, or not a string fails
//! every `if` and is the case of what the `else`s admit. Anything else keeps the deferral to
//! the interpreter, with the reason [`chain`] gives.

use perago_schema::dialect::ANNOTATIONS;
use perago_schema::load::{Document, decode_fragment, pointer_token};
use serde_json::{Map, Value};

/// A recognised chain, at the schema (the holder) that declares the object's own members.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chain {
    /// The property every `if` tests.
    pub tag: String,
    /// Every value an `if` names, in schema order, each once.
    pub values: Vec<Value>,
    /// The cases, in the order their first situation comes (the values', then absent, then any
    /// other value).
    pub cases: Vec<Case>,
    /// The case of each of `values`.
    pub by_value: Vec<usize>,
    /// The case of an object without the tag.
    pub absent: usize,
    /// The case of a tag that is none of `values` (or not a string, integer or boolean).
    pub other: usize,
}

/// One set of parts that apply together.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Case {
    /// The parts whose own `properties` and `required` apply, in the interpreter's order (the
    /// holder first): their JSON Pointers in the document (a `$ref` part's: its target's).
    pub parts: Vec<String>,
    /// When an `if` that held evaluated the tag (so it is no unknown member): the pointer of its
    /// schema of the tag (`…/if/properties/kind`).
    pub tag_schema: Option<String>,
}

/// What a tag may be in a document, as the `if`s see it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Situation<'a> {
    Value(&'a Value),
    Absent,
    Other,
}

/// How deep parts may nest in a chain (`else` in `else`, parts reached by `$ref`).
const MAX_DEPTH: usize = 64;

/// The keywords a part of a chain may have beside its members.
const PART: &[&str] = &[
    "properties",
    "required",
    "type",
    "allOf",
    "if",
    "then",
    "else",
];

/// The chain of the schema `map` at `pointer` in `doc` (as written, upgraded to 2020-12),
/// `Ok(None)` when the schema has no `if` (itself or in an `allOf` part), else why it is not
/// typed.
pub(crate) fn chain(
    doc: &Document,
    map: &Map<String, Value>,
    pointer: &str,
) -> Result<Option<Chain>, String> {
    let parts = map.get("allOf").and_then(Value::as_array);
    let has_if =
        map.contains_key("if") || parts.is_some_and(|p| p.iter().any(|p| p.get("if").is_some()));
    if !has_if {
        return Ok(None);
    }
    if map.get("type").is_none_or(|t| t != "object") {
        return Err(
            "a chain of `if`s is typed on an object schema (`\"type\": \"object\"`)".into(),
        );
    }
    for k in map.keys() {
        let k = k.as_str();
        let allowed = PART.contains(&k)
            || ANNOTATIONS.contains(&k)
            || k.starts_with("x-")
            || matches!(k, "$schema" | "$id" | "$defs" | "$comment")
            || (k == "unevaluatedProperties" && map[k] == false);
        if !allowed {
            return Err(format!(
                "`{k}` beside a chain of `if`s has no typed form in one"
            ));
        }
    }
    let mut tag: Option<(String, Vec<Value>)> = None;
    collect_tags(doc, map, pointer, &mut tag, 0)?;
    let Some((tag, values)) = tag else {
        return Err("no `if` tests a property".into());
    };
    let mut situations: Vec<Situation<'_>> = values.iter().map(Situation::Value).collect();
    situations.extend([Situation::Absent, Situation::Other]);
    let mut cases: Vec<Case> = Vec::new();
    let mut of: Vec<usize> = Vec::new();
    for s in situations {
        let mut case = Case {
            parts: Vec::new(),
            tag_schema: None,
        };
        applied(doc, map, pointer, &tag, s, &mut case, true)?;
        // A tag a part declares is evaluated by that part.
        if case.parts.iter().any(|at| {
            own_members(doc, map, pointer, at)
                .0
                .is_some_and(|p| p.contains_key(&tag))
        }) {
            case.tag_schema = None;
        }
        declared_once(doc, map, pointer, &tag, &case)?;
        let i = match cases.iter().position(|c| *c == case) {
            Some(i) => i,
            None => {
                cases.push(case);
                cases.len() - 1
            }
        };
        of.push(i);
    }
    let n = values.len();
    Ok(Some(Chain {
        tag,
        by_value: of[..n].to_vec(),
        absent: of[n],
        other: of[n + 1],
        values,
        cases,
    }))
}

/// The schema at `at`, a JSON Pointer in `doc`.
pub(crate) fn at<'a>(doc: &'a Document, at: &str) -> Option<&'a Value> {
    doc.root.pointer(at)
}

/// A `then` or `else` written at `at`: the schema that applies, and its pointer. A part that
/// is only a `$ref` to a schema of the same file (and annotations) is the schema it names.
fn part<'a>(
    doc: &'a Document,
    value: &'a Value,
    at: String,
) -> Result<(&'a Value, String), String> {
    let Some(reference) = value.get("$ref") else {
        return Ok((value, at));
    };
    let only_ref = value.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()))
    });
    if !only_ref {
        return Err(format!(
            "`{at}` has `$ref` beside other keywords, which a typed case cannot hold"
        ));
    }
    let target = match reference.as_str().and_then(|r| r.strip_prefix('#')) {
        Some(f) if f.is_empty() || f.starts_with('/') => doc.upgraded_pointer(&decode_fragment(f)),
        _ => {
            return Err(format!(
                "`{at}` is a `$ref` to another file; a typed case is a schema of its own file"
            ));
        }
    };
    match doc.root.pointer(&target) {
        Some(schema) => Ok((schema, target)),
        None => Err(format!("`{at}/$ref` names nothing")),
    }
}

/// The `properties` and `required` of the part at `at` (the holder's own when `at` is the
/// holder's pointer).
pub(crate) fn own_members<'a>(
    doc: &'a Document,
    holder: &'a Map<String, Value>,
    pointer: &str,
    at: &str,
) -> (Option<&'a Map<String, Value>>, Vec<&'a str>) {
    let map = if at == pointer {
        Some(holder)
    } else {
        self::at(doc, at).and_then(Value::as_object)
    };
    let properties = map
        .and_then(|m| m.get("properties"))
        .and_then(Value::as_object);
    let required = map
        .and_then(|m| m.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    (properties, required)
}

/// Finds the tag property and its values in every `if` below `map` (at `pointer`), and checks
/// each part's keywords.
fn collect_tags(
    doc: &Document,
    map: &Map<String, Value>,
    pointer: &str,
    tag: &mut Option<(String, Vec<Value>)>,
    depth: usize,
) -> Result<(), String> {
    // A `$ref` may lead back to a part that holds it (lint reports such a cycle).
    if depth > MAX_DEPTH {
        return Err(format!(
            "`{pointer}`: the parts nest more than {MAX_DEPTH} deep"
        ));
    }
    if let Some(parts) = map.get("allOf") {
        let Some(parts) = parts.as_array() else {
            return Err("`allOf` is not an array".into());
        };
        for (i, p) in parts.iter().enumerate() {
            let at = format!("{pointer}/allOf/{i}");
            let Value::Object(p) = p else {
                return Err(format!("`{at}` is not an object schema"));
            };
            if !p.contains_key("if") {
                return Err(format!(
                    "`{at}`: an `allOf` beside a chain of `if`s holds `if`s only"
                ));
            }
            part_keywords(p, &at)?;
            collect_tags(doc, p, &at, tag, depth + 1)?;
        }
    }
    let Some(condition) = map.get("if") else {
        if map.contains_key("then") || map.contains_key("else") {
            return Err(format!("`{pointer}`: `then` or `else` without `if`"));
        }
        return Ok(());
    };
    let (name, values) = condition_of(condition, &format!("{pointer}/if"))?;
    match tag {
        None => *tag = Some((name, Vec::new())),
        Some((t, _)) if *t != name => {
            return Err(format!(
                "the `if`s test different properties (`{t}` and `{name}`)"
            ));
        }
        Some(_) => {}
    }
    let known = &mut tag.as_mut().expect("set above").1;
    for v in values {
        if !known.contains(&v) {
            known.push(v);
        }
    }
    for k in ["then", "else"] {
        let at = format!("{pointer}/{k}");
        let written = map.get(k);
        let (value, at) = match written {
            Some(v) => {
                let (v, at) = part(doc, v, at)?;
                (Some(v), at)
            }
            None => (None, at),
        };
        match value {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Object(p)) => {
                part_keywords(p, &at)?;
                collect_tags(doc, p, &at, tag, depth + 1)?;
            }
            Some(_) => {
                return Err(format!(
                    "`{at}` admits no value: its case has no typed form"
                ));
            }
        }
    }
    Ok(())
}

/// A part (a `then`, an `else`, an `allOf` part) has members, `type: object` and chains only.
fn part_keywords(map: &Map<String, Value>, at: &str) -> Result<(), String> {
    for k in map.keys() {
        let k = k.as_str();
        if !(PART.contains(&k) || ANNOTATIONS.contains(&k) || k.starts_with("x-")) {
            return Err(format!("`{at}` has `{k}`, which a typed case cannot hold"));
        }
    }
    if map.get("type").is_some_and(|t| t != "object") {
        return Err(format!("`{at}` is not an object schema"));
    }
    if let Some(props) = map.get("properties")
        && !props.is_object()
    {
        return Err(format!("`{at}/properties` is not an object"));
    }
    Ok(())
}

/// The property an `if` tests and the values it names: `properties` with one property whose
/// schema is a `const` or an `enum` of strings, integers or booleans, and `required` naming
/// it or nothing.
fn condition_of(condition: &Value, at: &str) -> Result<(String, Vec<Value>), String> {
    let shape = || {
        format!(
            "`{at}` is not `{{\"properties\": {{NAME: {{\"const\": VALUE}}}}, \"required\": [NAME]}}` (or an `enum` of values)"
        )
    };
    let Value::Object(map) = condition else {
        return Err(shape());
    };
    for (k, v) in map {
        let fine = matches!(k.as_str(), "properties" | "required")
            || (k == "type" && v == "object")
            || ANNOTATIONS.contains(&k.as_str());
        if !fine {
            return Err(shape());
        }
    }
    let Some(Value::Object(props)) = map.get("properties") else {
        return Err(shape());
    };
    let mut props = props.iter();
    let (Some((name, schema)), None) = (props.next(), props.next()) else {
        return Err(shape());
    };
    match map.get("required") {
        None => {}
        Some(Value::Array(r)) if r.is_empty() || (r.len() == 1 && r[0] == *name) => {}
        Some(_) => return Err(shape()),
    }
    let Value::Object(schema) = schema else {
        return Err(shape());
    };
    let values = match (schema.get("const"), schema.get("enum")) {
        (Some(c), None) => vec![c.clone()],
        (None, Some(Value::Array(list))) if !list.is_empty() => list.clone(),
        _ => return Err(shape()),
    };
    let tag_like = |v: &Value| v.is_string() || v.is_boolean() || v.as_i64().is_some();
    if !values.iter().all(tag_like) {
        return Err(format!(
            "`{at}` names a value that is not a string, an integer or a boolean"
        ));
    }
    for (k, v) in schema {
        let fine = matches!(k.as_str(), "const" | "enum")
            || ANNOTATIONS.contains(&k.as_str())
            || (k == "type"
                && values
                    .iter()
                    .all(|x| type_of(x) == Some(v.as_str().unwrap_or(""))));
        if !fine {
            return Err(shape());
        }
    }
    Ok((name.clone(), values))
}

/// The JSON type name of a tag value.
fn type_of(v: &Value) -> Option<&'static str> {
    match v {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("integer"),
        _ => None,
    }
}

/// True when the `if` at `condition` holds in situation `s` of the tag.
fn holds(condition: &Value, s: Situation<'_>) -> bool {
    let required = condition
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    let schema = condition
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.values().next());
    let named = |v: &Value| {
        schema.is_some_and(|s| {
            s.get("const") == Some(v)
                || s.get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|l| l.contains(v))
        })
    };
    match s {
        Situation::Value(v) => named(v),
        Situation::Absent => !required,
        Situation::Other => false,
    }
}

/// Adds to `case` the parts that apply below `map` (at `pointer`) in situation `s`, in the
/// interpreter's order: the part's own members, its `allOf` parts, then `then` or `else`.
fn applied(
    doc: &Document,
    map: &Map<String, Value>,
    pointer: &str,
    tag: &str,
    s: Situation<'_>,
    case: &mut Case,
    holder: bool,
) -> Result<(), String> {
    if holder || map.contains_key("properties") || map.contains_key("required") {
        case.parts.push(pointer.to_owned());
    }
    if let Some(Value::Array(parts)) = map.get("allOf") {
        for (i, p) in parts.iter().enumerate() {
            if let Value::Object(p) = p {
                applied(doc, p, &format!("{pointer}/allOf/{i}"), tag, s, case, false)?;
            }
        }
    }
    if let Some(condition) = map.get("if") {
        let (k, at) = if holds(condition, s) {
            if matches!(s, Situation::Value(_)) && case.tag_schema.is_none() {
                case.tag_schema = Some(format!("{pointer}/if/properties/{}", pointer_token(tag)));
            }
            ("then", format!("{pointer}/then"))
        } else {
            ("else", format!("{pointer}/else"))
        };
        if let Some(v) = map.get(k)
            && let (Value::Object(p), at) = part(doc, v, at)?
        {
            applied(doc, p, &at, tag, s, case, false)?;
        }
    }
    Ok(())
}

/// Each member a case's parts declare is declared once, or identically: its struct has one
/// field per member. A name a part requires is declared by a part of the case, or is the tag.
fn declared_once(
    doc: &Document,
    holder: &Map<String, Value>,
    pointer: &str,
    tag: &str,
    case: &Case,
) -> Result<(), String> {
    let mut seen: Vec<(&str, &Value)> = Vec::new();
    for at in &case.parts {
        let (props, _) = own_members(doc, holder, pointer, at);
        for (name, schema) in props.into_iter().flatten() {
            match seen.iter().find(|(n, _)| *n == name) {
                Some((_, s)) if *s != schema => {
                    return Err(format!(
                        "`{name}` is declared differently by two parts that apply together"
                    ));
                }
                Some(_) => {}
                None => seen.push((name, schema)),
            }
        }
    }
    for at in &case.parts {
        let (_, required) = own_members(doc, holder, pointer, at);
        for name in required {
            let evaluated = case.tag_schema.is_some() && name == tag;
            if !seen.iter().any(|(n, _)| *n == name) && !evaluated {
                return Err(format!(
                    "`{at}` requires `{name}`, which no part that applies with it declares"
                ));
            }
        }
    }
    Ok(())
}
