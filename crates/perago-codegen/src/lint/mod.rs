//! The supported subset, checked before anything is built: every keyword outside it, and every
//! combination perago cannot honour, is an error naming the file, the JSON Pointer and the
//! keyword. Nothing is silently ignored.

use crate::ir::Kind;
use perago_schema::check::{Pattern, json_equal};

use perago_schema::dialect::{ANNOTATIONS, DIALECT, Dialect};
use perago_schema::error::LintError;
use perago_schema::load::{Documents, pointer_token, sort_errors};
use perago_schema::one_of::discriminator::property_name;
use perago_schema::one_of::{
    decider, is_null_schema, is_union, overlap, plural, union_kind, value_has_type,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

mod all_of;
mod arrays;
pub(crate) mod conditions;
mod objects;
mod refs;
mod unions;

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
/// typed without them and checked with them by the interpreter ([`Deferral::Typed`]).
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
/// is deferred whole ([`Deferral::Value`]).
const UNTYPED: &[&str] = &["unevaluatedProperties", "unevaluatedItems", "$anchor"];

/// A part of a schema generated code does not type rule by rule: the interpreter checks the
/// part's value (see `perago_schema::fallback`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Deferral {
    pub kind: DeferralKind,
    /// Why, for the generated type's documentation.
    pub reason: String,
}

/// What is typed of a deferred part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeferralKind {
    /// Everything but the [`APPLIED`] keywords, which the interpreter checks.
    Typed,
    /// Nothing: a `serde_json::Value`.
    Value,
}

/// The deferred parts of the linted documents: (document, JSON Pointer) of the schema whose
/// values are deferred, always one a value is entered at (a root, `$defs` entry, property, item…).
pub(crate) type Deferrals = HashMap<(usize, String), Deferral>;

/// A member an applied part declares: (document, JSON Pointer, schema).
pub(crate) type AppliedMember = (usize, String, Value);

/// The members the `then`, `else` and `dependentSchemas` of the schema `map` at `pointer` in
/// document `doc` declare, in schema order, and those of what those parts apply in turn: an
/// `else` that is another `if`, their `allOf` parts, and the schemas their `$ref`s name (a
/// `then` that is `{"$ref": "#/$defs/Mail"}` declares Mail's members). A `$ref` that does not
/// resolve is lint's to report; it declares nothing here.
pub(crate) fn applied_members(
    docs: &mut Documents,
    doc: usize,
    map: &Map<String, Value>,
    pointer: &str,
) -> Vec<AppliedMember> {
    let mut members = Vec::new();
    // Depth first, so that the members come in schema order; each schema once, which ends
    // `$ref` cycles (lint reports a cycle of `$ref`s alone).
    let mut stack = applied_parts(doc, map, pointer);
    stack.reverse();
    let mut seen = HashSet::new();
    while let Some((doc, at, part)) = stack.pop() {
        let Value::Object(part) = part else { continue };
        if !seen.insert((doc, at.clone())) {
            continue;
        }
        if let Some(Value::Object(props)) = part.get("properties") {
            for (name, schema) in props {
                let ptr = format!("{at}/properties/{}", pointer_token(name));
                members.push((doc, ptr, schema.clone()));
            }
        }
        let mut next = Vec::new();
        if let Some(Value::String(reference)) = part.get("$ref")
            && let Ok((target, ptr)) = docs.resolve(doc, &at, reference)
            && let Some(schema) = docs.get(target).root.pointer(&ptr)
        {
            next.push((target, ptr, schema.clone()));
        }
        if let Some(Value::Array(all)) = part.get("allOf") {
            for (i, p) in all.iter().enumerate() {
                next.push((doc, format!("{at}/allOf/{i}"), p.clone()));
            }
        }
        next.extend(applied_parts(doc, &part, &at));
        stack.extend(next.into_iter().rev());
    }
    members
}

/// The `then`, `else` and `dependentSchemas` values of the schema `map` at `pointer`.
fn applied_parts(doc: usize, map: &Map<String, Value>, pointer: &str) -> Vec<AppliedMember> {
    let mut parts = Vec::new();
    for keyword in ["then", "else"] {
        if let Some(part) = map.get(keyword) {
            parts.push((doc, format!("{pointer}/{keyword}"), part.clone()));
        }
    }
    if let Some(Value::Object(deps)) = map.get("dependentSchemas") {
        for (key, part) in deps {
            let at = format!("{pointer}/dependentSchemas/{}", pointer_token(key));
            parts.push((doc, at, part.clone()));
        }
    }
    parts
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
        "dependencies" => {
            "write `dependentRequired` or `dependentSchemas` (JSON Schema 2020-12), or declare draft-07 in `$schema`"
        }
        "definitions" => "write `$defs` (JSON Schema 2020-12), or declare draft-07 in `$schema`",
        "id" => "write `$id`",
        "$dynamicAnchor" | "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => {
            "put the schema in the root `$defs` and `$ref` it as \"#/$defs/Name\""
        }
        "$vocabulary" => "perago supports one fixed subset of JSON Schema 2020-12",
        "nullable" => "write `\"type\": [T, \"null\"]`",
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
pub(crate) fn lint(docs: &mut Documents) -> (Vec<LintError>, Deferrals) {
    let mut deferrals = Deferrals::new();
    // A deferred part is not linted further, and what uses a deferred part in place is
    // deferred in turn: lint again until the deferred parts are all found.
    loop {
        let mut errors = Vec::new();
        let before = deferrals.clone();
        let mut i = 0;
        while i < docs.docs.len() {
            let root = docs.get(i).root.clone();
            let file = docs.get(i).file.clone();
            let mut linter = Linter {
                docs,
                doc: i,
                file: &file,
                errors: &mut errors,
                deferrals: &mut deferrals,
            };
            linter.root(&root);
            i += 1;
        }
        if deferrals == before {
            sort_errors(docs, &mut errors);
            return (errors, deferrals);
        }
    }
}

struct Linter<'a> {
    docs: &'a mut Documents,
    doc: usize,
    file: &'a str,
    errors: &'a mut Vec<LintError>,
    deferrals: &'a mut Deferrals,
}

impl Linter<'_> {
    fn err(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        self.errors
            .push(LintError::new(self.file, pointer, keyword, message));
    }

    /// Defers the value entered at `pointer` (or at the schema it is in place of) to the
    /// interpreter; deferring the whole value wins over deferring a typed one.
    fn defer(&mut self, pointer: &str, kind: DeferralKind, reason: impl Into<String>) {
        let at = entered_at(pointer);
        let in_place = at != pointer && kind == DeferralKind::Typed;
        let kind = if in_place { DeferralKind::Value } else { kind };
        let key = (self.doc, at.to_owned());
        match self.deferrals.get(&key) {
            Some(h) if h.kind == DeferralKind::Value || h.kind == kind => {}
            _ => {
                let reason = match in_place {
                    // A branch applied in place: its check has no typed value of its own.
                    true => format!(
                        "{}, in `{}`; kept as a `serde_json::Value`",
                        reason.into(),
                        &pointer[at.len()..]
                    ),
                    false => reason.into(),
                };
                self.deferrals.insert(key, Deferral { kind, reason });
            }
        }
    }

    /// What generated types cannot type, at `keyword` of `pointer`: a `serde_json::Value` the
    /// interpreter checks, `message` saying why.
    fn untyped(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        let message = message.into();
        let reason = match keyword {
            "" => format!("{message}; kept as a `serde_json::Value`"),
            _ => format!("`{keyword}`: {message}; kept as a `serde_json::Value`"),
        };
        self.defer(pointer, DeferralKind::Value, reason);
    }

    fn deferral(&self, doc: usize, pointer: &str) -> Option<&Deferral> {
        self.deferrals.get(&(doc, entered_at(pointer).to_owned()))
    }

    /// True when `schema`, written in this document, is a `$ref` (through any number) to a
    /// deferred schema.
    fn reaches_deferred(&mut self, schema: &Value) -> bool {
        self.reaches(schema, |linter, d, ptr, _| {
            linter.deferrals.contains_key(&(d, ptr.to_owned()))
        })
    }

    /// True when `schema`, written in this document, is a `$ref` (through any number) to a
    /// chain of `if`s (`conditions`), which is typed as a union of its own.
    fn reaches_chain(&mut self, schema: &Value) -> bool {
        self.reaches(schema, |linter, d, ptr, v| {
            v.as_object().is_some_and(|m| {
                matches!(conditions::chain(linter.docs.get(d), m, ptr), Ok(Some(_)))
            })
        })
    }

    /// True when a schema a `$ref` of `schema` leads to (through any number) is `found`.
    fn reaches(
        &mut self,
        schema: &Value,
        found: impl Fn(&Self, usize, &str, &Value) -> bool,
    ) -> bool {
        let mut doc = self.doc;
        let mut schema = schema.clone();
        for _ in 0..64 {
            let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
                return false;
            };
            let Ok((d, ptr, v)) = self.target(doc, r) else {
                return false;
            };
            if found(self, d, &ptr, &v) {
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
        // The document arrives in 2020-12 terms whatever its dialect (`dialect::upgrade`);
        // without `$schema` it is 2020-12, as Pydantic and most generators that write none
        // mean it.
        match map.get("$schema") {
            None => {}
            Some(Value::String(s)) => {
                if let Err(why) = Dialect::named(s) {
                    self.err("", "$schema", why);
                }
            }
            Some(other) => self.err(
                "",
                "$schema",
                format!("must be a string naming a dialect (e.g. {DIALECT:?}), found {other}"),
            ),
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
                self.defer(
                    pointer,
                    DeferralKind::Typed,
                    format!("`{k}` applies a schema to the typed value"),
                );
            } else if matches!(k, "unevaluatedProperties" | "unevaluatedItems") && *value == false {
                // Closes no more than the typed value's shape does, where the value is entered
                // (a typed object is closed over what it applies in place): the type stands,
                // and the interpreter applies the keyword as written. Elsewhere (in an `allOf`
                // branch) it closes a part alone, and the value is deferred whole.
                self.defer(
                    pointer,
                    DeferralKind::Typed,
                    format!("`{k}: false` is applied as written"),
                );
            } else if UNTYPED.contains(&k) {
                self.untyped(pointer, k, "generated types have no form for it");
            } else if !is_known(k) {
                let message = self.unsupported(k);
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

    /// Why a keyword outside the subset is refused. Generated code has no use for it; the
    /// interpreter may read it, or refuse it too (a typo, a keyword of no dialect it reads):
    /// `perago validate` is named only when it reads it, so the two doors never disagree.
    fn unsupported(&self, k: &str) -> String {
        let dialect = self.docs.get(self.doc).dialect;
        match (
            unsupported_hint(k),
            perago_schema::dialect::is_keyword(dialect, k),
        ) {
            (Some(hint), true) => {
                format!("not in the subset perago generates types for: {hint}; {VALIDATE}")
            }
            (None, true) => format!("not in the subset perago generates types for: {VALIDATE}"),
            (Some(hint), false) => format!(
                "not a JSON Schema {} keyword perago reads: {hint}",
                dialect.name()
            ),
            (None, false) => format!(
                "not a JSON Schema {} keyword perago reads (an extension keyword of your own may start with `x-`)",
                dialect.name()
            ),
        }
    }

    fn root_only(&mut self, pointer: &str, keyword: &str) {
        let hint = match keyword {
            "$defs" if self.docs.get(self.doc).dialect == Dialect::Draft07 => {
                "move these definitions to the `definitions` at the root of the file (only those can be referenced)"
            }
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

    /// What a schema deferred whole must still be, for generated code to record it standing
    /// alone (`bundle`): no resource below a file's root, and `$ref`s to what lint allows.
    fn deferred_structure(&mut self, schema: &Value, pointer: &str) {
        let Value::Object(map) = schema else { return };
        for (k, v) in map {
            let at = format!("{pointer}/{}", pointer_token(k));
            match (k.as_str(), v) {
                ("$id" | "$defs" | "$schema", _) => self.root_only(pointer, k),
                // The schema a TaskDef carries is 2020-12, which has no form for them.
                ("$recursiveRef" | "$recursiveAnchor", _) => {
                    let message = self.unsupported(k);
                    self.err(pointer, k, message);
                }
                ("$ref", _) => self.reference(v, pointer),
                (
                    "properties" | "patternProperties" | "dependentSchemas",
                    Value::Object(children),
                ) => {
                    for (name, child) in children {
                        self.deferred_structure(child, &format!("{at}/{}", pointer_token(name)));
                    }
                }
                ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(children)) => {
                    for (i, child) in children.iter().enumerate() {
                        self.deferred_structure(child, &format!("{at}/{i}"));
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
                ) => self.deferred_structure(child, &at),
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
            .deferral(self.doc, pointer)
            .is_some_and(|h| h.kind == DeferralKind::Value);
        if !whole {
            match conditions::chain(self.docs.get(self.doc), map, pointer) {
                Ok(Some(chain)) if entered_at(pointer) == pointer => {
                    return self.conditional(map, pointer, is_root, &chain);
                }
                Ok(Some(_)) => self.defer(
                    pointer,
                    DeferralKind::Typed,
                    "`if` applies a schema to the typed value (a chain of `if`s is typed where its value is entered, not in a part applied in place)",
                ),
                Ok(None) => {}
                Err(why) => self.defer(
                    pointer,
                    DeferralKind::Typed,
                    format!("`if` applies a schema to the typed value ({why})"),
                ),
            }
        }
        if !whole {
            self.keywords(map, pointer, is_root);
        }
        // OpenAPI's `discriminator`, held to the branches as the interpreter holds it.
        let mut wrong =
            perago_schema::one_of::discriminator::check(self.docs, self.doc, pointer, map);
        self.errors.append(&mut wrong);
        if is_root {
            self.defs(map, pointer);
        }

        if whole {
            // Deferred whole; the root's own `$id`/`$schema`/`$defs` were seen above.
            let mut own = map.clone();
            if is_root {
                for k in ROOT_ONLY {
                    own.shift_remove(*k);
                }
            }
            self.deferred_structure(&Value::Object(own), pointer);
            return;
        }
        self.applied(map, pointer);
        if self.deferred_in_place(map, pointer) {
            return;
        }

        // Keywords of the subset that constrain values; unknown ones are reported above.
        let structural: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| is_structural(k))
            .collect();
        if self.composition(map, pointer, &structural) {
            return;
        }

        let ty = self.type_keyword(map, pointer);
        let fixed = self.fixed_values(map, pointer, &ty, &structural);
        if fixed.is_none() {
            self.keywords_match_type(pointer, &ty, &structural);
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

    /// A chain of `if`s typed as a `oneOf` (`conditions`): the schema without it, linted as a
    /// plain object, then the members each part declares and the tags the `if`s evaluate.
    fn conditional(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        is_root: bool,
        chain: &conditions::Chain,
    ) {
        let mut own = map.clone();
        for k in ["if", "then", "else", "allOf", "unevaluatedProperties"] {
            own.shift_remove(k);
        }
        // A name the holder requires may be declared by its parts (checked by `conditions`).
        if let (Some(Value::Array(required)), Some(Value::Object(props))) =
            (own.get("required"), map.get("properties"))
        {
            let kept = required
                .iter()
                .filter(|n| n.as_str().is_some_and(|n| props.contains_key(n)))
                .cloned()
                .collect();
            own.insert("required".to_owned(), Value::Array(kept));
        } else if !map.contains_key("properties") {
            own.shift_remove("required");
        }
        self.node(&Value::Object(own), pointer, is_root);
        let mut seen: Vec<&str> = vec![pointer];
        for case in &chain.cases {
            for at in &case.parts {
                if seen.contains(&at.as_str()) {
                    continue;
                }
                seen.push(at);
                if let Some(Value::Object(part)) =
                    conditions::at(self.docs.get(self.doc), at).cloned()
                {
                    self.object(&part, at, false);
                }
            }
            if let Some(at) = &case.tag_schema
                && !seen.contains(&at.as_str())
            {
                seen.push(at);
                if let Some(schema) = conditions::at(self.docs.get(self.doc), at).cloned() {
                    self.node(&schema, at, false);
                }
            }
        }
    }

    /// The root's `$defs`, each linted as a schema of its own.
    fn defs(&mut self, map: &Map<String, Value>, pointer: &str) {
        let Some(defs) = map.get("$defs") else {
            return;
        };
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

    /// What the interpreter applies beside the typed schema: the members `then`, `else` and
    /// `dependentSchemas` declare (typed as optional fields of a deferred object), and the rest.
    fn applied(&mut self, map: &Map<String, Value>, pointer: &str) {
        // The members `then`, `else` and `dependentSchemas` declare are typed as optional
        // fields of a deferred object: linted as the object's own are.
        // A member in another file is linted with that file.
        for (doc, at, schema) in applied_members(self.docs, self.doc, map, pointer) {
            if doc == self.doc {
                self.node(&schema, &at, false);
            }
        }
        // The rest of what the interpreter applies beside the typed schema: `not`, `if` and
        // `contains` whole, the parts above but for their members.
        for k in ["not", "if", "contains"] {
            if let Some(v) = map.get(k) {
                self.deferred_structure(v, &format!("{pointer}/{k}"));
            }
        }
        for (_, at, mut part) in applied_parts(self.doc, map, pointer) {
            if let Value::Object(m) = &mut part {
                m.shift_remove("properties");
            }
            self.deferred_structure(&part, &at);
        }
    }

    /// True (and `pointer` deferred) when a branch or part read in place of this schema is
    /// deferred.
    fn deferred_in_place(&mut self, map: &Map<String, Value>, pointer: &str) -> bool {
        for keyword in ["allOf", "anyOf", "oneOf"] {
            let parts = map.get(keyword).and_then(Value::as_array).cloned();
            if parts
                .as_ref()
                .is_some_and(|parts| parts.iter().any(|p| self.reaches_deferred(p)))
            {
                self.untyped(
                    pointer,
                    keyword,
                    "it applies in place a schema deferred to the interpreter",
                );
                return true;
            }
            if parts.is_some_and(|parts| parts.iter().any(|p| self.reaches_chain(p))) {
                self.untyped(
                    pointer,
                    keyword,
                    "it applies in place a chain of `if`s, which generated code types as a union of its own",
                );
                return true;
            }
        }
        false
    }

    /// A `$ref`, a union of JSON types, an `allOf`, a `oneOf` or an `anyOf`, each with the
    /// keywords beside it that generated code cannot type; true when the schema is one.
    fn composition(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        structural: &[&str],
    ) -> bool {
        if let Some(reference) = map.get("$ref") {
            for other in structural.iter().filter(|k| **k != "$ref") {
                self.untyped(
                    pointer,
                    other,
                    "generated code types a `$ref` as the schema it names, and this keyword is beside it",
                );
            }
            self.reference(reference, pointer);
            return true;
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
            self.union(list, pointer, keyword, property_name(map));
            return true;
        }
        if let Some(parts) = map.get("allOf") {
            self.all_of(map, parts, pointer);
            return true;
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
            self.one_of(branches, pointer, property_name(map));
            return true;
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
            return true;
        }
        false
    }

    /// `const` and `enum`: their values against the declared type, and the keywords beside
    /// them; which of the two the schema has.
    fn fixed_values(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        ty: &Type,
        structural: &[&str],
    ) -> Option<&'static str> {
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
            if let Type::Valid { name, nullable } = ty
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
                        if let Type::Valid { name, nullable } = ty
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
        fixed
    }

    /// Each keyword of one type (`minLength`, `items`, …) against the declared `type`.
    fn keywords_match_type(&mut self, pointer: &str, ty: &Type, structural: &[&str]) {
        if matches!(ty, Type::Invalid) {
            return;
        }
        let declared: Vec<&str> = match ty {
            Type::Valid { name, .. } => vec![name.as_str()],
            Type::Scalars(names) => names.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        for k in structural {
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
            let message = match ty {
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
        other => format!("{} {other}", perago_schema::check::type_name(other)),
    }
}
