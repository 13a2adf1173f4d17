//! Schema documents (JSON Schema 2020-12, whole) → the interpreter's [`Program`]: resources
//! found by `$id` anywhere, `$anchor`s, every `$ref` resolved against its base URI to a node,
//! keyword values checked, patterns and formats compiled, objects closed as perago's policy
//! says. A draft-07 or 2019-09 document arrives as its 2020-12 equivalent (`dialect::upgrade`);
//! 2019-09's `$recursiveRef` is resolved here, each node compiled once per place a
//! `$recursiveRef` can lead (see [`Scope`]). What stays out (`$dynamicRef`, references that
//! would need the network, dialects perago does not read) is refused with the location and the
//! reason.

use crate::check::{Bounds, Lengths, Pattern};
use crate::dialect::{
    ANNOTATIONS, ASSERTIONS, CORE, Dialect, SCHEMA_ARRAY_KEYWORDS, SCHEMA_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
};
use crate::error::LintError;
use crate::format::Format;
use crate::kind::Kind;
use crate::load::{Documents, pointer_token};
use crate::program::{
    Additional, Close, Contains, Discriminated, Ix, Node, Program, Types, Union, ty,
};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// How a schema is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// perago's policy: an object schema that says nothing of other members admits none.
    pub close_objects: bool,
}

/// The compiled set and the node of each document's root, in document order.
pub(crate) fn compile(
    docs: &mut Documents,
    options: Options,
) -> Result<(Program, Vec<Ix>), Vec<LintError>> {
    let mut c = Compiler {
        docs,
        options,
        program: Program::default(),
        memo: HashMap::new(),
        closable: Vec::new(),
        errors: Vec::new(),
        scope: Scope::default(),
        recursive: false,
    };
    let mut roots = Vec::new();
    let mut i = 0;
    // Compiling a document may load the sibling files its `$ref`s name: each is a root too.
    while i < c.docs.docs.len() {
        let root = c.at(i, "");
        roots.push(root);
        i += 1;
    }
    c.finish();
    c.errors.append(&mut c.docs.id_errors);
    if c.errors.is_empty() {
        Ok((c.program, roots))
    } else {
        crate::load::sort_errors(c.docs, &mut c.errors);
        c.errors.dedup();
        Err(c.errors)
    }
}

struct Compiler<'d> {
    docs: &'d mut Documents,
    options: Options,
    program: Program,
    /// The node of each schema, per resource a `$recursiveRef` under it leads to.
    memo: HashMap<(usize, String, Option<Resource>), Ix>,
    /// Per node: it declares object members and nothing opens it.
    closable: Vec<bool>,
    errors: Vec<LintError>,
    /// Where the node being built sits in the dynamic scope.
    scope: Scope,
    /// A 2019-09 document is loaded: scopes are tracked.
    recursive: bool,
}

/// A schema resource: (document, JSON Pointer of its root).
type Resource = (usize, String);

/// What 2019-09's `$recursiveRef` needs of the dynamic scope, known when the schema is compiled
/// since a node is compiled per value of it. `"$recursiveRef": "#"` starts at the current
/// resource; when that resource says `"$recursiveAnchor": true`, it goes on to the outermost
/// resource of the unbroken run of such resources the evaluation entered to reach it.
#[derive(Debug, Clone, Default, PartialEq)]
struct Scope {
    /// The resource the node is in.
    resource: Option<Resource>,
    /// When `resource` says `"$recursiveAnchor": true`: the outermost of that run.
    outermost: Option<Resource>,
}

impl Compiler<'_> {
    fn err(&mut self, doc: usize, pointer: &str, keyword: &str, message: impl Into<String>) {
        let file = self.docs.get(doc).file.clone();
        self.errors
            .push(LintError::new(&file, pointer, keyword, message));
    }

    /// The node of the schema at `pointer` in `doc`, compiled once (per scope, see [`Scope`]).
    fn at(&mut self, doc: usize, pointer: &str) -> Ix {
        let scope = self.enter(doc, pointer);
        let key = (doc, pointer.to_owned(), scope.outermost.clone());
        if let Some(ix) = self.memo.get(&key) {
            return *ix;
        }
        let file = self.docs.get(doc).file.clone();
        let ix = self.program.nodes.len() as Ix;
        self.program
            .nodes
            .push(Node::new(format!("{file}#{pointer}")));
        self.closable.push(false);
        self.memo.insert(key, ix);
        let schema = self
            .docs
            .get(doc)
            .root
            .pointer(pointer)
            .cloned()
            .unwrap_or(Value::Bool(true));
        let outer = std::mem::replace(&mut self.scope, scope);
        let node = self.build(doc, pointer, &schema, ix);
        self.scope = outer;
        self.program.nodes[ix as usize] = node;
        ix
    }

    /// The scope of the schema at `pointer` in `doc`, entered from the node being built.
    fn enter(&mut self, doc: usize, pointer: &str) -> Scope {
        if !self.recursive {
            // Only 2019-09 has `$recursiveRef`; until one of its documents is loaded, every
            // node has the one empty scope.
            self.recursive = self.docs.iter().any(|d| d.dialect == Dialect::Draft2019_09);
            if !self.recursive {
                return Scope::default();
            }
        }
        let resource = self.docs.resource_of(doc, pointer);
        if self.scope.resource.as_ref() == Some(&resource) {
            return self.scope.clone();
        }
        let outermost = self
            .recursive_anchor(&resource)
            .then(|| self.scope.outermost.clone().unwrap_or(resource.clone()));
        Scope {
            resource: Some(resource),
            outermost,
        }
    }

    /// True when the resource's root says `"$recursiveAnchor": true` (2019-09).
    fn recursive_anchor(&self, (doc, pointer): &Resource) -> bool {
        let d = self.docs.get(*doc);
        d.dialect == Dialect::Draft2019_09
            && d.root
                .pointer(pointer)
                .and_then(|s| s.get("$recursiveAnchor"))
                == Some(&Value::Bool(true))
    }

    fn child(&mut self, doc: usize, pointer: &str, keyword: &str) -> Ix {
        self.at(doc, &format!("{pointer}/{}", pointer_token(keyword)))
    }

    fn build(&mut self, doc: usize, pointer: &str, schema: &Value, ix: Ix) -> Node {
        let mut node = Node::new(self.program.nodes[ix as usize].location.clone());
        let map = match schema {
            Value::Bool(true) => return node,
            Value::Bool(false) => {
                node.reject = true;
                node.any = false;
                return node;
            }
            Value::Object(map) => map,
            other => {
                self.err(
                    doc,
                    pointer,
                    "",
                    format!("a schema must be an object or a boolean, found {other}"),
                );
                return node;
            }
        };
        let dialect = self.docs.get(doc).dialect;
        for k in map.keys() {
            self.keyword_known(doc, pointer, k, dialect);
        }
        if let Some(s) = map.get("$schema") {
            let dialect = self.docs.get(doc).dialect;
            match s.as_str().map(Dialect::named) {
                Some(Ok(d)) if d == dialect => {}
                Some(Ok(d)) => self.err(
                    doc,
                    pointer,
                    "$schema",
                    format!("{} inside a {} document: perago reads a document in one dialect; put this schema in a file of its own", d.name(), dialect.name()),
                ),
                Some(Err(why)) => self.err(doc, pointer, "$schema", why),
                None => self.err(
                    doc,
                    pointer,
                    "$schema",
                    format!("must be a string naming a dialect, found {s}"),
                ),
            }
        }
        if let Some(v) = map.get("$defs") {
            match v {
                Value::Object(defs) => {
                    for name in defs.keys() {
                        self.at(doc, &format!("{pointer}/$defs/{}", pointer_token(name)));
                    }
                }
                _ => self.err(doc, pointer, "$defs", "must be an object of named schemas"),
            }
        }
        self.types(doc, pointer, map, &mut node);
        self.values(doc, pointer, map, &mut node);
        self.arrays(doc, pointer, map, &mut node);
        self.objects(doc, pointer, map, &mut node);
        self.applicators(doc, pointer, map, &mut node);
        node.any = node.types.is_none()
            && node.constant.is_none()
            && node.enumeration.is_none()
            && is_empty_of_checks(&node);
        self.closable[ix as usize] = self.options.close_objects
            && node.discriminated.is_none()
            && node.unevaluated_properties.is_none()
            && matches!(node.additional, Additional::Unsaid)
            && (map.contains_key("properties")
                || map.contains_key("patternProperties")
                || node
                    .types
                    .as_ref()
                    .is_some_and(|t| t.bits & ty::OBJECT != 0));
        node
    }

    fn keyword_known(&mut self, doc: usize, pointer: &str, k: &str, dialect: Dialect) {
        if crate::dialect::is_keyword(dialect, k) {
            return;
        }
        let name = dialect.name();
        let message = match k {
            "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => format!(
                "perago does not support `{k}` (dynamic scopes, for meta-schemas that extend one another): use `$ref`"
            ),
            "$vocabulary" => format!(
                "perago reads the standard {name} vocabularies only; `$vocabulary` belongs in a meta-schema"
            ),
            "definitions" => format!("not a {name} keyword: write `$defs`"),
            "dependencies" => format!(
                "not a {name} keyword: write `dependentRequired` (names) or `dependentSchemas` (schemas)"
            ),
            "additionalItems" => format!(
                "not a {name} keyword: `items` beside `prefixItems` says what the other items are"
            ),
            "id" => "write `$id`".to_owned(),
            "nullable" => "write `\"type\": [T, \"null\"]`".to_owned(),
            _ => {
                let lower = k.to_ascii_lowercase();
                let all = [
                    SCHEMA_KEYWORDS,
                    SCHEMA_ARRAY_KEYWORDS,
                    SCHEMA_MAP_KEYWORDS,
                    ANNOTATIONS,
                    ASSERTIONS,
                    CORE,
                ];
                let close = |n: &str| {
                    n.to_ascii_lowercase() == lower
                        || n.trim_start_matches('$') == k
                        || (k.len() > 4 && edits(&n.to_ascii_lowercase(), &lower) <= 2)
                };
                match all.into_iter().flatten().find(|n| close(n)) {
                    Some(known) => format!(
                        "not a JSON Schema {name} keyword: did you mean `{known}`? (an extension keyword of your own may start with `x-`)"
                    ),
                    None => format!(
                        "not a JSON Schema {name} keyword; perago refuses what it would otherwise ignore silently (an extension keyword of your own may start with `x-`)"
                    ),
                }
            }
        };
        self.err(doc, pointer, k, message);
    }

    fn types(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, node: &mut Node) {
        let Some(t) = map.get("type") else { return };
        let names: Vec<&Value> = match t {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let mut bits = 0u8;
        let mut list = Vec::new();
        for n in &names {
            let Some(b) = n.as_str().and_then(type_bit) else {
                self.err(doc, pointer, "type", format!("unknown type {n}; the types are \"string\", \"integer\", \"number\", \"boolean\", \"null\", \"object\", \"array\""));
                return;
            };
            if bits & b != 0 {
                self.err(doc, pointer, "type", format!("lists {n} twice"));
            }
            bits |= b;
            list.push(b);
        }
        if names.is_empty() {
            self.err(doc, pointer, "type", "must name at least one type");
            return;
        }
        // `[T, "null"]` is reported as T (null is fine, any other type is not T).
        let shown: Vec<u8> = if list.len() == 2 && list.contains(&ty::NULL) {
            list.into_iter().filter(|b| *b != ty::NULL).collect()
        } else {
            list
        };
        let phrases: Vec<&str> = shown.iter().map(|b| type_phrase(*b)).collect();
        let expected = crate::check::type_list(&phrases);
        node.integer_range = bits & ty::INTEGER != 0 && bits & ty::NUMBER == 0;
        node.types = Some(Types { bits, expected });
    }

    fn values(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, node: &mut Node) {
        if let Some(c) = map.get("const") {
            node.constant = Some(c.clone());
        }
        if let Some(e) = map.get("enum") {
            match e {
                Value::Array(values) => node.enumeration = Some(values.clone()),
                _ => self.err(doc, pointer, "enum", "must be an array of values"),
            }
        }
        // A `type` every listed value has says nothing more: the values are reported alone.
        if let Some(t) = &node.types {
            let listed: Vec<&Value> = match (&node.constant, &node.enumeration) {
                (Some(c), _) => vec![c],
                (None, Some(e)) => e.iter().collect(),
                _ => vec![],
            };
            if !listed.is_empty() && listed.iter().all(|v| t.bits & value_bits(v) != 0) {
                node.types = None;
                node.integer_range = false;
            }
        }
        let mut bound = |k: &str| -> Option<f64> {
            let v = map.get(k)?;
            match v.as_f64() {
                Some(x) if v.is_number() => Some(x),
                _ => {
                    self.err(doc, pointer, k, format!("must be a number, found {v}"));
                    None
                }
            }
        };
        node.bounds = Bounds {
            minimum: bound("minimum"),
            maximum: bound("maximum"),
            exclusive_minimum: bound("exclusiveMinimum"),
            exclusive_maximum: bound("exclusiveMaximum"),
        };
        if let Some(m) = bound("multipleOf") {
            if m > 0.0 {
                node.multiple_of = Some(m);
            } else {
                self.err(
                    doc,
                    pointer,
                    "multipleOf",
                    "must be a number greater than 0",
                );
            }
        }
        node.lengths = Lengths {
            min: self.count(doc, pointer, map, "minLength"),
            max: self.count(doc, pointer, map, "maxLength"),
        };
        if let Some(p) = map.get("pattern") {
            match p.as_str().map(Pattern::new) {
                Some(Ok(p)) => node.pattern = Some(p),
                Some(Err(e)) => self.err(doc, pointer, "pattern", e.to_string()),
                None => self.err(
                    doc,
                    pointer,
                    "pattern",
                    "must be a string holding a regular expression",
                ),
            }
        }
        if let Some(f) = map.get("format") {
            match f.as_str() {
                // A format perago does not know is an annotation, as the specification says.
                Some(name) => node.format = Format::named(name),
                None => self.err(doc, pointer, "format", "must be a string naming a format"),
            }
        }
    }

    /// A non-negative integer keyword (`2` and `2.0` alike).
    fn count(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        k: &str,
    ) -> Option<u64> {
        let v = map.get(k)?;
        match v.as_f64() {
            Some(x) if v.is_number() && x >= 0.0 && x.fract() == 0.0 => {
                Some(v.as_u64().unwrap_or(x as u64))
            }
            _ => {
                self.err(
                    doc,
                    pointer,
                    k,
                    format!("must be a non-negative integer, found {v}"),
                );
                None
            }
        }
    }

    fn arrays(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, node: &mut Node) {
        node.min_items = self.count(doc, pointer, map, "minItems");
        node.max_items = self.count(doc, pointer, map, "maxItems");
        if let Some(v) = map.get("prefixItems") {
            match v {
                Value::Array(items) if !items.is_empty() => {
                    for i in 0..items.len() {
                        let ix = self.at(doc, &format!("{pointer}/prefixItems/{i}"));
                        node.prefix_items.push(ix);
                    }
                }
                _ => self.err(
                    doc,
                    pointer,
                    "prefixItems",
                    "must be a non-empty array of schemas",
                ),
            }
        }
        if let Some(items) = map.get("items") {
            if items.is_array() {
                self.err(
                    doc,
                    pointer,
                    "items",
                    "in 2020-12, `items` is one schema; a tuple is `prefixItems`",
                );
            } else {
                node.items = Some(self.child(doc, pointer, "items"));
            }
        }
        if map.contains_key("contains") {
            let min = match map.get("minContains") {
                Some(_) => self.count(doc, pointer, map, "minContains").unwrap_or(1),
                None => 1,
            };
            let max = self.count(doc, pointer, map, "maxContains");
            node.contains = Some(Contains {
                node: self.child(doc, pointer, "contains"),
                min,
                max,
            });
        }
        match map.get("uniqueItems") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => node.unique_items = true,
            Some(v) => self.err(
                doc,
                pointer,
                "uniqueItems",
                format!("must be a boolean, found {v}"),
            ),
        }
        if map.contains_key("unevaluatedItems") {
            node.unevaluated_items = Some(self.child(doc, pointer, "unevaluatedItems"));
        }
    }

    fn objects(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, node: &mut Node) {
        let required: Vec<String> = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) if names.iter().all(Value::is_string) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(v) => {
                self.err(
                    doc,
                    pointer,
                    "required",
                    format!("must be an array of property names, found {v}"),
                );
                Vec::new()
            }
        };
        match map.get("properties") {
            None => {}
            Some(Value::Object(props)) => {
                for name in props.keys() {
                    let ix = self.at(
                        doc,
                        &format!("{pointer}/properties/{}", pointer_token(name)),
                    );
                    node.property_required.push(required.contains(name));
                    node.properties.push((name.clone(), ix));
                }
            }
            Some(_) => self.err(
                doc,
                pointer,
                "properties",
                "must be an object of property schemas",
            ),
        }
        for name in required {
            if !node.properties.iter().any(|(p, _)| *p == name)
                && !node.required_others.contains(&name)
            {
                node.required_others.push(name);
            }
        }
        match map.get("patternProperties") {
            None => {}
            Some(Value::Object(props)) => {
                for source in props.keys() {
                    match Pattern::new(source) {
                        Ok(p) => {
                            let ix = self.at(
                                doc,
                                &format!("{pointer}/patternProperties/{}", pointer_token(source)),
                            );
                            node.pattern_properties.push((p, ix));
                        }
                        Err(e) => self.err(
                            doc,
                            pointer,
                            "patternProperties",
                            format!("{source:?}: {e}"),
                        ),
                    }
                }
            }
            Some(_) => self.err(
                doc,
                pointer,
                "patternProperties",
                "must be an object of pattern → schema",
            ),
        }
        node.additional = match map.get("additionalProperties") {
            None => Additional::Unsaid,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(_) => Additional::Schema(self.child(doc, pointer, "additionalProperties")),
        };
        if map.contains_key("propertyNames") {
            node.property_names = Some(self.child(doc, pointer, "propertyNames"));
        }
        node.min_properties = self.count(doc, pointer, map, "minProperties");
        node.max_properties = self.count(doc, pointer, map, "maxProperties");
        match map.get("dependentRequired") {
            None => {}
            Some(Value::Object(deps)) => {
                for (name, names) in deps {
                    match names.as_array() {
                        Some(list) if list.iter().all(Value::is_string) => {
                            node.dependent_required.push((
                                name.clone(),
                                list.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect(),
                            ))
                        }
                        _ => self.err(
                            doc,
                            pointer,
                            "dependentRequired",
                            format!("{name:?}: must be an array of property names"),
                        ),
                    }
                }
            }
            Some(_) => self.err(
                doc,
                pointer,
                "dependentRequired",
                "must be an object of property → names",
            ),
        }
        match map.get("dependentSchemas") {
            None => {}
            Some(Value::Object(deps)) => {
                for name in deps.keys() {
                    let ix = self.at(
                        doc,
                        &format!("{pointer}/dependentSchemas/{}", pointer_token(name)),
                    );
                    node.dependent_schemas.push((name.clone(), ix));
                }
            }
            Some(_) => self.err(
                doc,
                pointer,
                "dependentSchemas",
                "must be an object of property → schema",
            ),
        }
        if map.contains_key("unevaluatedProperties") {
            node.unevaluated_properties = Some(self.child(doc, pointer, "unevaluatedProperties"));
        }
    }

    fn applicators(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        node: &mut Node,
    ) {
        if let Some(r) = map.get("$ref") {
            match r.as_str() {
                Some(r) => {
                    if let Some(target) = self.reference(doc, pointer, r) {
                        node.reference = Some(target);
                    }
                }
                None => self.err(
                    doc,
                    pointer,
                    "$ref",
                    format!("must be a URI reference string, found {r}"),
                ),
            }
        }
        for k in ["allOf", "anyOf", "oneOf"] {
            let Some(v) = map.get(k) else { continue };
            let Some(list) = v.as_array().filter(|l| !l.is_empty()) else {
                self.err(doc, pointer, k, "must be a non-empty array of schemas");
                continue;
            };
            let nodes: Vec<Ix> = (0..list.len())
                .map(|i| self.at(doc, &format!("{pointer}/{k}/{i}")))
                .collect();
            match k {
                "allOf" => node.all_of = nodes,
                "anyOf" => node.any_of = nodes,
                _ => node.one_of = nodes,
            }
        }
        self.recursive_reference(doc, pointer, map, node);
        if map.contains_key("not") {
            node.not = Some(self.child(doc, pointer, "not"));
        }
        if map.contains_key("if") {
            node.condition = Some(self.child(doc, pointer, "if"));
            if map.contains_key("then") {
                node.then = Some(self.child(doc, pointer, "then"));
            }
            if map.contains_key("else") {
                node.otherwise = Some(self.child(doc, pointer, "else"));
            }
        }
        // The forms generated code reads the same way, run as if written here.
        let others = map.keys().any(|k| {
            !ANNOTATIONS.contains(&k.as_str())
                && !matches!(
                    k.as_str(),
                    "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "$defs"
                )
                && !k.starts_with("x-")
                && !matches!(k.as_str(), "$ref" | "anyOf" | "oneOf" | "type")
        });
        if !others && !map.is_empty() {
            if map.contains_key("$ref")
                && !map.contains_key("anyOf")
                && !map.contains_key("oneOf")
                && !map.contains_key("type")
            {
                node.alias = node.reference.take();
            } else if !map.contains_key("$ref")
                && !map.contains_key("oneOf")
                && !map.contains_key("type")
                && let Some(Value::Array(branches)) = map.get("anyOf")
                && branches.len() == 2
                && is_null_schema(&branches[0]) != is_null_schema(&branches[1])
            {
                let i = usize::from(is_null_schema(&branches[0]));
                node.nullable = Some(node.any_of[i]);
                node.any_of.clear();
            } else if self.options.close_objects
                && !map.contains_key("$ref")
                && !map.contains_key("anyOf")
                && map.get("type").is_none_or(|t| t == "object")
                && let Some(Value::Array(branches)) = map.get("oneOf")
                && let Some(d) = self.discriminated(doc, branches, &node.one_of)
            {
                node.discriminated = Some(d);
                node.one_of.clear();
                node.types = None;
            } else if self.options.close_objects
                && !map.contains_key("$ref")
                && !map.contains_key("type")
                && map.contains_key("anyOf") != map.contains_key("oneOf")
                && let Some(Value::Array(list)) = map.get("oneOf").or_else(|| map.get("anyOf"))
            {
                let nodes = if node.one_of.is_empty() {
                    &node.any_of
                } else {
                    &node.one_of
                };
                if let Some(u) = self.union(doc, map, list, nodes) {
                    node.union = Some(u);
                    node.one_of.clear();
                    node.any_of.clear();
                }
            }
        }
    }

    /// 2019-09's `$recursiveRef` and `$recursiveAnchor` (known in 2019-09 documents only): the
    /// reference resolved in this node's [`Scope`], applied in place as `$ref` is.
    fn recursive_reference(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        node: &mut Node,
    ) {
        if self.docs.get(doc).dialect != Dialect::Draft2019_09 {
            return; // refused as an unknown keyword
        }
        if let Some(anchor) = map.get("$recursiveAnchor") {
            let resource = self.docs.resource_of(doc, pointer);
            if !anchor.is_boolean() {
                self.err(
                    doc,
                    pointer,
                    "$recursiveAnchor",
                    format!("must be a boolean, found {anchor}"),
                );
            } else if *anchor == true && resource != (doc, pointer.to_owned()) {
                self.err(doc, pointer, "$recursiveAnchor", "only a schema resource's root (a file's root, or a schema with `$id`) may say `true`: the dynamic scope is made of resources");
            }
        }
        let Some(r) = map.get("$recursiveRef") else {
            return;
        };
        if r != "#" {
            self.err(
                doc,
                pointer,
                "$recursiveRef",
                format!("must be \"#\" (2019-09 defines no other), found {r}"),
            );
            return;
        }
        // "#" names the current resource; past a `$recursiveAnchor: true` there, the outermost
        // resource of the run the scope records.
        let here = self.docs.resource_of(doc, pointer);
        let (d, p) = match &self.scope.outermost {
            Some(outermost) if self.recursive_anchor(&here) => outermost.clone(),
            _ => here,
        };
        let target = self.at(d, &p);
        match node.reference {
            None => node.reference = Some(target),
            Some(_) => node.all_of.insert(0, target),
        }
    }

    /// A `oneOf` / `anyOf` whose branches each take a JSON type of their own, as generated code
    /// reads it: the branch of the value's type alone.
    fn union(
        &mut self,
        doc: usize,
        map: &Map<String, Value>,
        list: &[Value],
        nodes: &[Ix],
    ) -> Option<Union> {
        if !crate::one_of::is_union(doc, map, list, |d, s| self.follow(d, s)) {
            return None;
        }
        let mut kinds: Vec<Kind> = Vec::new();
        for b in list {
            let (d, v) = self.follow(doc, b)?;
            let kind = crate::one_of::union_kind(d, &v, |d, s| self.follow(d, s)).ok()?;
            if kinds
                .iter()
                .any(|k| crate::one_of::overlap(*k, kind) && kind != Kind::Object)
            {
                return None;
            }
            kinds.push(kind);
        }
        // Several objects: discriminated by a property's `const`, as a `oneOf` of objects is.
        let (objects, object_nodes): (Vec<Value>, Vec<Ix>) = list
            .iter()
            .zip(nodes)
            .zip(&kinds)
            .filter(|(_, k)| **k == Kind::Object)
            .map(|((b, n), _)| (b.clone(), *n))
            .unzip();
        let objects = match objects.len() {
            0 | 1 => None,
            _ => Some(self.discriminated(doc, &objects, &object_nodes)?),
        };
        let mut branches = Vec::new();
        for (k, n) in kinds.iter().zip(nodes) {
            if objects.is_none() || *k != Kind::Object || object_nodes.first() == Some(n) {
                branches.push((type_bit(k.name()).unwrap_or(0), *n));
            }
        }
        Some(Union {
            expected: crate::kind::kinds_text(
                kinds
                    .iter()
                    .enumerate()
                    .filter(|(i, k)| !kinds[..*i].contains(k))
                    .map(|(_, k)| *k),
            ),
            branches,
            objects,
        })
    }

    /// A `oneOf` of closed objects one property (or the keys only one branch declares) tells
    /// apart, as the contract subset has them.
    fn discriminated(
        &mut self,
        doc: usize,
        branches: &[Value],
        nodes: &[Ix],
    ) -> Option<Discriminated> {
        let mut resolved = Vec::new();
        for b in branches {
            let (d, v) = self.follow(doc, b)?;
            let Value::Object(m) = &v else { return None };
            if m.get("type").is_none_or(|t| t != "object")
                || !m.contains_key("properties")
                || [
                    "oneOf",
                    "anyOf",
                    "allOf",
                    "const",
                    "enum",
                    "$ref",
                    "if",
                    "not",
                    "patternProperties",
                    "unevaluatedProperties",
                    "dependentSchemas",
                ]
                .iter()
                .any(|k| m.contains_key(*k))
                || m.get("additionalProperties").is_some_and(|a| a != false)
            {
                return None;
            }
            resolved.push((d, v));
        }
        let decider = crate::one_of::decider(&resolved, |d, s| self.follow(d, s)).ok()?;
        Some(Discriminated {
            properties: decider.properties,
            branches: decider
                .tags
                .into_iter()
                .zip(nodes.iter().copied())
                .collect(),
            keys: decider.keys,
            decision: decider.decision.map(|(decision, _)| decision),
        })
    }

    /// Follows pure `$ref`s from a schema to the one that says something.
    fn follow(&mut self, doc: usize, schema: &Value) -> Option<(usize, Value)> {
        let mut current = (doc, schema.clone(), String::new());
        for _ in 0..32 {
            let Some(r) = current
                .1
                .get("$ref")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                return Some((current.0, current.1));
            };
            let (d, p) = self.docs.resolve(current.0, &current.2, &r).ok()?;
            let v = self.docs.get(d).root.pointer(&p)?.clone();
            current = (d, v, p);
        }
        None
    }

    /// Resolves a `$ref` written at `pointer` to its node.
    fn reference(&mut self, doc: usize, pointer: &str, reference: &str) -> Option<Ix> {
        match self.docs.resolve(doc, pointer, reference) {
            Ok((d, p)) => Some(self.at(d, &p)),
            Err(message) => {
                self.err(doc, pointer, "$ref", message);
                None
            }
        }
    }

    /// After every node is built: how each object is closed, and no in-place cycle.
    fn finish(&mut self) {
        let n = self.program.nodes.len();
        for i in 0..n {
            let node = &self.program.nodes[i];
            if !self.options.close_objects {
                continue;
            }
            let general = node.has_general_in_place();
            let close = if self.closable[i] && !general {
                Close::Static
            } else if general && self.closure_closable(i) {
                Close::Dynamic
            } else {
                Close::No
            };
            self.program.nodes[i].close = close;
        }
        // An in-place cycle never reads further into the value: validation would not end.
        let mut state = vec![0u8; n];
        for i in 0..n {
            if state[i] == 0
                && let Some(at) = self.cycle(i, &mut state)
            {
                let location = self.program.nodes[at].location.clone();
                let (file, pointer) = location.split_once('#').unwrap_or((&location, ""));
                self.errors.push(LintError::new(file, pointer, "$ref", "leads back to this schema through `$ref`s and in-place applicators only, without reading into the value: validating would never end"));
            }
        }
    }

    /// True when `i` or a schema it applies in place declares object members.
    fn closure_closable(&self, i: usize) -> bool {
        let mut seen = vec![false; self.program.nodes.len()];
        let mut stack = vec![i];
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            if self.closable[j] {
                return true;
            }
            let node = &self.program.nodes[j];
            // What `not` and `if` evaluate is not what the object is made of.
            stack.extend(
                node.in_place()
                    .filter(|c| Some(*c) != node.not && Some(*c) != node.condition)
                    .map(|c| c as usize),
            );
        }
        false
    }

    fn cycle(&self, i: usize, state: &mut [u8]) -> Option<usize> {
        state[i] = 1;
        for c in self.program.nodes[i].in_place() {
            let c = c as usize;
            match state[c] {
                1 => return Some(c),
                0 => {
                    if let Some(at) = self.cycle(c, state) {
                        return Some(at);
                    }
                }
                _ => {}
            }
        }
        state[i] = 2;
        None
    }
}

/// The edit distance between two words (insertions, deletions, substitutions, swaps of two
/// neighbours), for "did you mean".
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

fn is_empty_of_checks(node: &Node) -> bool {
    !node.reject
        && node.bounds == Bounds::NONE
        && node.multiple_of.is_none()
        && node.lengths == Lengths::default()
        && node.pattern.is_none()
        && node.format.is_none()
        && node.min_items.is_none()
        && node.max_items.is_none()
        && node.prefix_items.is_empty()
        && node.items.is_none()
        && node.contains.is_none()
        && !node.unique_items
        && node.unevaluated_items.is_none()
        && node.properties.is_empty()
        && node.required_others.is_empty()
        && node.pattern_properties.is_empty()
        && matches!(node.additional, Additional::Unsaid)
        && node.property_names.is_none()
        && node.min_properties.is_none()
        && node.max_properties.is_none()
        && node.dependent_required.is_empty()
        && node.unevaluated_properties.is_none()
        && node.in_place().next().is_none()
}

fn is_null_schema(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.get("type").is_some_and(|t| t == "null")
            && m.keys()
                .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
    })
}

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => ty::NULL,
        "boolean" => ty::BOOLEAN,
        "integer" => ty::INTEGER,
        "number" => ty::NUMBER,
        "string" => ty::STRING,
        "array" => ty::ARRAY,
        "object" => ty::OBJECT,
        _ => return None,
    })
}

fn type_phrase(bit: u8) -> &'static str {
    match bit {
        ty::NULL => "null",
        ty::BOOLEAN => "a boolean",
        ty::INTEGER => "an integer",
        ty::NUMBER => "a number",
        ty::STRING => "a string",
        ty::ARRAY => "an array",
        _ => "an object",
    }
}

/// The type bits a value has (an integral number is an integer and a number).
fn value_bits(v: &Value) -> u8 {
    match v {
        Value::Null => ty::NULL,
        Value::Bool(_) => ty::BOOLEAN,
        Value::Number(n) if n.as_f64().is_some_and(|x| x.fract() == 0.0) => {
            ty::INTEGER | ty::NUMBER
        }
        Value::Number(_) => ty::NUMBER,
        Value::String(_) => ty::STRING,
        Value::Array(_) => ty::ARRAY,
        Value::Object(_) => ty::OBJECT,
    }
}
