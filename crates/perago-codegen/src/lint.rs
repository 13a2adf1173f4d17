//! The supported subset, checked before anything is built: every keyword outside it, and every
//! combination perago cannot honour, is an error naming the file, the JSON Pointer and the
//! keyword. Nothing is silently ignored.

use crate::error::LintError;
use crate::load::{Documents, pointer_token};
use perago_ir::check::Pattern;
use serde_json::{Map, Value};

/// The dialect every root must declare.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

const ANNOTATIONS: &[&str] = &["title", "description", "default", "examples", "$comment"];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern"];
const NUMBER_KEYWORDS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
const ARRAY_KEYWORDS: &[&str] = &["items", "minItems", "maxItems"];
const OBJECT_KEYWORDS: &[&str] = &["properties", "required", "additionalProperties"];
const TYPES: &[&str] = &["string", "integer", "number", "boolean", "null", "object", "array"];

/// Lints every loaded document (loading the files their `$ref`s name as it goes).
pub(crate) fn lint(docs: &mut Documents) -> Vec<LintError> {
    let mut errors = Vec::new();
    let mut i = 0;
    while i < docs.docs.len() {
        let root = docs.get(i).root.clone();
        let file = docs.get(i).file.clone();
        let mut linter = Linter { docs, doc: i, file: &file, errors: &mut errors };
        linter.root(&root);
        i += 1;
    }
    errors
}

struct Linter<'a> {
    docs: &'a mut Documents,
    doc: usize,
    file: &'a str,
    errors: &'a mut Vec<LintError>,
}

impl Linter<'_> {
    fn err(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        self.errors.push(LintError::new(self.file, pointer, keyword, message));
    }

    fn root(&mut self, root: &Value) {
        let Value::Object(map) = root else {
            self.err("", "", "a schema file must hold a JSON object");
            return;
        };
        match map.get("$schema") {
            Some(Value::String(s)) if s.trim_end_matches('#') == DIALECT => {}
            Some(other) => self.err("", "$schema", format!("must be {DIALECT:?} (the supported subset is JSON Schema 2020-12), found {other}")),
            None => self.err("", "$schema", format!("missing: declare \"$schema\": {DIALECT:?}")),
        }
        if let Some(id) = map.get("$id")
            && !id.as_str().is_some_and(|s| s.contains(':') && !s.contains('#'))
        {
            self.err("", "$id", format!("must be an absolute URI without a fragment, found {id}"));
        }
        self.node(root, "", true);
    }

    /// Lints one schema node at `pointer`.
    fn node(&mut self, node: &Value, pointer: &str, is_root: bool) {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.err(pointer, "false", "the `false` schema is only supported as `additionalProperties: false`");
                return;
            }
            other => {
                self.err(pointer, "", format!("a schema must be an object, found {other}"));
                return;
            }
        };
        for (keyword, value) in map {
            let known = ANNOTATIONS.contains(&keyword.as_str())
                || STRING_KEYWORDS.contains(&keyword.as_str())
                || NUMBER_KEYWORDS.contains(&keyword.as_str())
                || ARRAY_KEYWORDS.contains(&keyword.as_str())
                || OBJECT_KEYWORDS.contains(&keyword.as_str())
                || matches!(keyword.as_str(), "type" | "enum" | "const" | "$ref" | "$defs" | "oneOf" | "anyOf");
            let root_only = matches!(keyword.as_str(), "$schema" | "$id");
            if root_only && !is_root {
                self.err(pointer, keyword, "only allowed at the root of a schema file");
            } else if !known && !root_only {
                self.err(pointer, keyword, "not in perago's supported subset of JSON Schema");
            }
            if keyword == "examples" && !value.is_array() {
                self.err(pointer, keyword, "must be an array");
            }
            if matches!(keyword.as_str(), "title" | "description" | "$comment") && !value.is_string() {
                self.err(pointer, keyword, "must be a string");
            }
        }
        if let Some(defs) = map.get("$defs") {
            match defs {
                Value::Object(defs) => {
                    for (name, def) in defs {
                        self.node(def, &format!("{pointer}/$defs/{}", pointer_token(name)), false);
                    }
                }
                _ => self.err(pointer, "$defs", "must be an object of schemas"),
            }
        }

        let structural: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !ANNOTATIONS.contains(k) && !matches!(*k, "$schema" | "$id" | "$defs"))
            .collect();

        if let Some(reference) = map.get("$ref") {
            if let Some(other) = structural.iter().find(|k| **k != "$ref") {
                self.err(pointer, other, "not supported beside `$ref` (only annotations are); move it into the referenced schema");
            }
            self.reference(reference, pointer);
            return;
        }
        if let Some(branches) = map.get("oneOf") {
            if let Some(other) = structural.iter().find(|k| !matches!(**k, "oneOf" | "type")) {
                self.err(pointer, other, "not supported beside `oneOf` (only annotations and `type: object` are)");
            }
            if map.get("type").is_some_and(|t| t != "object") {
                self.err(pointer, "type", "a `oneOf` must be of type object");
            }
            self.one_of(branches, pointer);
            return;
        }
        if let Some(branches) = map.get("anyOf") {
            if let Some(other) = structural.iter().find(|k| **k != "anyOf") {
                self.err(pointer, other, "not supported beside `anyOf`; put it inside the non-null branch");
            }
            self.any_of(branches, pointer);
            return;
        }

        let ty = self.type_keyword(map, pointer);
        if let Some(c) = map.get("const") {
            if map.contains_key("enum") {
                self.err(pointer, "enum", "not supported beside `const`");
            }
            if let Some(t) = &ty
                && !value_has_type(c, t)
            {
                self.err(pointer, "const", format!("{c} is not of the declared type {t}"));
            }
        }
        if let Some(values) = map.get("enum") {
            match values {
                Value::Array(values) if !values.is_empty() => {
                    for (i, v) in values.iter().enumerate() {
                        if values[..i].iter().any(|w| perago_ir::check::json_equal(v, w)) {
                            self.err(pointer, "enum", format!("lists {v} twice"));
                        }
                        if let Some(t) = &ty
                            && !value_has_type(v, t)
                        {
                            self.err(pointer, "enum", format!("{v} is not of the declared type {t}"));
                        }
                    }
                }
                _ => self.err(pointer, "enum", "must be a non-empty array"),
            }
        }

        let applies = |group: &[&str], t: &str| ty.as_deref() == Some(t) || !group.iter().any(|k| map.contains_key(*k));
        for (group, t) in [(STRING_KEYWORDS, "string"), (ARRAY_KEYWORDS, "array"), (OBJECT_KEYWORDS, "object")] {
            if !applies(group, t) {
                let k = group.iter().find(|k| map.contains_key(**k)).copied().unwrap_or_default();
                self.err(pointer, k, format!("applies only to `type: {t}`; declare the type (perago never ignores a keyword)"));
            }
        }
        if NUMBER_KEYWORDS.iter().any(|k| map.contains_key(*k)) && !matches!(ty.as_deref(), Some("integer" | "number")) {
            let k = NUMBER_KEYWORDS.iter().find(|k| map.contains_key(**k)).copied().unwrap_or_default();
            self.err(pointer, k, "applies only to `type: integer` or `type: number`; declare the type");
        }
        for k in ["minLength", "maxLength", "minItems", "maxItems"] {
            if let Some(v) = map.get(k)
                && !v.as_u64().is_some()
            {
                self.err(pointer, k, format!("must be a non-negative integer, found {v}"));
            }
        }
        for k in NUMBER_KEYWORDS {
            if let Some(v) = map.get(*k)
                && !v.is_number()
            {
                self.err(pointer, k, format!("must be a number, found {v}"));
            }
        }
        if let Some(p) = map.get("pattern") {
            match p.as_str().map(Pattern::new) {
                Some(Ok(_)) => {}
                Some(Err(e)) => self.err(pointer, "pattern", format!("not a valid ECMA-262 regular expression: {e}")),
                None => self.err(pointer, "pattern", "must be a string"),
            }
        }
        if let Some(items) = map.get("items") {
            if items.is_array() {
                self.err(pointer, "items", "the tuple form is not supported; use a single schema");
            } else {
                self.node(items, &format!("{pointer}/items"), false);
            }
        }
        self.object(map, pointer);
    }

    fn object(&mut self, map: &Map<String, Value>, pointer: &str) {
        let properties = match map.get("properties") {
            Some(Value::Object(props)) => Some(props),
            Some(_) => {
                self.err(pointer, "properties", "must be an object of schemas");
                None
            }
            None => None,
        };
        if let Some(props) = properties {
            for (name, schema) in props {
                self.node(schema, &format!("{pointer}/properties/{}", pointer_token(name)), false);
            }
        }
        match map.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for (i, name) in names.iter().enumerate() {
                    match name.as_str() {
                        Some(n) if names[..i].iter().any(|m| m == name) => {
                            self.err(pointer, "required", format!("lists {n:?} twice"));
                        }
                        Some(n) if !properties.is_some_and(|p| p.contains_key(n)) => {
                            self.err(pointer, "required", format!("names {n:?}, which `properties` does not declare"));
                        }
                        Some(_) => {}
                        None => self.err(pointer, "required", format!("must list property names, found {name}")),
                    }
                }
            }
            Some(other) => self.err(pointer, "required", format!("must be an array of property names, found {other}")),
        }
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(schema @ Value::Object(_)) => self.node(schema, &format!("{pointer}/additionalProperties"), false),
            Some(other) => self.err(pointer, "additionalProperties", format!("must be false or a schema, found {other}")),
        }
    }

    /// `type`: one type name, or `[T, "null"]`. Returns the non-null type.
    fn type_keyword(&mut self, map: &Map<String, Value>, pointer: &str) -> Option<String> {
        let ty = map.get("type")?;
        let names: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let valid_shape = match ty {
            Value::String(_) => true,
            Value::Array(items) => items.len() == 2 && names.len() == 2 && names.contains(&"null") && names[0] != names[1],
            _ => false,
        };
        if !valid_shape {
            self.err(pointer, "type", format!("must be one type or [T, \"null\"], found {ty}"));
            return None;
        }
        if let Some(unknown) = names.iter().find(|n| !TYPES.contains(n)) {
            self.err(pointer, "type", format!("unknown type {unknown:?}"));
            return None;
        }
        Some(names.iter().find(|n| **n != "null").copied().unwrap_or("null").to_owned())
    }

    fn reference(&mut self, reference: &Value, pointer: &str) {
        let Some(reference) = reference.as_str() else {
            self.err(pointer, "$ref", "must be a string");
            return;
        };
        if let Err(message) = self.target(reference) {
            self.err(pointer, "$ref", message);
        }
    }

    /// The schema a `$ref` names, loading its file if needed.
    fn target(&mut self, reference: &str) -> Result<Value, String> {
        let (doc, ptr) = self.docs.resolve(self.doc, reference)?;
        if !ptr.is_empty() && !ptr.starts_with("/$defs/") {
            return Err(format!("{reference}: only the root or a `$defs` entry may be referenced"));
        }
        self.docs
            .get(doc)
            .root
            .pointer(&ptr)
            .cloned()
            .ok_or_else(|| format!("{reference}: {} has nothing at {ptr}", self.docs.get(doc).file))
    }

    /// Follows `$ref`s (a bounded number of hops) to the schema that says something.
    fn follow(&mut self, schema: &Value) -> Option<Value> {
        let mut current = schema.clone();
        for _ in 0..32 {
            match current.get("$ref").and_then(Value::as_str) {
                Some(r) => current = self.target(r).ok()?,
                None => return Some(current),
            }
        }
        None
    }

    fn any_of(&mut self, branches: &Value, pointer: &str) {
        let Some(branches) = branches.as_array().filter(|b| b.len() == 2) else {
            self.err(pointer, "anyOf", "only `anyOf: [X, {\"type\": \"null\"}]` (a nullable X) is supported");
            return;
        };
        let is_null = |v: &Value| v.get("type").is_some_and(|t| t == "null");
        match (is_null(&branches[0]), is_null(&branches[1])) {
            (false, true) => self.node(&branches[0], &format!("{pointer}/anyOf/0"), false),
            (true, false) => self.node(&branches[1], &format!("{pointer}/anyOf/1"), false),
            _ => self.err(pointer, "anyOf", "only `anyOf: [X, {\"type\": \"null\"}]` (a nullable X) is supported"),
        }
    }

    fn one_of(&mut self, branches: &Value, pointer: &str) {
        let Some(branches) = branches.as_array().filter(|b| !b.is_empty()) else {
            self.err(pointer, "oneOf", "must be a non-empty array of schemas");
            return;
        };
        let mut resolved = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            self.node(branch, &format!("{pointer}/oneOf/{i}"), false);
            match self.follow(branch) {
                Some(b) if b.get("type").is_some_and(|t| t == "object") && b.get("additionalProperties").is_none_or(|a| a == false) => {
                    resolved.push(b)
                }
                Some(_) => {
                    self.err(&format!("{pointer}/oneOf/{i}"), "oneOf", "every branch must be a closed object (`type: object`, no map)");
                    return;
                }
                None => return,
            }
        }
        if discriminator(&resolved, |r| self.follow(r)).is_none() {
            self.err(
                pointer,
                "oneOf",
                "branches must be told apart by one property with a distinct string `const` in each branch, required where declared (one branch may instead leave it undeclared)",
            );
        }
    }
}

/// The discriminator of a `oneOf`'s resolved branches: the first property that every branch
/// either declares (required, with a distinct string `const`) or, for at most one branch,
/// leaves undeclared.
pub(crate) fn discriminator(branches: &[Value], mut follow: impl FnMut(&Value) -> Option<Value>) -> Option<(String, Vec<Option<String>>)> {
    let first = branches.first()?.get("properties")?.as_object()?;
    let candidates: Vec<&String> = first.keys().chain(branches.iter().skip(1).filter_map(|b| b.get("properties")?.as_object()).flat_map(|p| p.keys())).collect();
    'candidates: for name in candidates {
        let mut tags = Vec::new();
        for branch in branches {
            let declared = branch.get("properties").and_then(|p| p.get(name));
            match declared {
                None => tags.push(None),
                Some(schema) => {
                    let required = branch.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|n| n == name.as_str()));
                    let tag = follow(schema).and_then(|s| s.get("const").and_then(Value::as_str).map(str::to_owned));
                    match tag {
                        Some(tag) if required && !tags.contains(&Some(tag.clone())) => tags.push(Some(tag)),
                        _ => continue 'candidates,
                    }
                }
            }
        }
        if tags.iter().filter(|t| t.is_none()).count() <= 1 {
            return Some((name.clone(), tags));
        }
    }
    None
}

fn value_has_type(v: &Value, ty: &str) -> bool {
    match ty {
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
