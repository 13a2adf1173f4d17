//! The supported subset, checked before anything is built: every keyword outside it, and every
//! combination perago cannot honour, is an error naming the file, the JSON Pointer and the
//! keyword. Nothing is silently ignored.

use crate::check::{Pattern, json_equal};
use crate::decision::{Decision, Test};
use crate::error::LintError;
use crate::ir::Kind;
use crate::load::{Documents, pointer_token};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The dialect every root must declare.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords that only annotate (the interpreter's too).
pub(crate) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "minItems",
    "maxItems",
    "prefixItems",
    "uniqueItems",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "patternProperties",
    "propertyNames",
];
const OTHER_KEYWORDS: &[&str] = &["type", "enum", "const", "$ref", "oneOf", "anyOf", "allOf"];
/// Where to go for what codegen cannot type: the interpreter, which takes draft 2020-12 whole.
const VALIDATE: &str =
    "`perago validate --schema FILE` takes this schema as written, without generated types";
const ROOT_ONLY: &[&str] = &["$schema", "$id", "$defs"];
/// Keywords that apply a second schema to a value generated code still types: the value is
/// typed without them and judged with them by the interpreter ([`Hold::Typed`]).
const APPLIED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "contains",
    "minContains",
    "maxContains",
];
/// Keywords the interpreter takes and generated types have no form for: their schema's value
/// is held whole ([`Hold::Value`]).
const JUDGED: &[&str] = &["unevaluatedProperties", "unevaluatedItems", "$anchor"];

/// How generated code holds a part of a schema it does not type rule by rule: the interpreter
/// judges the part's value (see `crate::judge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hold {
    pub kind: HoldKind,
    /// Why, for the generated type's documentation.
    pub reason: String,
}

/// What is typed of a held part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HoldKind {
    /// Everything but the [`APPLIED`] keywords, which the interpreter checks.
    Typed,
    /// Nothing: a `serde_json::Value`.
    Value,
}

/// The held parts of the linted documents: (document, JSON Pointer) of the schema whose values
/// are held, always one a value is entered at (a root, `$defs` entry, property, item…).
pub(crate) type Holds = HashMap<(usize, String), Hold>;

/// The members the `then`, `else` and `dependentSchemas` of the schema `map` at `pointer`
/// declare: (pointer, schema) of each, in schema order.
pub(crate) fn applied_members(map: &Map<String, Value>, pointer: &str) -> Vec<(String, Value)> {
    let mut parts: Vec<(String, &Value)> = Vec::new();
    for keyword in ["then", "else"] {
        if let Some(part) = map.get(keyword) {
            parts.push((format!("{pointer}/{keyword}"), part));
        }
    }
    if let Some(Value::Object(deps)) = map.get("dependentSchemas") {
        for (key, part) in deps {
            parts.push((
                format!("{pointer}/dependentSchemas/{}", pointer_token(key)),
                part,
            ));
        }
    }
    let mut members = Vec::new();
    for (at, part) in parts {
        if let Some(Value::Object(props)) = part.get("properties") {
            for (name, schema) in props {
                let ptr = format!("{at}/properties/{}", pointer_token(name));
                members.push((ptr, schema.clone()));
            }
        }
    }
    members
}

/// The schema a value at `pointer` is entered at: `pointer` less its in-place steps (the
/// branches of `allOf`, `anyOf` and `oneOf`), which read the same value.
fn entered_at(mut pointer: &str) -> &str {
    loop {
        let Some((parent, last)) = pointer.rsplit_once('/') else {
            return pointer;
        };
        let Some((grand, keyword)) = parent.rsplit_once('/') else {
            return pointer;
        };
        if last.parse::<usize>().is_ok() && matches!(keyword, "allOf" | "anyOf" | "oneOf") {
            pointer = grand;
        } else {
            return pointer;
        }
    }
}
const TYPES: &[&str] = &[
    "string", "integer", "number", "boolean", "null", "object", "array",
];

/// The keywords of the subset that constrain values (everything but annotations and the
/// root-only keywords).
fn is_structural(keyword: &str) -> bool {
    [
        STRING_KEYWORDS,
        NUMBER_KEYWORDS,
        ARRAY_KEYWORDS,
        OBJECT_KEYWORDS,
        OTHER_KEYWORDS,
    ]
    .iter()
    .any(|g| g.contains(&keyword))
}

/// The types a keyword of the subset applies to (`None`: it is not a keyword of one type).
pub(crate) fn keyword_types(keyword: &str) -> Option<&'static [&'static str]> {
    if STRING_KEYWORDS.contains(&keyword) {
        Some(&["string"])
    } else if NUMBER_KEYWORDS.contains(&keyword) {
        Some(&["integer", "number"])
    } else if ARRAY_KEYWORDS.contains(&keyword) {
        Some(&["array"])
    } else if OBJECT_KEYWORDS.contains(&keyword) {
        Some(&["object"])
    } else {
        None
    }
}

/// Keywords that say something of a schema and constrain nothing.
pub(crate) fn is_annotation(keyword: &str) -> bool {
    ANNOTATIONS.contains(&keyword)
}

fn is_known(keyword: &str) -> bool {
    is_structural(keyword) || ANNOTATIONS.contains(&keyword) || ROOT_ONLY.contains(&keyword)
}

/// True when a file's root says more than annotations and `$defs`, i.e. is a schema of its own
/// rather than a holder of definitions.
pub(crate) fn has_structure(root: &Value) -> bool {
    match root {
        Value::Object(map) => map
            .keys()
            .any(|k| !ANNOTATIONS.contains(&k.as_str()) && !ROOT_ONLY.contains(&k.as_str())),
        _ => true,
    }
}

/// What to write instead of a keyword outside the subset, when there is something to say.
fn unsupported_hint(keyword: &str) -> Option<String> {
    let hint = match keyword {
        "dependencies" => "write `dependentRequired` or `dependentSchemas` (JSON Schema 2020-12)",
        "definitions" => "write `$defs` (JSON Schema 2020-12)",
        "id" => "write `$id`",
        "$dynamicAnchor" | "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => {
            "put the schema in the root `$defs` and `$ref` it as \"#/$defs/Name\""
        }
        "$vocabulary" => "perago supports one fixed subset of JSON Schema 2020-12",
        "nullable" => "write `\"type\": [T, \"null\"]`",
        "discriminator" => {
            "`oneOf` branches are told apart by their string `const` property; no annotation is needed"
        }
        "example" => "write `examples` (an array)",
        _ => {
            let lower = keyword.to_ascii_lowercase();
            let known = [
                ANNOTATIONS,
                STRING_KEYWORDS,
                NUMBER_KEYWORDS,
                ARRAY_KEYWORDS,
                OBJECT_KEYWORDS,
                OTHER_KEYWORDS,
                ROOT_ONLY,
            ]
            .into_iter()
            .flatten()
            .find(|k| k.to_ascii_lowercase() == lower || k.trim_start_matches('$') == keyword)?;
            return Some(format!("did you mean `{known}`?"));
        }
    };
    Some(hint.to_owned())
}

/// Lints every loaded document (loading the files their `$ref`s name as it goes); the errors
/// come file by file, each file's in document order.
pub(crate) fn lint(docs: &mut Documents) -> (Vec<LintError>, Holds) {
    let mut holds = Holds::new();
    // A part held is not linted further, and what uses a held part in place is held in
    // turn: lint again until the held parts are all found.
    loop {
        let mut errors = Vec::new();
        let before = holds.clone();
        let mut i = 0;
        while i < docs.docs.len() {
            let root = docs.get(i).root.clone();
            let file = docs.get(i).file.clone();
            let mut linter = Linter {
                docs,
                doc: i,
                file: &file,
                errors: &mut errors,
                holds: &mut holds,
            };
            linter.root(&root);
            i += 1;
        }
        if holds == before {
            sort_errors(docs, &mut errors);
            return (errors, holds);
        }
    }
}

/// Puts errors in load order of their files and, within a file, in the order their location
/// (the keyword in the node at the pointer) appears in the document.
pub(crate) fn sort_errors(docs: &Documents, errors: &mut [LintError]) {
    let mut order: HashMap<&str, (usize, HashMap<String, usize>)> = HashMap::new();
    for (i, doc) in docs.iter().enumerate() {
        order.entry(doc.file.as_str()).or_insert_with(|| {
            let mut positions = HashMap::new();
            preorder(&doc.root, String::new(), &mut positions);
            (i, positions)
        });
    }
    errors.sort_by_cached_key(|e| match order.get(e.file.as_str()) {
        Some((i, positions)) => {
            let at_keyword = (!e.keyword.is_empty())
                .then(|| format!("{}/{}", e.pointer, pointer_token(&e.keyword)));
            let position = at_keyword
                .and_then(|p| positions.get(&p))
                .or_else(|| positions.get(&e.pointer));
            (*i, position.copied().unwrap_or(usize::MAX))
        }
        None => (usize::MAX, 0),
    });
}

fn preorder(value: &Value, pointer: String, positions: &mut HashMap<String, usize>) {
    let n = positions.len();
    positions.insert(pointer.clone(), n);
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                preorder(v, format!("{pointer}/{}", pointer_token(k)), positions);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                preorder(v, format!("{pointer}/{i}"), positions);
            }
        }
        _ => {}
    }
}

struct Linter<'a> {
    docs: &'a mut Documents,
    doc: usize,
    file: &'a str,
    errors: &'a mut Vec<LintError>,
    holds: &'a mut Holds,
}

impl Linter<'_> {
    fn err(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        self.errors
            .push(LintError::new(self.file, pointer, keyword, message));
    }

    /// Holds the value entered at `pointer` (or at the schema it is in place of) for the
    /// interpreter to judge; a whole value holding wins over a typed one.
    fn hold(&mut self, pointer: &str, kind: HoldKind, reason: impl Into<String>) {
        let at = entered_at(pointer);
        let in_place = at != pointer && kind == HoldKind::Typed;
        let kind = if in_place { HoldKind::Value } else { kind };
        let key = (self.doc, at.to_owned());
        match self.holds.get(&key) {
            Some(h) if h.kind == HoldKind::Value || h.kind == kind => {}
            _ => {
                let reason = match in_place {
                    // A branch applied in place: its check has no typed value of its own.
                    true => format!(
                        "{}, in `{}`; held as a `serde_json::Value`",
                        reason.into(),
                        &pointer[at.len()..]
                    ),
                    false => reason.into(),
                };
                self.holds.insert(key, Hold { kind, reason });
            }
        }
    }

    /// What generated types cannot hold as typed, at `keyword` of `pointer`: a
    /// `serde_json::Value` the interpreter judges, `message` saying why.
    fn untyped(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        let message = message.into();
        let reason = match keyword {
            "" => format!("{message}; held as a `serde_json::Value`"),
            _ => format!("`{keyword}`: {message}; held as a `serde_json::Value`"),
        };
        self.hold(pointer, HoldKind::Value, reason);
    }

    fn held(&self, doc: usize, pointer: &str) -> Option<&Hold> {
        self.holds.get(&(doc, entered_at(pointer).to_owned()))
    }

    /// True when `schema`, written in this document, is a `$ref` (through any number) to a
    /// held schema.
    fn reaches_held(&mut self, schema: &Value) -> bool {
        let mut doc = self.doc;
        let mut schema = schema.clone();
        for _ in 0..64 {
            let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
                return false;
            };
            let Ok((d, ptr, v)) = self.target(doc, r) else {
                return false;
            };
            if self.holds.contains_key(&(d, ptr)) {
                return true;
            }
            (doc, schema) = (d, v);
        }
        false
    }

    fn root(&mut self, root: &Value) {
        let Value::Object(map) = root else {
            self.err(
                "",
                "",
                format!(
                    "a schema file must hold a JSON object (a schema), found {}",
                    kind(root)
                ),
            );
            return;
        };
        match map.get("$schema") {
            Some(Value::String(s)) if s.trim_end_matches('#') == DIALECT => {}
            Some(other) => self.err(
                "",
                "$schema",
                format!("must be {DIALECT:?}, found {other}: perago supports a subset of JSON Schema 2020-12 only"),
            ),
            None => self.err("", "$schema", format!("missing: add \"$schema\": {DIALECT:?} at the root")),
        }
        if let Some(id) = map.get("$id")
            && !id.as_str().is_some_and(|s| {
                s.contains(':') && !s.contains('#') && !s.contains(char::is_whitespace)
            })
        {
            self.err(
                "",
                "$id",
                format!("must be an absolute URI without a fragment (e.g. \"https://example.com/schemas/name.schema.json\"), found {id}"),
            );
        }
        self.node(root, "", true);
    }

    /// Every keyword of a schema is known and allowed where it is; annotations are well-formed.
    fn keywords(&mut self, map: &Map<String, Value>, pointer: &str, is_root: bool) {
        for (keyword, value) in map {
            let k = keyword.as_str();
            if ROOT_ONLY.contains(&k) {
                if !is_root {
                    self.root_only(pointer, k);
                }
            } else if matches!(k, "then" | "else" | "dependentSchemas") && map.contains_key("allOf")
            {
                // The members they declare would join a merged `allOf` struct's steps.
                self.untyped(
                    pointer,
                    k,
                    "generated code merges `allOf` into one struct, and this keyword is beside it",
                );
            } else if APPLIED.contains(&k) {
                self.hold(
                    pointer,
                    HoldKind::Typed,
                    format!("`{k}` applies a schema to the typed value"),
                );
            } else if matches!(k, "unevaluatedProperties" | "unevaluatedItems") && *value == false {
                // Closes no more than the typed value's shape does, where the value is entered
                // (a typed object is closed over what it applies in place): the type stands,
                // and the interpreter applies the keyword as written. Elsewhere (in an `allOf`
                // branch) it closes a part alone, and the value is held whole.
                self.hold(
                    pointer,
                    HoldKind::Typed,
                    format!("`{k}: false` is applied as written"),
                );
            } else if JUDGED.contains(&k) {
                self.untyped(pointer, k, "generated types have no form for it");
            } else if !is_known(k) {
                // Generated code has no use for it (or it is a typo the interpreter refuses too).
                let message = match unsupported_hint(k) {
                    Some(hint) => {
                        format!("not in the subset perago generates types for: {hint}; {VALIDATE}")
                    }
                    None => format!("not in the subset perago generates types for: {VALIDATE}"),
                };
                self.err(pointer, k, message);
            }
            if k == "examples" && !value.is_array() {
                self.err(
                    pointer,
                    k,
                    format!("must be an array of example values, found {}", kind(value)),
                );
            }
            if matches!(k, "title" | "description" | "$comment") && !value.is_string() {
                self.err(
                    pointer,
                    k,
                    format!("must be a string, found {}", kind(value)),
                );
            }
        }
    }

    fn root_only(&mut self, pointer: &str, keyword: &str) {
        let hint = match keyword {
            "$defs" => {
                "move these definitions to the `$defs` at the root of the file (only those can be referenced)"
            }
            _ => {
                "a schema inside a file cannot be a separate resource; move it to a file of its own and `$ref` it"
            }
        };
        self.err(
            pointer,
            keyword,
            format!("only allowed at the root of a schema file: {hint}"),
        );
    }

    /// What a schema held whole must still be, for generated code to record it standing
    /// alone (`bundle`): no resource below a file's root, and `$ref`s to what lint allows.
    fn held_structure(&mut self, schema: &Value, pointer: &str) {
        let Value::Object(map) = schema else { return };
        for (k, v) in map {
            let at = format!("{pointer}/{}", pointer_token(k));
            match (k.as_str(), v) {
                ("$id" | "$defs" | "$schema", _) => self.root_only(pointer, k),
                ("$ref", _) => self.reference(v, pointer),
                (
                    "properties" | "patternProperties" | "dependentSchemas",
                    Value::Object(children),
                ) => {
                    for (name, child) in children {
                        self.held_structure(child, &format!("{at}/{}", pointer_token(name)));
                    }
                }
                ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(children)) => {
                    for (i, child) in children.iter().enumerate() {
                        self.held_structure(child, &format!("{at}/{i}"));
                    }
                }
                (
                    "items"
                    | "additionalProperties"
                    | "propertyNames"
                    | "not"
                    | "if"
                    | "then"
                    | "else"
                    | "contains"
                    | "unevaluatedProperties"
                    | "unevaluatedItems",
                    child,
                ) => self.held_structure(child, &at),
                _ => {}
            }
        }
    }

    /// Lints one schema node at `pointer`.
    fn node(&mut self, node: &Value, pointer: &str, is_root: bool) {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.untyped(pointer, "", "the `false` schema admits no value");
                return;
            }
            other => {
                self.err(
                    pointer,
                    "",
                    format!(
                        "a schema must be an object (or `true`), found {}",
                        kind(other)
                    ),
                );
                return;
            }
        };
        let whole = self
            .held(self.doc, pointer)
            .is_some_and(|h| h.kind == HoldKind::Value);
        if !whole {
            self.keywords(map, pointer, is_root);
        }
        if is_root && let Some(defs) = map.get("$defs") {
            match defs {
                Value::Object(defs) => {
                    for (name, def) in defs {
                        self.node(
                            def,
                            &format!("{pointer}/$defs/{}", pointer_token(name)),
                            false,
                        );
                    }
                }
                other => self.err(
                    pointer,
                    "$defs",
                    format!("must be an object of named schemas, found {}", kind(other)),
                ),
            }
        }

        if whole {
            // Held whole; the root's own `$id`/`$schema`/`$defs` were seen above.
            let mut own = map.clone();
            if is_root {
                for k in ROOT_ONLY {
                    own.shift_remove(*k);
                }
            }
            self.held_structure(&Value::Object(own), pointer);
            return;
        }
        // The members `then`, `else` and `dependentSchemas` declare are typed as optional
        // fields of a held object: linted as the object's own are.
        for (at, schema) in applied_members(map, pointer) {
            self.node(&schema, &at, false);
        }
        // The rest of what the interpreter applies beside the typed schema.
        let mut applied: Vec<(String, Value)> = Vec::new();
        for k in ["not", "if", "then", "else", "contains"] {
            if let Some(v) = map.get(k) {
                applied.push((format!("{pointer}/{k}"), v.clone()));
            }
        }
        if let Some(Value::Object(deps)) = map.get("dependentSchemas") {
            for (key, v) in deps {
                let at = format!("{pointer}/dependentSchemas/{}", pointer_token(key));
                applied.push((at, v.clone()));
            }
        }
        for (at, mut schema) in applied {
            if !at.ends_with("/not") && !at.ends_with("/if") && !at.ends_with("/contains") {
                // Linted as members above.
                if let Value::Object(m) = &mut schema {
                    m.shift_remove("properties");
                }
            }
            self.held_structure(&schema, &at);
        }
        // A branch or part read in place of this schema that is held makes this one held.
        for keyword in ["allOf", "anyOf", "oneOf"] {
            let parts = map.get(keyword).and_then(Value::as_array).cloned();
            if parts.is_some_and(|parts| parts.iter().any(|p| self.reaches_held(p))) {
                self.untyped(
                    pointer,
                    keyword,
                    "it applies in place a schema the interpreter judges",
                );
                return;
            }
        }

        // Keywords of the subset that constrain values; unknown ones are reported above.
        let structural: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| is_structural(k))
            .collect();

        if let Some(reference) = map.get("$ref") {
            for other in structural.iter().filter(|k| **k != "$ref") {
                self.untyped(
                    pointer,
                    other,
                    "generated code types a `$ref` as the schema it names, and this keyword is beside it",
                );
            }
            self.reference(reference, pointer);
            return;
        }
        if let Some(list) = map
            .get("oneOf")
            .or_else(|| map.get("anyOf"))
            .and_then(Value::as_array)
            && self.is_union(map, list)
        {
            let keyword = if map.contains_key("oneOf") {
                "oneOf"
            } else {
                "anyOf"
            };
            let article = if keyword == "anyOf" { "an" } else { "a" };
            for other in structural.iter().filter(|k| **k != keyword) {
                self.untyped(
                    pointer,
                    other,
                    format!("generated code types {article} `{keyword}` of JSON types as an enum of its branches, and this keyword is beside it"),
                );
            }
            self.union(list, pointer, keyword);
            return;
        }
        if let Some(parts) = map.get("allOf") {
            self.all_of(map, parts, pointer);
            return;
        }
        if let Some(branches) = map.get("oneOf") {
            for other in structural
                .iter()
                .filter(|k| !matches!(**k, "oneOf" | "type"))
            {
                self.untyped(
                    pointer,
                    other,
                    "generated code types a `oneOf` as an enum of its branches, and this keyword is beside it",
                );
            }
            if let Some(t) = map.get("type").filter(|t| *t != "object") {
                self.untyped(pointer, "type", format!("generated code types a `oneOf` as a choice between objects, and its type is {t}"));
            }
            self.one_of(branches, pointer);
            return;
        }
        if let Some(branches) = map.get("anyOf") {
            for other in structural.iter().filter(|k| **k != "anyOf") {
                self.untyped(
                    pointer,
                    other,
                    "generated code types this `anyOf` as its non-null branch, and this keyword is beside it",
                );
            }
            self.any_of(branches, pointer);
            return;
        }

        let ty = self.type_keyword(map, pointer);
        let fixed = ["const", "enum"].into_iter().find(|k| map.contains_key(*k));
        if let Some(fixed) = fixed {
            for other in structural
                .iter()
                .filter(|k| !matches!(**k, "type" | "const" | "enum"))
            {
                self.untyped(
                    pointer,
                    other,
                    format!("generated code types `{fixed}` as its listed values, and this keyword is beside it"),
                );
            }
        }
        if let Some(c) = map.get("const") {
            if map.contains_key("enum") {
                self.err(pointer, "enum", "not supported beside `const`: keep one of them (a one-value `enum` is a `const`)");
            }
            if let Type::Valid { name, nullable } = &ty
                && !value_has_type(c, name, *nullable)
            {
                self.err(
                    pointer,
                    "const",
                    format!(
                        "{c} is not of the declared type {}",
                        type_text(name, *nullable)
                    ),
                );
            }
        }
        if let Some(values) = map.get("enum") {
            match values {
                Value::Array(values) if !values.is_empty() => {
                    for (i, v) in values.iter().enumerate() {
                        if values[..i].iter().any(|w| json_equal(v, w)) {
                            self.err(
                                pointer,
                                "enum",
                                format!("lists {v} more than once; remove the repeat"),
                            );
                        }
                        if let Type::Valid { name, nullable } = &ty
                            && !value_has_type(v, name, *nullable)
                        {
                            self.err(
                                pointer,
                                "enum",
                                format!(
                                    "{v} is not of the declared type {}",
                                    type_text(name, *nullable)
                                ),
                            );
                        }
                    }
                }
                Value::Array(_) => self.err(
                    pointer,
                    "enum",
                    "must list at least one value (an empty `enum` admits nothing)",
                ),
                other => self.err(
                    pointer,
                    "enum",
                    format!("must be a non-empty array of values, found {}", kind(other)),
                ),
            }
        }

        if fixed.is_none() && !matches!(ty, Type::Invalid) {
            let declared: Vec<&str> = match &ty {
                Type::Valid { name, .. } => vec![name.as_str()],
                Type::Scalars(names) => names.iter().map(String::as_str).collect(),
                _ => Vec::new(),
            };
            for k in &structural {
                let Some(needed) = keyword_types(k) else {
                    continue;
                };
                if declared.iter().any(|d| needed.contains(d)) {
                    continue;
                }
                let wanted = needed
                    .iter()
                    .map(|t| format!("`\"type\": \"{t}\"`"))
                    .collect::<Vec<_>>()
                    .join(" or ");
                let message = match &ty {
                    Type::Valid { name, nullable } => {
                        format!(
                            "applies only to {wanted}, but this schema has `\"type\": {}`: remove it or change the type",
                            type_text(name, *nullable)
                        )
                    }
                    Type::Scalars(names) => {
                        format!(
                            "applies only to {wanted}, but this schema has `\"type\": {names:?}`: remove it or change the type"
                        )
                    }
                    _ => {
                        self.untyped(
                            pointer,
                            k,
                            format!("applies only to {wanted}, and this schema declares no `type`"),
                        );
                        continue;
                    }
                };
                self.err(pointer, k, message);
            }
        }
        self.values(map, pointer);
        if let Some(prefix) = map.get("prefixItems") {
            self.tuple(map, prefix, pointer);
        } else if let Some(items) = map.get("items") {
            if items.is_array() {
                self.err(pointer, "items", "the tuple form (an array of schemas) is not supported: give `items` a single schema that every item matches");
            } else {
                self.node(items, &format!("{pointer}/items"), false);
            }
        }
        self.object(map, pointer, true);
    }

    /// The values of the length, count, bound and pattern keywords, and bounds no value can meet.
    fn values(&mut self, map: &Map<String, Value>, pointer: &str) {
        for k in [
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ] {
            if let Some(v) = map.get(k)
                && v.as_u64().is_none()
            {
                self.err(
                    pointer,
                    k,
                    format!("must be a non-negative integer (e.g. 1), found {v}"),
                );
            }
        }
        for k in NUMBER_KEYWORDS {
            match map.get(*k) {
                Some(Value::Bool(b)) if k.starts_with("exclusive") => {
                    let plain = if *k == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    self.err(
                        pointer,
                        k,
                        format!("must be a number, found {b}: in JSON Schema 2020-12 `{k}` is the bound itself, so write \"{k}\": 0 instead of \"{plain}\": 0 with \"{k}\": true"),
                    )
                }
                Some(v) if !v.is_number() => {
                    self.err(pointer, k, format!("must be a number, found {v}"))
                }
                _ => {}
            }
        }
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        for (min, max, what) in [
            ("minLength", "maxLength", "string"),
            ("minItems", "maxItems", "array"),
            ("minProperties", "maxProperties", "object"),
        ] {
            if let (Some(lo), Some(hi)) = (count(min), count(max))
                && lo > hi
            {
                self.err(
                    pointer,
                    min,
                    format!("is {lo}, more than `{max}` {hi}: no {what} can satisfy both"),
                );
            }
        }
        let num = |k: &'static str| map.get(k).and_then(Value::as_f64).map(|x| (k, x));
        let lower = [num("minimum"), num("exclusiveMinimum")];
        let upper = [num("maximum"), num("exclusiveMaximum")];
        'pairs: for (lk, lo) in lower.iter().flatten() {
            for (hk, hi) in upper.iter().flatten() {
                let empty = if *lk == "minimum" && *hk == "maximum" {
                    lo > hi
                } else {
                    lo >= hi
                };
                if empty {
                    self.err(
                        pointer,
                        lk,
                        format!(
                            "is {}, but `{hk}` is {}: no number can satisfy both",
                            map[*lk], map[*hk]
                        ),
                    );
                    break 'pairs;
                }
            }
        }
        if let Some(m) = map.get("multipleOf")
            && m.as_f64().is_some_and(|m| m <= 0.0)
        {
            self.err(
                pointer,
                "multipleOf",
                format!("must be a number greater than 0, found {m}"),
            );
        }
        if let Some(u) = map.get("uniqueItems")
            && !u.is_boolean()
        {
            self.err(
                pointer,
                "uniqueItems",
                format!("must be a boolean, found {u}"),
            );
        }
        if let Some(f) = map.get("format")
            && !f.is_string()
        {
            self.err(
                pointer,
                "format",
                format!("must be a string naming a format (e.g. \"date-time\"), found {f}"),
            );
        }
        if let Some(p) = map.get("pattern") {
            match p.as_str().map(Pattern::new) {
                Some(Ok(_)) => {}
                Some(Err(e)) => self.err(pointer, "pattern", e.to_string()),
                None => self.err(
                    pointer,
                    "pattern",
                    format!("must be a string holding a regular expression, found {p}"),
                ),
            }
        }
    }

    /// `properties`, `required`, `dependentRequired` and `additionalProperties`; `own` says the
    /// names `required` and `dependentRequired` list must be this schema's own properties (not
    /// so in an `allOf`, whose parts declare them together).
    fn object(&mut self, map: &Map<String, Value>, pointer: &str, own: bool) {
        let properties = match map.get("properties") {
            Some(Value::Object(props)) => Some(props),
            Some(other) => {
                self.err(
                    pointer,
                    "properties",
                    format!(
                        "must be an object mapping property names to schemas, found {}",
                        kind(other)
                    ),
                );
                None
            }
            None => None,
        };
        if let Some(props) = properties {
            for (name, schema) in props {
                self.node(
                    schema,
                    &format!("{pointer}/properties/{}", pointer_token(name)),
                    false,
                );
            }
        }
        match map.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for (i, name) in names.iter().enumerate() {
                    match name.as_str() {
                        Some(n) if names[..i].iter().any(|m| m == name) => {
                            self.err(
                                pointer,
                                "required",
                                format!("lists {n:?} more than once; remove the repeat"),
                            );
                        }
                        Some(n) if own && !properties.is_some_and(|p| p.contains_key(n)) => {
                            self.err(
                                pointer,
                                "required",
                                format!("names {n:?}, which `properties` does not declare: declare it, or remove it from `required`"),
                            );
                        }
                        Some(_) => {}
                        None => self.err(
                            pointer,
                            "required",
                            format!("must list property names (strings), found {name}"),
                        ),
                    }
                }
            }
            Some(other) => self.err(
                pointer,
                "required",
                format!("must be an array of property names, found {}", kind(other)),
            ),
        }
        self.dependent_required(map, pointer, own.then_some(properties).flatten());
        self.checked_map(map, pointer, properties.is_some_and(|p| !p.is_empty()));
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(schema @ Value::Object(_)) => {
                self.node(schema, &format!("{pointer}/additionalProperties"), false)
            }
            Some(other) => self.err(
                pointer,
                "additionalProperties",
                format!(
                    "must be `false` (a closed object) or a schema (a map's values), found {other}"
                ),
            ),
        }
    }

    /// `prefixItems`: generated code types a tuple of at most six positions, `minItems` at
    /// least its length, followed by the items `items` admits (none with `items: false`).
    fn tuple(&mut self, map: &Map<String, Value>, prefix: &Value, pointer: &str) {
        let Some(positions) = prefix.as_array().filter(|p| !p.is_empty()) else {
            self.err(
                pointer,
                "prefixItems",
                "must be a non-empty array of schemas",
            );
            return;
        };
        for (i, schema) in positions.iter().enumerate() {
            self.node(schema, &format!("{pointer}/prefixItems/{i}"), false);
        }
        let n = positions.len();
        if n > 6 {
            self.untyped(
                pointer,
                "prefixItems",
                format!("generated code types tuples of at most 6 items, found {n}: use an object"),
            );
        }
        match map.get("items") {
            None | Some(Value::Bool(false)) => {}
            Some(items) if items.is_array() => self.err(
                pointer,
                "items",
                "beside `prefixItems`, `items` is one schema: the items after the tuple's",
            ),
            Some(items) => self.node(items, &format!("{pointer}/items"), false),
        }
        if map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_none_or(|m| m < n as u64)
        {
            self.untyped(
                pointer,
                "minItems",
                format!("generated code types `prefixItems` as a tuple, every one of its items present: add `\"minItems\": {n}`"),
            );
        }
    }

    /// `patternProperties` and `propertyNames`: generated code types them as a map (no declared
    /// `properties` beside) with one pattern, whose other keys are unknown.
    fn checked_map(&mut self, map: &Map<String, Value>, pointer: &str, declares: bool) {
        let patterns = map.get("patternProperties");
        let names = map.get("propertyNames");
        if patterns.is_none() && names.is_none() {
            return;
        }
        let additional = map.get("additionalProperties");
        for k in ["patternProperties", "propertyNames"] {
            if declares && map.contains_key(k) {
                self.untyped(
                    pointer,
                    k,
                    format!(
                        "generated code types `{k}` on a map only, not beside declared `properties`"
                    ),
                );
            }
        }
        match patterns {
            None => {}
            Some(Value::Object(p)) if p.len() == 1 => {
                for (source, schema) in p {
                    if let Err(e) = Pattern::new(source) {
                        self.err(pointer, "patternProperties", e.to_string());
                    }
                    let at = format!("{pointer}/patternProperties/{}", pointer_token(source));
                    self.node(schema, &at, false);
                }
                if additional.is_some_and(|a| *a != Value::Bool(false)) {
                    self.untyped(
                        pointer,
                        "additionalProperties",
                        "generated code types `patternProperties` as a map whose other keys are unknown, so `additionalProperties` can only be `false` beside it",
                    );
                }
            }
            Some(Value::Object(_)) => self.untyped(
                pointer,
                "patternProperties",
                "generated code types one pattern (a map whose keys match it), not several",
            ),
            Some(other) => self.err(
                pointer,
                "patternProperties",
                format!(
                    "must be an object mapping patterns to schemas, found {}",
                    kind(other)
                ),
            ),
        }
        if let Some(names) = names {
            let mut typed = names.clone();
            if let Value::Object(m) = &mut typed {
                m.entry("type")
                    .or_insert(Value::String("string".to_owned()));
            }
            if typed.get("type").is_some_and(|t| t != "string") {
                self.err(
                    pointer,
                    "propertyNames",
                    "property names are strings: give `propertyNames` string rules (`pattern`, `minLength`, `maxLength`, `enum`, …)",
                );
            } else {
                self.node(&typed, &format!("{pointer}/propertyNames"), false);
            }
            if !declares
                && patterns.is_none()
                && !additional.is_some_and(|a| a.is_object() || *a == Value::Bool(true))
            {
                self.err(
                    pointer,
                    "propertyNames",
                    "an object without `properties`, `patternProperties` or an `additionalProperties` schema is closed and admits no key: give the map's values a schema in `additionalProperties`",
                );
            }
        }
    }

    /// `dependentRequired`: an object of arrays of property names; with `declared`, each name
    /// must be one of them (generated code knows declared properties only).
    fn dependent_required(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        declared: Option<&Map<String, Value>>,
    ) {
        const SHAPE: &str = "must be an object mapping a property name to the names (an array of strings) required when it is present";
        let Some(dependent) = map.get("dependentRequired") else {
            return;
        };
        let Value::Object(dependent) = dependent else {
            self.err(
                pointer,
                "dependentRequired",
                format!("{SHAPE}, found {}", kind(dependent)),
            );
            return;
        };
        let mut undeclared = Vec::new();
        for (name, needed) in dependent {
            undeclared.push(name.as_str());
            let Some(needed) = needed.as_array() else {
                self.err(
                    pointer,
                    "dependentRequired",
                    format!("{SHAPE}, found {} for {name:?}", kind(needed)),
                );
                continue;
            };
            for (i, n) in needed.iter().enumerate() {
                match n.as_str() {
                    Some(_) if needed[..i].contains(n) => self.err(
                        pointer,
                        "dependentRequired",
                        format!("lists {n} more than once for {name:?}; remove the repeat"),
                    ),
                    Some(n) => undeclared.push(n),
                    None => self.err(
                        pointer,
                        "dependentRequired",
                        format!("{SHAPE}, found {n} for {name:?}"),
                    ),
                }
            }
        }
        if let Some(declared) = declared {
            let mut reported = Vec::new();
            for n in undeclared {
                if !declared.contains_key(n) && !reported.contains(&n) {
                    reported.push(n);
                    self.err(
                        pointer,
                        "dependentRequired",
                        format!("names {n:?}, which `properties` does not declare: declare it (objects are closed), or remove it"),
                    );
                }
            }
        }
    }

    /// `allOf`: objects merged into one. The holder may say `"type": "object"` and declare
    /// properties and object rules of its own; each part is an inline object schema or a
    /// `$ref` to one (a base it extends). A property declared by two parts must be declared
    /// identically; every name `required` or `dependentRequired` lists must be declared by
    /// some part.
    fn all_of(&mut self, map: &Map<String, Value>, parts: &Value, pointer: &str) {
        for other in map
            .keys()
            .filter(|k| is_structural(k) && !MERGED.contains(&k.as_str()))
        {
            self.untyped(
                pointer,
                other,
                "not supported beside `allOf` in generated code, which merges the parts into one object: move it into the parts, or write the combined schema out as one",
            );
        }
        let mut merge = Merge::default();
        let doc = self.doc;
        self.merge(doc, map, pointer, None, &mut merge, 0);
        if !matches!(parts, Value::Array(p) if !p.is_empty()) {
            self.err(
                pointer,
                "allOf",
                "must be a non-empty array of object schemas",
            );
        }
        if !merge.typed && !merge.refused {
            self.untyped(
                pointer,
                "allOf",
                "no part says `\"type\": \"object\"`, so values of other types pass it too",
            );
        }
        let mut reported: Vec<&str> = Vec::new();
        for (i, (name, a)) in merge.declared.iter().enumerate() {
            for (other, b) in &merge.declared[..i] {
                let same = json_equal(&a.schema, &b.schema)
                    && (a.doc == b.doc || !a.schema.to_string().contains("\"$ref\""));
                if other == name && !same && !reported.contains(&name.as_str()) {
                    reported.push(name);
                    self.err(
                        pointer,
                        "allOf",
                        format!(
                            "property {name:?} is declared differently in {} and in {}: a merged object has one schema per property, so declare it once (or identically)",
                            b.location, a.location
                        ),
                    );
                }
            }
        }
        for (at, keyword, name) in &merge.named {
            if !merge.declared.iter().any(|(n, _)| n == name) {
                self.err(
                    at,
                    keyword,
                    format!("names {name:?}, which no part of the `allOf` declares in `properties`: declare it (the merged object is closed), or remove it"),
                );
            }
        }
    }

    /// Collects one schema of an `allOf` (the holder, an inline part, or a base reached through
    /// `$ref` from `via`, where its problems are reported) into `merge`, linting what is
    /// written in this file.
    fn merge(
        &mut self,
        doc: usize,
        map: &Map<String, Value>,
        pointer: &str,
        via: Option<&str>,
        merge: &mut Merge,
        depth: usize,
    ) {
        if depth > 32 {
            self.err(
                via.unwrap_or(pointer),
                "allOf",
                "its parts lead back to it through `$ref`s: an object cannot extend itself",
            );
            return;
        }
        let at = via.unwrap_or(pointer).to_owned();
        let file = self.docs.get(doc).file.clone();
        let holder = depth == 0;
        if let Some(reference) = map.get("$ref") {
            if via.is_none() {
                for other in map.keys().filter(|k| is_structural(k) && *k != "$ref") {
                    self.err(
                        pointer,
                        other,
                        "not supported beside `$ref` in an `allOf` part: move it into a part of its own",
                    );
                }
                self.reference(reference, pointer);
            }
            let Some(r) = reference.as_str() else { return };
            let Ok((target_doc, target_ptr, target)) = self.target(doc, r) else {
                return;
            };
            match target {
                Value::Object(target) => {
                    if let Some(why) = not_mergeable(&target) {
                        merge.refused = true;
                        self.untyped(
                            &at,
                            "$ref",
                            format!(
                                "{r:?} cannot be extended by `allOf` in generated code: it {why}"
                            ),
                        );
                        return;
                    }
                    self.merge(
                        target_doc,
                        &target,
                        &target_ptr,
                        Some(&at),
                        merge,
                        depth + 1,
                    );
                }
                other => self.untyped(
                    &at,
                    "$ref",
                    format!("{r:?} cannot be extended by `allOf` in generated code: it is {other}"),
                ),
            }
            return;
        }
        if via.is_none() {
            if holder && let Some(t) = map.get("type").filter(|t| *t != "object") {
                merge.refused = true;
                self.untyped(
                    pointer,
                    "type",
                    format!("generated code merges an `allOf` into one object, so its type can only be \"object\", found {t}"),
                );
            }
            if !holder {
                if let Some(why) = not_mergeable(map) {
                    merge.refused = true;
                    self.untyped(
                        pointer,
                        "",
                        format!("generated code types an `allOf` of objects only (merged into one struct), but this part {why}"),
                    );
                    return;
                }
                self.keywords(map, pointer, false);
            }
            self.values(map, pointer);
            self.object(map, pointer, false);
        }
        merge.typed |= map.get("type").is_some_and(|t| t == "object");
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, schema) in props {
                merge.declared.push((
                    name.clone(),
                    Declared {
                        doc,
                        schema: schema.clone(),
                        location: format!("{file}#{pointer}/properties/{}", pointer_token(name)),
                    },
                ));
            }
        }
        for name in map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = name.as_str() {
                merge.named.push((at.clone(), "required", n.to_owned()));
            }
        }
        if let Some(Value::Object(dependent)) = map.get("dependentRequired") {
            for (name, needed) in dependent {
                merge
                    .named
                    .push((at.clone(), "dependentRequired", name.clone()));
                for n in needed
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    merge
                        .named
                        .push((at.clone(), "dependentRequired", n.to_owned()));
                }
            }
        }
        if let Some(Value::Array(parts)) = map.get("allOf") {
            for (i, part) in parts.iter().enumerate() {
                let part_ptr = format!("{pointer}/allOf/{i}");
                match part {
                    Value::Object(part) => self.merge(doc, part, &part_ptr, via, merge, depth + 1),
                    other if via.is_none() => {
                        merge.refused = true;
                        self.untyped(
                            &part_ptr,
                            "",
                            format!("generated code types an `allOf` of objects only (merged into one struct), but this part is {}", kind(other)),
                        )
                    }
                    _ => {}
                }
            }
        }
    }

    /// `type`: one type name, or `[T, "null"]`.
    fn type_keyword(&mut self, map: &Map<String, Value>, pointer: &str) -> Type {
        let Some(ty) = map.get("type") else {
            return Type::Absent;
        };
        let names: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let valid_shape = match ty {
            Value::String(_) => true,
            Value::Array(items) => {
                items.len() == 2
                    && names.len() == 2
                    && names.contains(&"null")
                    && names[0] != names[1]
            }
            _ => false,
        };
        let distinct_names = names
            .iter()
            .enumerate()
            .all(|(i, n)| TYPES.contains(n) && !names[..i].contains(n));
        if !valid_shape
            && ty.is_array()
            && !names.is_empty()
            && names.len() == ty.as_array().map_or(0, Vec::len)
            && distinct_names
        {
            let scalar = names
                .iter()
                .all(|n| matches!(*n, "string" | "integer" | "number" | "boolean" | "null"));
            let overlap = names.contains(&"integer") && names.contains(&"number");
            if scalar && !overlap && names.iter().filter(|n| **n != "null").count() >= 2 {
                return Type::Scalars(names.iter().map(|n| (*n).to_owned()).collect());
            }
            self.untyped(
                pointer,
                "type",
                format!("generated code types one JSON type, [T, \"null\"], or scalar types none of which overlaps another (`integer` does `number`), found {ty}"),
            );
            return Type::Invalid;
        }
        if !valid_shape {
            self.err(
                pointer,
                "type",
                format!("must be one type name or [T, \"null\"] (a nullable T), found {ty}; for a choice between objects use `oneOf`"),
            );
            return Type::Invalid;
        }
        if let Some(unknown) = names.iter().find(|n| !TYPES.contains(n)) {
            let list = TYPES
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.err(
                pointer,
                "type",
                format!("unknown type {unknown:?}; the types are {list}"),
            );
            return Type::Invalid;
        }
        let nullable = names.len() == 2;
        let name = names
            .iter()
            .find(|n| **n != "null")
            .copied()
            .unwrap_or("null")
            .to_owned();
        Type::Valid { name, nullable }
    }

    fn reference(&mut self, reference: &Value, pointer: &str) {
        let Some(reference) = reference.as_str() else {
            self.err(pointer, "$ref", format!("must be a string such as \"#/$defs/Name\" or \"other.schema.json\", found {reference}"));
            return;
        };
        match self.target(self.doc, reference) {
            Ok((doc, ptr, _)) => {
                if let Some(cycle) = self.ref_cycle(pointer, doc, ptr) {
                    self.err(
                        pointer,
                        "$ref",
                        format!(
                            "{reference:?} leads back here through `$ref`s (and nullable `anyOf`s) only, so it never says what is admitted: {cycle}; make the chain end in a schema that is not a `$ref`"
                        ),
                    );
                }
            }
            Err(message) => self.err(pointer, "$ref", message),
        }
    }

    /// The schema a `$ref` written in document `from` names, loading its file if needed:
    /// its document, pointer and value.
    fn target(&mut self, from: usize, reference: &str) -> Result<(usize, String, Value), String> {
        let (doc, ptr) = self.docs.resolve(from, reference)?;
        let target = self.docs.get(doc);
        let def = ptr
            .strip_prefix("/$defs/")
            .filter(|name| !name.contains('/'));
        if ptr.is_empty() && !has_structure(&target.root) {
            return Err(format!(
                "{reference:?}: {} has no root schema, only `$defs` and annotations: reference one of its `$defs` entries (\"{}#/$defs/Name\")",
                target.file, target.file
            ));
        }
        if !ptr.is_empty() && def.is_none() {
            return Err(format!(
                "{reference:?} points inside a schema; only a file's root (\"other.schema.json\") or a `$defs` entry (\"#/$defs/Name\") may be referenced: move the schema into the root `$defs`"
            ));
        }
        match target.root.pointer(&ptr) {
            Some(value) => Ok((doc, ptr, value.clone())),
            None => {
                let name = def
                    .unwrap_or_default()
                    .replace("~1", "/")
                    .replace("~0", "~");
                let entries = match target.root.get("$defs").and_then(Value::as_object) {
                    Some(defs) if !defs.is_empty() => {
                        format!(
                            "its entries are {}",
                            defs.keys()
                                .map(|k| format!("{k:?}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                    _ => "it has no `$defs`".to_owned(),
                };
                Err(format!(
                    "{reference:?}: {} has no `$defs` entry {name:?} ({entries})",
                    target.file
                ))
            }
        }
    }

    /// Follows `$ref`s (a bounded number of hops) from document `doc` to the schema that says
    /// something, and the document it is in.
    fn follow(&mut self, doc: usize, schema: &Value) -> Option<(usize, Value)> {
        let mut current = (doc, schema.clone());
        for _ in 0..64 {
            match current.1.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let (d, _, v) = self.target(current.0, r).ok()?;
                    current = (d, v);
                }
                None => return Some(current),
            }
        }
        None
    }

    /// When the `$ref` at `start` (in this document), which names `(doc, ptr)`, leads back to
    /// itself through `$ref`s and nullable `anyOf`s only, the cycle as text.
    fn ref_cycle(&mut self, start: &str, mut doc: usize, mut ptr: String) -> Option<String> {
        let mut seen: Vec<(usize, String)> = Vec::new();
        loop {
            if doc == self.doc && ptr == start {
                let here = format!("{}#{start}", self.file);
                let mut path = vec![here.clone()];
                path.extend(
                    seen.iter()
                        .map(|(d, p)| format!("{}#{p}", self.docs.get(*d).file)),
                );
                path.push(here);
                return Some(path.join(" → "));
            }
            if seen.contains(&(doc, ptr.clone())) || seen.len() > 64 {
                return None;
            }
            seen.push((doc, ptr.clone()));
            let schema = self.docs.get(doc).root.pointer(&ptr)?.clone();
            if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
                (doc, ptr) = self.docs.resolve(doc, r).ok()?;
            } else if let Some(branches) = schema
                .get("anyOf")
                .and_then(Value::as_array)
                .filter(|b| b.len() == 2)
            {
                let i = branches.iter().position(|b| !is_null_schema(b))?;
                ptr = format!("{ptr}/anyOf/{i}");
            } else {
                return None;
            }
        }
    }

    fn is_union(&mut self, map: &Map<String, Value>, list: &[Value]) -> bool {
        let doc = self.doc;
        is_union(doc, map, list, |d, s| self.follow(d, s))
    }

    /// A `oneOf` / `anyOf` of JSON types: each branch takes values of one JSON type, its own.
    fn union(&mut self, list: &[Value], pointer: &str, keyword: &str) {
        let mut kinds: Vec<(usize, Kind)> = Vec::new();
        for (i, branch) in list.iter().enumerate() {
            let at = format!("{pointer}/{keyword}/{i}");
            self.node(branch, &at, false);
            let Some((doc, b)) = self.follow(self.doc, branch) else {
                continue; // reported where the `$ref` is
            };
            match union_kind(doc, &b, |d, s| self.follow(d, s)) {
                Ok(kind) => kinds.push((i, kind)),
                Err(why) => self.untyped(
                    &at,
                    keyword,
                    format!("codegen tells the branches of this `{keyword}` apart by JSON type, so each must take one type, but this one {why}"),
                ),
            }
        }
        // Several objects: told apart as a `oneOf` of objects is, by a property's `const`.
        let objects: Vec<(usize, Value)> = kinds
            .iter()
            .filter(|(_, k)| *k == Kind::Object)
            .filter_map(|(i, _)| self.follow(self.doc, &list[*i]))
            .collect();
        let tagged = objects.len() > 1
            && {
                let mut fine = true;
                for (at, (_, b)) in kinds
                    .iter()
                    .filter(|(_, k)| *k == Kind::Object)
                    .zip(&objects)
                {
                    if let Some(why) = not_a_closed_object(b) {
                        fine = false;
                        self.untyped(
                        &format!("{pointer}/{keyword}/{}", at.0),
                        keyword,
                        format!("the objects of a `{keyword}` of JSON types are told apart as a `oneOf` of objects is, so each must be a closed object (`\"type\": \"object\"` with `properties`), but this one {why}"),
                    );
                    }
                }
                if fine && let Err(why) = decider(&objects, |d, s| self.follow(d, s)) {
                    fine = false;
                    self.untyped(
                    pointer,
                    keyword,
                    format!("the branches that take objects (numbered among themselves below) cannot be told apart for certain: {why}"),
                );
                }
                fine
            };
        if objects.len() > 1 && !tagged {
            return;
        }
        for (n, (j, b)) in kinds.iter().enumerate() {
            let Some((i, a)) = kinds[..n]
                .iter()
                .find(|(_, a)| overlap(*a, *b) && !(*a == Kind::Object && tagged))
            else {
                continue;
            };
            let why = if a == b {
                format!("both take {}", plural(*a))
            } else {
                "an integral number is both an integer and a number".to_owned()
            };
            self.untyped(
                pointer,
                keyword,
                format!("branches {i} ({}) and {j} ({}) overlap: a value could match both and the generated reader could not tell which branch it is ({why}); give each branch its own JSON type, or for objects use a `oneOf` of closed objects told apart by a property with a string `const`", a.name(), b.name()),
            );
        }
    }

    fn any_of(&mut self, branches: &Value, pointer: &str) {
        const ONLY: &str = "only `\"anyOf\": [X, {\"type\": \"null\"}]` (a nullable X) is supported; for a choice between objects use `oneOf`";
        let Some(branches) = branches.as_array().filter(|b| b.len() == 2) else {
            self.err(pointer, "anyOf", ONLY);
            return;
        };
        if is_null_schema(&branches[0]) == is_null_schema(&branches[1]) {
            self.err(pointer, "anyOf", ONLY);
            return;
        }
        for (i, branch) in branches.iter().enumerate() {
            self.node(branch, &format!("{pointer}/anyOf/{i}"), false);
        }
    }

    fn one_of(&mut self, branches: &Value, pointer: &str) {
        let Some(branches) = branches.as_array().filter(|b| !b.is_empty()) else {
            self.err(
                pointer,
                "oneOf",
                "must be a non-empty array of object schemas",
            );
            return;
        };
        let mut resolved = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let at = format!("{pointer}/oneOf/{i}");
            self.node(branch, &at, false);
            // An unresolvable `$ref` is reported where it is written.
            if let Some((doc, b)) = self.follow(self.doc, branch) {
                match not_a_closed_object(&b) {
                    Some(why) => self.untyped(
                        &at,
                        "oneOf",
                        format!("generated code types a `oneOf` of closed objects (`\"type\": \"object\"` with `properties`), but this branch {why}"),
                    ),
                    None => resolved.push((doc, b)),
                }
            }
        }
        if resolved.len() < branches.len() {
            return;
        }
        if let Err(why) = decider(&resolved, |d, s| self.follow(d, s)) {
            self.untyped(pointer, "oneOf", why);
        }
    }
}

/// True when two union branches of these kinds could both take one value.
pub(crate) fn overlap(a: Kind, b: Kind) -> bool {
    a == b
        || matches!(
            (a, b),
            (Kind::Integer, Kind::Number) | (Kind::Number, Kind::Integer)
        )
}

/// `strings`, `integers`, …
fn plural(kind: Kind) -> String {
    match kind {
        Kind::Null => "null".to_owned(),
        Kind::Boolean => "booleans".to_owned(),
        other => format!("{}s", other.name()),
    }
}

/// True when a `oneOf` or `anyOf` (`list`, in `map`, in document `doc`) is a choice between
/// JSON types rather than between objects (`oneOf`) or a nullable value (`anyOf: [X, null]`):
/// one of its branches takes something other than objects.
pub(crate) fn is_union(
    doc: usize,
    map: &Map<String, Value>,
    list: &[Value],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> bool {
    if map.contains_key("oneOf") {
        list.iter().any(|b| {
            follow(doc, b).is_some_and(|(d, b)| {
                union_kind(d, &b, &mut follow).is_ok_and(|k| k != Kind::Object)
            })
        })
    } else {
        !(list.len() == 2 && is_null_schema(&list[0]) != is_null_schema(&list[1]))
    }
}

/// The one JSON type a resolved union branch (in document `doc`) takes, or why it has none:
/// its `type`, the type of its `const` / `enum` values, or an object for a `oneOf` of objects.
/// `follow` resolves a `$ref` from its document.
pub(crate) fn union_kind(
    doc: usize,
    branch: &Value,
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<Kind, String> {
    let Value::Object(map) = branch else {
        return Err(format!("is {branch}"));
    };
    let value_kind = |v: &Value| match v {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|x| x.fract() != 0.0) => {
            Kind::Number
        }
        Value::Number(_) => Kind::Integer,
        other => Kind::of_value(other).unwrap_or(Kind::Number),
    };
    match map.get("type") {
        Some(Value::String(t)) => return Kind::named(t).ok_or_else(|| format!("has type {t:?}")),
        Some(t) => return Err(format!("has several types ({t})")),
        None => {}
    }
    if let Some(c) = map.get("const") {
        return Ok(value_kind(c));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let kinds: Vec<Kind> = values.iter().map(value_kind).collect();
        return match kinds.split_first() {
            Some((first, rest)) if rest.iter().all(|k| k == first) => Ok(*first),
            _ => Err("is an `enum` of values of several types".to_owned()),
        };
    }
    if let Some(Value::Array(branches)) = map.get("oneOf")
        && branches.iter().all(|b| {
            follow(doc, b).is_some_and(|(_, b)| b.get("type").is_some_and(|t| t == "object"))
        })
    {
        return Ok(Kind::Object);
    }
    Err("declares no `type`".to_owned())
}

/// The keywords an `allOf` holder or part may have in generated code: an object's.
const MERGED: &[&str] = &[
    "type",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "allOf",
];

/// What the schemas of one `allOf` declare together.
#[derive(Default)]
struct Merge {
    /// Some schema says `"type": "object"`.
    typed: bool,
    /// Some part is not an object schema (reported).
    refused: bool,
    /// Every property declaration, in order.
    declared: Vec<(String, Declared)>,
    /// Names `required` or `dependentRequired` list: where (pointer in this file), which keyword.
    named: Vec<(String, &'static str, String)>,
}

struct Declared {
    doc: usize,
    schema: Value,
    /// `file#pointer`, for messages.
    location: String,
}

/// Why a schema cannot be a part of an `allOf` merged into one object, if it cannot.
fn not_mergeable(map: &Map<String, Value>) -> Option<String> {
    if let Some(t) = map.get("type").filter(|t| *t != "object") {
        return Some(format!("has type {t}"));
    }
    let k = map
        .keys()
        .find(|k| is_structural(k) && !MERGED.contains(&k.as_str()) && *k != "$ref")?;
    Some(match k.as_str() {
        "additionalProperties" => "sets `additionalProperties`, which would apply to this part alone (`false` forbids the other parts' properties): remove it, as the merged object is closed over all its parts".to_owned(),
        _ => format!("has `{k}`, which the merged struct cannot hold"),
    })
}

/// What `type` says.
enum Type {
    Absent,
    Invalid,
    Valid {
        name: String,
        nullable: bool,
    },
    /// Two or more of `string`, `integer` or `number`, `boolean` (and maybe `null`): a union
    /// of JSON types, each with the keywords that apply to it.
    Scalars(Vec<String>),
}

/// Why a resolved `oneOf` branch is not a closed object, if it is not.
fn not_a_closed_object(branch: &Value) -> Option<String> {
    let Value::Object(map) = branch else {
        return Some(format!("is {branch}"));
    };
    match map.get("type") {
        Some(t) if t == "object" => {}
        Some(t) => return Some(format!("has type {t}")),
        None => return Some("declares no `type`".to_owned()),
    }
    if let Some(k) = [
        "oneOf",
        "anyOf",
        "const",
        "enum",
        "allOf",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "patternProperties",
        "propertyNames",
    ]
    .into_iter()
    .find(|k| map.contains_key(*k))
    {
        return Some(match k {
            "allOf" => "is an `allOf`".to_owned(),
            "minProperties" | "maxProperties" | "dependentRequired" | "patternProperties"
            | "propertyNames" => format!("has `{k}`"),
            _ => format!("is a `{k}`"),
        });
    }
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => None,
        Some(_) => Some("is a map (`additionalProperties` is not `false`)".to_owned()),
    }
}

/// The discriminator of a `oneOf`'s resolved branches (each with the document it is in), with
/// each branch's tag, as a [`Decider`]: the first property that every branch either declares (required, with a
/// distinct string `const`) or leaves undeclared, the undeclared ones being at most one or,
/// when `mixed`, several told apart by their keys among themselves (their [`own_keys`]; empty
/// for the branches with a tag, and all empty without several undeclared). `follow` resolves a property schema's
/// `$ref`s from its document. Otherwise, why no property qualifies.
fn tagged_by(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
    mixed: bool,
) -> Result<Decider, String> {
    let candidates = declared_by_any(branches);
    let mut reasons = Vec::new();
    for name in candidates {
        let mut tags: Vec<Option<String>> = Vec::new();
        let mut plausible = false;
        // The empty key stands for "told apart by keys" (`decider` refuses it after the
        // first pass too).
        let mut problem = (mixed && name.is_empty())
            .then(|| "the empty key cannot be a discriminator".to_owned());
        for (i, (doc, branch)) in branches.iter().enumerate() {
            let Some(schema) = branch.get("properties").and_then(|p| p.get(name)) else {
                tags.push(None);
                continue;
            };
            let required = requires(branch, name);
            let tag = follow(*doc, schema)
                .and_then(|(_, s)| s.get("const").and_then(Value::as_str).map(str::to_owned));
            plausible |= tag.is_some();
            let found = match tag {
                None => Err(format!("branch {i} declares it without a string `const`")),
                Some(_) if !required => Err(format!("branch {i} does not list it in `required`")),
                Some(t) => match tags.iter().position(|u| u.as_deref() == Some(t.as_str())) {
                    Some(j) => Err(format!("branches {j} and {i} both have the `const` {t:?}")),
                    None => Ok(t),
                },
            };
            match found {
                Ok(t) => tags.push(Some(t)),
                Err(p) => {
                    problem.get_or_insert(p);
                    tags.push(None);
                }
            }
        }
        let mut keys = Vec::new();
        let problem = problem.or_else(|| {
            let undeclared: Vec<usize> =
                (0..branches.len()).filter(|i| tags[*i].is_none()).collect();
            if undeclared.len() < 2 {
                return None;
            }
            let listed = numbers(&undeclared);
            if !mixed {
                return Some(format!(
                    "branches {listed} do not declare it (only one branch may)"
                ));
            }
            let rest: Vec<(usize, &Value)> =
                undeclared.iter().map(|i| (*i, &branches[*i].1)).collect();
            match own_keys(&rest) {
                Ok(own) => {
                    keys = vec![Vec::new(); branches.len()];
                    for (i, own) in undeclared.into_iter().zip(own) {
                        keys[i] = own;
                    }
                    None
                }
                Err(refused) => {
                    let (who, verb) = match refused.as_slice() {
                        [one] => (format!("branch {one}"), "does"),
                        _ => (format!("branches {}", numbers(&refused)), "do"),
                    };
                    Some(format!(
                        "branches {listed} do not declare it, and not each of them requires a property no other of them declares ({who} {verb} not)"
                    ))
                }
            }
        });
        match problem {
            None => {
                return Ok(Decider {
                    properties: vec![name.clone()],
                    tags: tags
                        .into_iter()
                        .map(|t| t.map(|t| (0, vec![Value::String(t)])))
                        .collect(),
                    keys,
                    decision: None,
                });
            }
            Some(p) if plausible => reasons.push(format!("`{name}` does not qualify: {p}")),
            Some(_) => {}
        }
    }
    let rule = if mixed {
        "the branches must be told apart by one property that each branch declares, lists in `required` and gives a distinct string `const`, or leaves undeclared (one branch, or several that each require a property no other of them declares)"
    } else {
        "the branches must be told apart by one property that each branch declares, lists in `required` and gives a distinct string `const` (one branch may leave it undeclared)"
    };
    if reasons.is_empty() {
        Err(format!(
            "{rule}; no property has a string `const` in any branch"
        ))
    } else {
        Err(format!("{rule}; {}", reasons.join("; ")))
    }
}

/// The properties `branches` declare, each once, in schema order.
fn declared_by_any(branches: &[(usize, Value)]) -> Vec<&String> {
    let mut names: Vec<&String> = Vec::new();
    for (_, branch) in branches {
        for name in branch
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// True when `branch` lists `name` in `required`.
fn requires(branch: &Value, name: &str) -> bool {
    branch
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n == name))
}

/// `1 and 2`, `1, 2 and 3`: branch numbers, for messages.
fn numbers(list: &[usize]) -> String {
    let text: Vec<String> = list.iter().map(usize::to_string).collect();
    match text.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => text.concat(),
    }
}

/// Per branch (each with its number, for messages), the properties it alone of `branches`
/// declares, when each requires one of them; else the numbers of those that do not.
fn own_keys(branches: &[(usize, &Value)]) -> Result<Vec<Vec<String>>, Vec<usize>> {
    let declared = |b: &Value| -> Vec<String> {
        b.get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut keys = Vec::new();
    let mut problems = Vec::new();
    for (n, (i, branch)) in branches.iter().enumerate() {
        let own: Vec<String> = declared(branch)
            .into_iter()
            .filter(|k| {
                branches
                    .iter()
                    .enumerate()
                    .all(|(m, (_, other))| m == n || !declared(other).contains(k))
            })
            .collect();
        if !own.iter().any(|k| requires(branch, k)) {
            problems.push(*i);
        }
        keys.push(own);
    }
    if problems.is_empty() {
        Ok(keys)
    } else {
        Err(problems)
    }
}

/// How a `oneOf`'s resolved branches are told apart, tried in this order (each exact for
/// closed objects):
/// - by a discriminator: `properties` is that one property (each branch's tag, see
///   [`tagged_by`]; `keys` empty);
/// - by keys (`properties` empty): `keys` holds, per branch, the properties it alone declares,
///   at least one of them required, so the first of them a document has decides its branch
///   (the other branches, closed, refuse it);
/// - by both: a property the branches with a tag declare, require and give distinct string
///   `const`s, and several branches without a tag, which do not declare it, told apart among
///   themselves by their `keys` (empty for the branches with a tag). A document with the
///   property is one of the branches with a tag (the others, closed, refuse it), its tag
///   says which; one without is one of the others (the property is required by the rest),
///   and its keys say which;
/// - by several tag properties, or tags not all string `const`s ([`tag_groups`]): each
///   branch with a tag has it on one of `properties` (a string, integer or boolean `const`, or
///   an `enum` of such values, required, the values disjoint among the branches that declare
///   that property, which no other branch declares); the branches
///   without a tag are one, or several told apart by their `keys` as above. A document with
///   one tag property is one of that property's branches, its value says which; with tag
///   properties of two branches, no branch holds; with none, it is one of the others;
/// - by tests on their members, one after another ([`tested_by`]): `decision` (no
///   `properties`, tags or keys).
pub(crate) struct Decider {
    pub properties: Vec<String>,
    /// Per branch, its tag: the index of its property in `properties`, and its `const`, or
    /// the values of its `enum` (several values name the branch), in schema order (an integer
    /// is an `i64`).
    pub tags: Vec<Option<BranchTag>>,
    pub keys: Vec<Vec<String>>,
    /// Told apart by tests on their members ([`tested_by`]), with what names each branch.
    pub decision: Option<(Decision, Vec<Vec<Label>>)>,
}

/// A branch's tag: the index of its property among the [`Decider`]'s, and its values.
pub(crate) type BranchTag = (usize, Vec<Value>);

/// The [`Decider`] of a `oneOf`'s resolved branches, or why there is none.
pub(crate) fn decider(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<Decider, String> {
    match tagged_by(branches, &mut follow, false) {
        // The empty key stands for "told apart by keys", so it cannot be a discriminator.
        Ok(decider) if decider.properties.iter().all(|p| !p.is_empty()) => return Ok(decider),
        _ => {}
    }
    let numbered: Vec<(usize, &Value)> = branches.iter().map(|(_, b)| b).enumerate().collect();
    let problems: Vec<String> = match own_keys(&numbered) {
        Ok(keys) => {
            return Ok(Decider {
                properties: Vec::new(),
                tags: vec![None; branches.len()],
                keys,
                decision: None,
            });
        }
        Err(refused) => refused
            .iter()
            .map(|i| format!("branch {i} requires no property that only it declares"))
            .collect(),
    };
    let tagged = match tagged_by(branches, &mut follow, true) {
        Ok(decider) => return Ok(decider),
        Err(why) => why,
    };
    let several = match tag_groups(branches, &mut follow) {
        Ok(decider) => return Ok(decider),
        Err(None) => String::new(),
        Err(Some(why)) => format!(
            "; nor by tag properties (each branch with a tag has it on one property, which only branches that list it in `required` with a distinct string, integer or boolean `const`, or an `enum` of such values no other of them gives, declare; the branches without one are one, or several that each require a property no other of them declares): {why}"
        ),
    };
    let typed = match tested_by(branches, &mut follow) {
        Ok((decision, labels)) => {
            return Ok(Decider {
                properties: Vec::new(),
                tags: vec![None; branches.len()],
                keys: Vec::new(),
                decision: Some((decision, labels)),
            });
        }
        Err(None) => String::new(),
        Err(Some(why)) => format!(
            "; nor by tests of their members one after another (a tag, a member's JSON type or a key, each outcome of which leaves fewer of the branches that can hold: a closed branch refuses a member it does not declare, and an object without one it requires; `integer` and `number` overlap): {why}"
        ),
    };
    Err(format!(
        "{tagged}; nor are they told apart by their keys (each branch must require a property no other branch declares): {}{several}{typed}",
        problems.join("; ")
    ))
}

/// The JSON types a (followed) property schema's `type` names (`[T, "null"]` is T and null),
/// or `None` without a `type` (or with a name that is none).
fn type_kinds(schema: &Value) -> Option<Vec<Kind>> {
    let names: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    let mut kinds = Vec::new();
    for name in names {
        let kind = Kind::named(name)?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// What [`tested_by`] knows of a branch's property: its name, whether the branch requires
/// it, the JSON types of the values it takes (`None`: any; an `integer` takes integral
/// numbers, a `number` those and the others) and its tags (`None`: any value).
struct Known {
    name: String,
    required: bool,
    /// The types as written (for messages and names), and the value kinds they take.
    kinds: Option<(Vec<Kind>, Vec<Kind>)>,
    tags: Option<Vec<Value>>,
}

/// The kinds of values, as a [`Test::Type`] groups them (`Integer` integral numbers,
/// `Number` the others).
const VALUE_KINDS: [Kind; 7] = [
    Kind::Null,
    Kind::Boolean,
    Kind::Integer,
    Kind::Number,
    Kind::String,
    Kind::Array,
    Kind::Object,
];

/// What names a branch told apart by tests: the outcomes on the way to it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Label {
    /// Its JSON type for the member a test reads (the first its `type` names).
    Kind(Kind),
    /// Its tag (the first, for an `enum`).
    Tag(Value),
    /// The member whose presence chose it.
    Key(String),
}

/// What the outcome of a test on the way to a branch names of it ([`Tests::labels`]).
#[derive(Debug, Clone, Copy)]
enum Named {
    Key,
    Kind,
    Tag,
}

/// How many tests [`tested_by`] tries at most (the same branches may be under several
/// outcomes, and a choice that leaves some not told apart is undone).
const TESTS_TRIED: usize = 4096;

/// The [`Decision`] of branches told apart by tests on their members, one after another
/// ([`Tests::split`]), and what names each branch. Otherwise why not, when something splits the
/// branches or some property every branch requires has a `type` in each (`None` when not:
/// nothing to say beyond the other rules' reasons).
fn tested_by(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<(Decision, Vec<Vec<Label>>), Option<String>> {
    let known = branches
        .iter()
        .map(|(doc, branch)| {
            let properties = branch.get("properties").and_then(Value::as_object);
            properties
                .into_iter()
                .flatten()
                .map(|(name, schema)| {
                    let followed = follow(*doc, schema).map_or(Value::Null, |(_, s)| s);
                    let kinds = type_kinds(&followed).map(|written| {
                        let takes = VALUE_KINDS
                            .into_iter()
                            .filter(|v| written.iter().any(|w| takes(*w, *v)))
                            .collect();
                        (written, takes)
                    });
                    Known {
                        name: name.clone(),
                        required: requires(branch, name),
                        kinds,
                        tags: tags_of(&followed).and_then(Result::ok),
                    }
                })
                .collect()
        })
        .collect();
    let mut tests = Tests {
        known,
        decision: Decision {
            members: Vec::new(),
            tests: Vec::new(),
        },
        stuck: None,
        tried: 0,
        failed: Default::default(),
    };
    let all: Vec<usize> = (0..branches.len()).collect();
    if tests.split(&all).is_ok() {
        let labels = tests.labels();
        return Ok((tests.decision, labels));
    }
    if tests.tried > TESTS_TRIED {
        return Err(Some(format!(
            "more than {TESTS_TRIED} tests tried without telling them apart"
        )));
    }
    match tests.stuck {
        Some((set, reasons)) if set != all => {
            let mut why = format!("no test tells branches {} apart", numbers(&set));
            for r in reasons {
                why.push_str("; ");
                why.push_str(&r);
            }
            Err(Some(why))
        }
        Some((_, reasons)) if !reasons.is_empty() => Err(Some(reasons.join("; "))),
        _ => Err(None),
    }
}

/// True when a value of kind `value` ([`VALUE_KINDS`]) has `type` `written`.
fn takes(written: Kind, value: Kind) -> bool {
    written == value || (written == Kind::Number && value == Kind::Integer)
}

/// A [`Decision`] being built over the branches' [`Known`] properties.
struct Tests {
    known: Vec<Vec<Known>>,
    decision: Decision,
    /// The smallest set of branches no test split, and why the types of the properties all
    /// of them require do not.
    stuck: Option<(Vec<usize>, Vec<String>)>,
    /// Tests tried so far.
    tried: usize,
    /// The sets of branches no test tells apart (whatever led to them).
    failed: std::collections::HashSet<Vec<usize>>,
}

/// What a test on one member leads to: the branches that can still hold after each outcome
/// (empty: none can, which is reported).
struct Outcomes<T> {
    /// The member absent: the branches that do not require it.
    absent: Vec<usize>,
    /// Present, by its value: `(values, branches)`, the values being value kinds
    /// ([`Test::Type`]) or tags ([`Test::Tag`]); empty for [`Test::Has`].
    values: Vec<(Vec<T>, Vec<usize>)>,
    /// Present, of no value listed (any value, for [`Test::Has`]).
    other: Vec<usize>,
}

impl Tests {
    /// The test that tells the branches of `set` apart, added with those after it: the first
    /// whose outcomes each leave fewer branches than `set` (an outcome leaves the branches that
    /// can still hold: a branch refuses a member it does not declare, for it is closed, and an
    /// object without one it requires), of
    /// - a tag: a member some branches give a `const` or an `enum` of strings, integers or
    ///   booleans (each value leaves the branches that give it, and those that declare the
    ///   member without a tag);
    /// - a member's JSON type, which some branches give a `type` (each type of value leaves
    ///   the branches that declare the member with that type or none; an integral number is
    ///   an `integer` and a `number`);
    /// - a key some branches of `set` do not declare (present, it leaves those that do);
    ///
    /// each in schema order, the branches of each outcome told apart in turn (a choice that
    /// leaves some not told apart is undone, and the next tried). Otherwise `Err`.
    fn split(&mut self, set: &[usize]) -> Result<usize, ()> {
        if let [one] = set {
            return Ok(self.push(Test::Branch(*one)));
        }
        if self.failed.contains(set) {
            return Err(());
        }
        let mut names: Vec<String> = Vec::new();
        for b in set {
            for known in &self.known[*b] {
                if !names.contains(&known.name) {
                    names.push(known.name.clone());
                }
            }
        }
        let mut reasons = Vec::new();
        for name in &names {
            if let Some(outcomes) = self.by_tag(set, name) {
                let tried = self.try_test(set, name, outcomes, |member, tags, other, absent| {
                    Test::Tag {
                        member,
                        tags,
                        other,
                        absent,
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        for name in &names {
            if let Some((outcomes, expected)) = self.by_type(set, name, &mut reasons) {
                let tried = self.try_test(set, name, outcomes, |member, groups, _, absent| {
                    Test::Type {
                        member,
                        groups,
                        expected,
                        absent,
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        for name in &names {
            if let Some(outcomes) = self.by_key(set, name) {
                let tried = self.try_test(set, name, outcomes, |member, _, then, otherwise| {
                    Test::Has {
                        member,
                        then: then.expect("a key some branch declares"),
                        otherwise: otherwise.expect("a key some branch does not declare"),
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        if self.stuck.as_ref().is_none_or(|(s, _)| s.len() > set.len()) {
            self.stuck = Some((set.to_vec(), reasons));
        }
        self.failed.insert(set.to_vec());
        Err(())
    }

    /// Adds the test `make` builds on member `name` (from its index, each value's next test, the
    /// next tests of a value listed of none and of its absence, `None` where no branch can hold)
    /// when its `outcomes` each leave fewer branches than `set`, and the branches of each are
    /// told apart in turn. `None` when not (undone), or the test when it is (`Err` when too
    /// many were tried).
    fn try_test<T: Clone>(
        &mut self,
        set: &[usize],
        name: &str,
        outcomes: Outcomes<T>,
        make: impl FnOnce(usize, Vec<(Vec<T>, usize)>, Option<usize>, Option<usize>) -> Test,
    ) -> Option<Result<usize, ()>> {
        let sets: Vec<&Vec<usize>> = std::iter::once(&outcomes.absent)
            .chain(outcomes.values.iter().map(|(_, b)| b))
            .chain(std::iter::once(&outcomes.other))
            .collect();
        if sets.iter().any(|b| b.len() == set.len()) {
            return None;
        }
        self.tried += 1;
        if self.tried > TESTS_TRIED {
            return Some(Err(()));
        }
        let saved = self.save();
        let at = self.push(Test::Branch(usize::MAX));
        let member = self.member(name);
        // Each distinct set of branches is told apart once.
        let mut done: Vec<(&Vec<usize>, Option<usize>)> = Vec::new();
        for branches in sets {
            if done.iter().any(|(b, _)| *b == branches) {
                continue;
            }
            let next = match branches.as_slice() {
                [] => None,
                _ => match self.split(branches) {
                    Ok(next) => Some(next),
                    Err(()) => {
                        self.restore(saved);
                        return (self.tried > TESTS_TRIED).then_some(Err(()));
                    }
                },
            };
            done.push((branches, next));
        }
        let next = |branches: &Vec<usize>| {
            done.iter()
                .find(|(b, _)| *b == branches)
                .and_then(|(_, n)| *n)
        };
        let values = outcomes
            .values
            .iter()
            .filter_map(|(values, branches)| Some((values.clone(), next(branches)?)))
            .collect();
        self.decision.tests[at] = make(
            member,
            values,
            next(&outcomes.other),
            next(&outcomes.absent),
        );
        Some(Ok(at))
    }

    /// A tag test on `name`, when some branch of `set` gives it tags.
    fn by_tag(&self, set: &[usize], name: &str) -> Option<Outcomes<Value>> {
        let declaring = self.declaring(set, name);
        let any: Vec<usize> = declaring
            .iter()
            .copied()
            .filter(|b| self.property(*b, name).is_some_and(|k| k.tags.is_none()))
            .collect();
        let mut tags: Vec<&Value> = Vec::new();
        for b in &declaring {
            for t in self
                .property(*b, name)
                .and_then(|k| k.tags.as_ref())
                .into_iter()
                .flatten()
            {
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        if tags.is_empty() {
            return None;
        }
        let mut values: Vec<(Vec<Value>, Vec<usize>)> = Vec::new();
        for t in tags {
            let branches: Vec<usize> = declaring
                .iter()
                .copied()
                .filter(|b| {
                    let known = self.property(*b, name);
                    known.is_some_and(|k| k.tags.as_ref().is_none_or(|u| u.contains(t)))
                })
                .collect();
            group(&mut values, t.clone(), branches);
        }
        Some(Outcomes {
            absent: self.not_requiring(set, name),
            values,
            other: any,
        })
    }

    /// A type test on `name`, when some branch of `set` gives it a `type`, and the types
    /// written (what a value of none is told is expected); why it does not split `set` into
    /// `reasons` when every branch requires it with one.
    fn by_type(
        &self,
        set: &[usize],
        name: &str,
        reasons: &mut Vec<String>,
    ) -> Option<(Outcomes<Kind>, Vec<Kind>)> {
        let declaring = self.declaring(set, name);
        if declaring
            .iter()
            .all(|b| self.property(*b, name).is_some_and(|k| k.kinds.is_none()))
        {
            return None;
        }
        let mut values: Vec<(Vec<Kind>, Vec<usize>)> = Vec::new();
        for v in VALUE_KINDS {
            let branches: Vec<usize> = declaring
                .iter()
                .copied()
                .filter(|b| {
                    let known = self.property(*b, name);
                    known.is_some_and(|k| k.kinds.as_ref().is_none_or(|(_, t)| t.contains(&v)))
                })
                .collect();
            if !branches.is_empty() {
                group(&mut values, v, branches);
            }
        }
        // In schema order, by their first branch.
        values.sort_by_key(|(_, branches)| branches[0]);
        let outcomes = Outcomes {
            absent: self.not_requiring(set, name),
            values,
            other: Vec::new(),
        };
        let written: Option<Vec<Vec<Kind>>> = set
            .iter()
            .map(|b| {
                let k = self.property(*b, name)?;
                Some(k.kinds.as_ref()?.0.clone()).filter(|_| k.required)
            })
            .collect();
        if let Some(written) = &written
            && outcomes.values.iter().any(|(_, b)| b.len() == set.len())
        {
            reasons.push(overlap_reason(name, set, written));
        }
        let mut expected: Vec<Kind> = Vec::new();
        for b in &declaring {
            let written = self.property(*b, name).and_then(|k| k.kinds.as_ref());
            for w in written.into_iter().flat_map(|(w, _)| w) {
                if !expected.contains(w) {
                    expected.push(*w);
                }
            }
        }
        Some((outcomes, expected))
    }

    /// A key test on `name`, when some branch of `set` does not declare it.
    fn by_key(&self, set: &[usize], name: &str) -> Option<Outcomes<()>> {
        let declaring = self.declaring(set, name);
        (declaring.len() < set.len()).then(|| Outcomes {
            absent: self.not_requiring(set, name),
            values: Vec::new(),
            other: declaring,
        })
    }

    /// The branches of `set` that declare `name`.
    fn declaring(&self, set: &[usize], name: &str) -> Vec<usize> {
        set.iter()
            .copied()
            .filter(|b| self.property(*b, name).is_some())
            .collect()
    }

    /// The branches of `set` that do not require `name`.
    fn not_requiring(&self, set: &[usize], name: &str) -> Vec<usize> {
        set.iter()
            .copied()
            .filter(|b| self.property(*b, name).is_none_or(|k| !k.required))
            .collect()
    }

    /// What branch `b` knows of property `name`, when it declares it.
    fn property(&self, b: usize, name: &str) -> Option<&Known> {
        self.known[b].iter().find(|k| k.name == name)
    }

    /// What names each branch: the outcomes on the way to the first test that chooses it,
    /// from the top, as its own schema gives them (its first type for a type test of several
    /// groups, its first tag for a tag, else the key it has; an absence says nothing).
    fn labels(&self) -> Vec<Vec<Label>> {
        let mut labels: Vec<Option<Vec<Label>>> = vec![None; self.known.len()];
        // The tests on the way: (member, what the outcome names).
        let mut stack: Vec<(usize, Vec<(usize, Named)>)> = vec![(0, Vec::new())];
        while let Some((at, path)) = stack.pop() {
            let with = |member: usize, named: Named| {
                let mut path = path.clone();
                path.push((member, named));
                path
            };
            let mut next: Vec<(usize, Vec<(usize, Named)>)> = Vec::new();
            match &self.decision.tests[at] {
                Test::Branch(b) => {
                    labels[*b].get_or_insert_with(|| {
                        path.iter()
                            .map(|(m, named)| self.label(*b, &self.decision.members[*m], *named))
                            .collect()
                    });
                }
                Test::Has {
                    member,
                    then,
                    otherwise,
                } => {
                    next.push((*then, with(*member, Named::Key)));
                    next.push((*otherwise, path.clone()));
                }
                Test::Type {
                    member,
                    groups,
                    absent,
                    ..
                } => {
                    let named = if groups.len() > 1 {
                        Named::Kind
                    } else {
                        Named::Key
                    };
                    next.extend(groups.iter().map(|(_, n)| (*n, with(*member, named))));
                    next.extend(absent.map(|n| (n, path.clone())));
                }
                Test::Tag {
                    member,
                    tags,
                    other,
                    absent,
                } => {
                    next.extend(tags.iter().map(|(_, n)| (*n, with(*member, Named::Tag))));
                    next.extend(other.map(|n| (n, with(*member, Named::Key))));
                    next.extend(absent.map(|n| (n, path.clone())));
                }
            }
            // Depth first, in order.
            stack.extend(next.into_iter().rev());
        }
        labels.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// What member `name` says of branch `b`'s name, as a test's outcome `named` it.
    fn label(&self, b: usize, name: &str, named: Named) -> Label {
        let known = self.property(b, name);
        match (
            named,
            known.and_then(|k| k.tags.as_ref()),
            known.and_then(|k| k.kinds.as_ref()),
        ) {
            (Named::Tag, Some(tags), _) => Label::Tag(tags[0].clone()),
            (Named::Kind, _, Some((written, _))) => Label::Kind(written[0]),
            _ => Label::Key(name.to_owned()),
        }
    }

    fn push(&mut self, test: Test) -> usize {
        self.decision.tests.push(test);
        self.decision.tests.len() - 1
    }

    /// The index of member `name`, added when new.
    fn member(&mut self, name: &str) -> usize {
        let members = &mut self.decision.members;
        members.iter().position(|m| m == name).unwrap_or_else(|| {
            members.push(name.to_owned());
            members.len() - 1
        })
    }

    fn save(&self) -> (usize, usize) {
        (self.decision.tests.len(), self.decision.members.len())
    }

    /// Undoes what was added since [`save`](Self::save).
    fn restore(&mut self, (tests, members): (usize, usize)) {
        self.decision.tests.truncate(tests);
        self.decision.members.truncate(members);
    }
}

/// Adds `value` to the group of `values` that leaves `branches`, or a new group.
fn group<T>(values: &mut Vec<(Vec<T>, Vec<usize>)>, value: T, branches: Vec<usize>) {
    match values.iter_mut().find(|(_, b)| *b == branches) {
        Some((v, _)) => v.push(value),
        None => values.push((vec![value], branches)),
    }
}

/// Why property `name`'s types (`kinds`, per branch of `set`) do not split `set`: the first two
/// branches whose types overlap.
fn overlap_reason(name: &str, set: &[usize], kinds: &[Vec<Kind>]) -> String {
    for j in 0..kinds.len() {
        for i in 0..j {
            for a in &kinds[i] {
                if let Some(b) = kinds[j].iter().find(|b| overlap(*a, **b)) {
                    let (i, j) = (set[i], set[j]);
                    return if a == b {
                        format!("`{name}`: branches {i} and {j} both take {}", plural(*a))
                    } else {
                        format!(
                            "`{name}`: branches {i} ({}) and {j} ({}) overlap (an integral number is both an integer and a number)",
                            a.name(),
                            b.name()
                        )
                    };
                }
            }
        }
    }
    format!("`{name}`: its types do not tell the branches apart")
}

/// A tag: a string, a boolean or an integer (as an `i64`; `1.0` is `1`), or `None`.
fn tag_value(v: &Value) -> Option<Value> {
    Some(match crate::check::TagValue::of(v)? {
        crate::check::TagValue::Str(s) => Value::from(s),
        crate::check::TagValue::Int(i) => Value::from(i),
        crate::check::TagValue::Bool(b) => Value::from(b),
    })
}

/// The tags a property's (followed) schema gives its branch: its `const`, or the values of
/// its `enum` (in schema order, each once). `None` when it has neither; an error (what the
/// branch does, for a message) when its `enum` is no tag: a value that is not a string, an
/// integer or a boolean, a `type` that refuses one, or a keyword beside it other than `type`
/// and annotations (the tag is read as its value alone).
fn tags_of(schema: &Value) -> Option<Result<Vec<Value>, String>> {
    if let Some(c) = schema.get("const") {
        return tag_value(c).map(|t| Ok(vec![t]));
    }
    let values = schema.get("enum")?.as_array()?;
    let why = |what: String| Some(Err(format!("gives it an `enum` {what}")));
    if values.is_empty() {
        return why("with no value".into());
    }
    if let Some(k) = schema
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .find(|k| !matches!(k.as_str(), "enum" | "type") && !is_annotation(k))
    {
        return why(format!("with `{k}` beside it"));
    }
    let mut tags: Vec<Value> = Vec::new();
    for v in values {
        let Some(t) = tag_value(v) else {
            return why(format!(
                "with {v}, which is not a string, an integer or a boolean"
            ));
        };
        let types: Vec<&str> = match schema.get("type") {
            None => Vec::new(),
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            Some(_) => vec![""],
        };
        if !types.is_empty() && !types.iter().any(|ty| value_has_type(v, ty, false)) {
            return why(format!("with {v}, which its `type` refuses"));
        }
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    Some(Ok(tags))
}

/// True when `schema` (followed) gives its tags by an `enum`.
fn has_enum(schema: &Value) -> bool {
    schema.get("enum").is_some() && schema.get("const").is_none()
}

/// A tag property and its branches, each with its tags.
type Group<'a> = (&'a String, Vec<(usize, Vec<Value>)>);

/// The [`Decider`] of branches tagged on several properties, or with tags that are not all
/// strings, or given by `enum`s: each property some branch gives a tag `const` or an `enum` of
/// tags ([`tags_of`]) qualifies when every branch that declares it requires it with tags no
/// other of them gives (its group); the groups are taken largest
/// first, then in schema order, each only when none of its branches is in a group already.
/// The branches in no group are one, or several told apart by their [`own_keys`]. Otherwise
/// why not, when there is something to say beyond [`tagged_by`]'s reasons (a tag that is not
/// a string, an `enum`, or several properties with tags of which some qualify); `None` when
/// not.
fn tag_groups(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<Decider, Option<String>> {
    let candidates = declared_by_any(branches);
    let mut reasons = Vec::new();
    // (property, its branches with their tags), in schema order.
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut plausible_properties = 0usize;
    let mut not_strings = false;
    let mut enums = false;
    // The empty key stands for "told apart by keys" elsewhere: never a tag.
    for name in candidates.into_iter().filter(|n| !n.is_empty()) {
        let mut members: Vec<(usize, Vec<Value>)> = Vec::new();
        let mut plausible = false;
        let mut problem = None;
        for (i, (doc, branch)) in branches.iter().enumerate() {
            let Some(schema) = branch.get("properties").and_then(|p| p.get(name)) else {
                continue;
            };
            let required = requires(branch, name);
            let followed = follow(*doc, schema).map(|(_, s)| s);
            let tag = followed.as_ref().and_then(tags_of);
            plausible |= tag.as_ref().is_some_and(|t| t.is_ok());
            not_strings |= tag
                .as_ref()
                .and_then(|t| t.as_ref().ok())
                .is_some_and(|t| t.iter().any(|t| !t.is_string()));
            enums |= tag.is_some() && followed.as_ref().is_some_and(has_enum);
            let found = match tag {
                None => Err(format!(
                    "branch {i} declares it without a string, integer or boolean `const`"
                )),
                Some(Err(why)) => Err(format!("branch {i} {why}")),
                Some(_) if !required => Err(format!("branch {i} does not list it in `required`")),
                Some(Ok(t)) => match members
                    .iter()
                    .find_map(|(j, u)| t.iter().find(|v| u.contains(v)).map(|v| (j, v)))
                {
                    Some((j, v))
                        if t.len() == 1 && members[..].iter().all(|(_, u)| u.len() == 1) =>
                    {
                        Err(format!("branches {j} and {i} both have the `const` {v}"))
                    }
                    Some((j, v)) => Err(format!("branches {j} and {i} both have the tag {v}")),
                    None => Ok(t),
                },
            };
            match found {
                Ok(t) => members.push((i, t)),
                Err(p) => {
                    problem.get_or_insert(p);
                }
            }
        }
        if !plausible {
            continue;
        }
        plausible_properties += 1;
        match problem {
            Some(p) => reasons.push(format!("`{name}` is no tag: {p}")),
            None => groups.push((name, members)),
        }
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|g| std::cmp::Reverse(groups[*g].1.len()));
    let mut group_of: Vec<Option<usize>> = vec![None; branches.len()];
    let mut chosen = Vec::new();
    for g in order {
        match groups[g]
            .1
            .iter()
            .find_map(|(i, _)| group_of[*i].map(|h| (*i, h)))
        {
            Some((i, h)) => reasons.push(format!(
                "`{}` is no tag: branch {i} has its tag on `{}`",
                groups[g].0, groups[h].0
            )),
            None => {
                for (i, _) in &groups[g].1 {
                    group_of[*i] = Some(g);
                }
                chosen.push(g);
            }
        }
    }
    chosen.sort_unstable();
    // Without a tag that is not a string, and with no property that qualifies, [`tagged_by`]
    // said it all.
    let relevant = not_strings || enums || (!chosen.is_empty() && plausible_properties > 1);
    let why = |reasons: &[String], last: &str| {
        let mut all = reasons.to_vec();
        if !last.is_empty() {
            all.push(last.to_owned());
        }
        relevant.then(|| all.join("; "))
    };
    if chosen.is_empty() {
        return Err(why(&reasons, "no property qualifies"));
    }
    let mut tags: Vec<Option<BranchTag>> = vec![None; branches.len()];
    for (p, g) in chosen.iter().enumerate() {
        for (i, t) in &groups[*g].1 {
            tags[*i] = Some((p, t.clone()));
        }
    }
    let untagged: Vec<usize> = (0..branches.len()).filter(|i| tags[*i].is_none()).collect();
    let mut keys = Vec::new();
    if untagged.len() > 1 {
        let rest: Vec<(usize, &Value)> = untagged.iter().map(|i| (*i, &branches[*i].1)).collect();
        match own_keys(&rest) {
            Ok(own) => {
                keys = vec![Vec::new(); branches.len()];
                for (i, own) in untagged.iter().zip(own) {
                    keys[*i] = own;
                }
            }
            Err(refused) => {
                let (who, verb) = match refused.as_slice() {
                    [one] => (format!("branch {one}"), "does"),
                    _ => (format!("branches {}", numbers(&refused)), "do"),
                };
                let last = format!(
                    "branches {} have no tag, and not each of them requires a property no other of them declares ({who} {verb} not)",
                    numbers(&untagged)
                );
                return Err(why(&reasons, &last));
            }
        }
    }
    Ok(Decider {
        properties: chosen.iter().map(|g| groups[*g].0.clone()).collect(),
        tags,
        keys,
        decision: None,
    })
}

/// A nullable `anyOf`'s null branch.
fn is_null_schema(v: &Value) -> bool {
    v.get("type").is_some_and(|t| t == "null")
}

fn value_has_type(v: &Value, ty: &str, nullable: bool) -> bool {
    (nullable && v.is_null())
        || match ty {
            "string" => v.is_string(),
            "integer" => v.as_f64().is_some_and(|x| x.fract() == 0.0),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            _ => false,
        }
}

fn type_text(name: &str, nullable: bool) -> String {
    if nullable {
        format!("[\"{name}\", \"null\"]")
    } else {
        format!("\"{name}\"")
    }
}

/// `a string "x"`, `an array`, …: what a JSON value is, for messages.
fn kind(v: &Value) -> String {
    match v {
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Null => "null".to_owned(),
        other => format!("{} {other}", crate::check::type_name(other)),
    }
}
