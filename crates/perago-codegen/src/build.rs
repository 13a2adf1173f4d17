//! Building the IR from linted, normalised documents.

use crate::ir::{
    Alternative, Branch, Checks, Ir, Kind, Node, NodeId, ObjectRules, Property, Shape, Step, Tag,
};
use crate::lint::conditions::{Chain, own_members};
use crate::lint::{DeferralKind, Deferrals, applied_members, has_structure, keyword_types};
use perago_schema::check::{Bounds, Lengths, Pattern};
use perago_schema::dialect::Dialect;
use perago_schema::error::LintError;
use perago_schema::load::sort_errors;
use perago_schema::load::{Documents, pointer_token};
use perago_schema::one_of::{is_union, union_kind};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// One schema file in a [`crate::SchemaSet`].
#[derive(Debug, Clone)]
pub struct SchemaFile {
    /// The file name, e.g. `workspace-input.schema.json`.
    pub file: String,
    /// Its `$id`.
    pub id: String,
    /// The text as written.
    pub source: String,
    /// The document as read, in 2020-12 terms (a draft-07 or 2019-09 file upgraded), before
    /// it is normalised.
    pub read: Value,
    /// The dialect the file is written in.
    pub dialect: Dialect,
    /// The normalised (closed) document, every `$defs` entry closed as a type of its own: to
    /// validate with another tool, take a type's `Contract::schema()`, which leaves open an
    /// entry a part applies in place (`"then": {"$ref": …}`).
    pub normalised: Value,
    /// The root schema, unless the file only holds `$defs`.
    pub root: Option<NodeId>,
    /// Its `$defs`, in file order.
    pub defs: Vec<(String, NodeId)>,
}

impl SchemaFile {
    /// Where the JSON Pointer `pointer` of the file as written (a `$ref`'s) is in
    /// [`SchemaFile::read`].
    pub fn read_pointer(&self, pointer: &str) -> String {
        match serde_json::from_str::<Value>(&self.source) {
            Ok(written) if self.dialect != Dialect::Draft2020_12 => {
                perago_schema::dialect::upgrade::upgraded_pointer(self.dialect, &written, pointer)
            }
            _ => pointer.to_owned(),
        }
    }

    /// The file name without `.schema.json`/`.json`: the short name the CLI accepts.
    pub fn short_name(&self) -> &str {
        let f = self.file.as_str();
        f.strip_suffix(".schema.json")
            .or_else(|| f.strip_suffix(".json"))
            .unwrap_or(f)
    }
}

pub(crate) struct Builder<'a> {
    docs: &'a mut Documents,
    /// The parts deferred to the interpreter, as lint found them.
    deferrals: Deferrals,
    normalised: Vec<Value>,
    ir: Ir,
    memo: HashMap<(usize, String), NodeId>,
    names: HashSet<(usize, String)>,
    /// Nodes with `examples`, checked like defaults once the IR is complete.
    examples: Vec<(NodeId, Vec<Value>)>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(docs: &'a mut Documents, deferrals: Deferrals) -> Self {
        let mut normalised: Vec<Value> = docs
            .iter()
            .map(|d| {
                let mut root = d.root.clone();
                perago_schema::normalise::close_objects(&mut root);
                root
            })
            .collect();
        // A part deferred whole is closed as the interpreter closes it, its in-place parts open.
        for ((doc, pointer), deferral) in &deferrals {
            let original = docs.get(*doc);
            if deferral.kind == DeferralKind::Value
                && let Some(mut part) = original.root.pointer(pointer).cloned()
            {
                perago_schema::normalise::close_deferred(&mut part, true, original);
                if let Some(slot) = normalised[*doc].pointer_mut(pointer) {
                    *slot = part;
                }
            }
        }
        Builder {
            docs,
            deferrals,
            normalised,
            ir: Ir::new(),
            memo: HashMap::new(),
            names: HashSet::new(),
            examples: Vec::new(),
        }
    }

    pub(crate) fn finish(mut self) -> Result<(Ir, Vec<SchemaFile>), Vec<LintError>> {
        let mut files = Vec::new();
        for doc in 0..self.normalised.len() {
            let root_schema = self.normalised[doc].clone();
            let root = has_structure(&root_schema).then(|| {
                let name = root_name(&root_schema, &self.docs.get(doc).file);
                self.named(doc, "", &root_schema, &name)
            });
            let mut defs = Vec::new();
            if let Some(Value::Object(map)) = root_schema.get("$defs") {
                for (key, schema) in map {
                    let id = self.named(
                        doc,
                        &format!("/$defs/{}", pointer_token(key)),
                        schema,
                        &pascal(key),
                    );
                    defs.push((key.clone(), id));
                }
            }
            let d = self.docs.get(doc);
            files.push(SchemaFile {
                file: d.file.clone(),
                id: d.id.clone(),
                source: d.source.clone(),
                read: d.root.clone(),
                dialect: d.dialect,
                normalised: root_schema,
                root,
                defs,
            });
        }
        let mut errors = self.check_annotations();
        sort_errors(self.docs, &mut errors);
        name_shared_literals(&mut self.ir);
        if errors.is_empty() {
            Ok((self.ir, files))
        } else {
            Err(errors)
        }
    }

    /// A default must be valid where it applies, or the typed value would break its own schema;
    /// an example must be valid, or it misleads whoever reads the schema. Both are checked by
    /// the interpreter, compiled from the same documents.
    fn check_annotations(&mut self) -> Vec<LintError> {
        let mut checks: Vec<(NodeId, &'static str, String, &Value)> = Vec::new();
        for (id, node) in self.ir.nodes() {
            if let Some(default) = &node.default {
                checks.push((id, "default", default.to_string(), default));
            }
        }
        for (id, examples) in &self.examples {
            for (i, example) in examples.iter().enumerate() {
                checks.push((*id, "examples", format!("example {i}"), example));
            }
        }
        if checks.is_empty() {
            return Vec::new();
        }
        let options = perago_schema::Options {
            close_objects: true,
        };
        let validator = match perago_schema::Validator::from_documents(self.docs, 0, options) {
            Ok(validator) => validator,
            Err(errors) => return errors,
        };
        let mut errors = Vec::new();
        for (id, keyword, what, value) in checks {
            let location = &self.ir.node(id).location;
            let violations = match validator.at(location) {
                Some(at) => at.validate_value(value),
                None => continue,
            };
            if let Some(v) = violations.first() {
                let (file, pointer) = location.split_once('#').unwrap_or((location, ""));
                errors.push(LintError::new(
                    file,
                    pointer,
                    keyword,
                    format!(
                        "{what} is not valid against this schema: {}",
                        violation_text(v)
                    ),
                ));
            }
        }
        errors
    }

    /// A root or `$defs` node: built once, named after its key.
    fn named(&mut self, doc: usize, pointer: &str, schema: &Value, name: &str) -> NodeId {
        if let Some(id) = self.memo.get(&(doc, pointer.to_owned())) {
            return *id;
        }
        self.build(doc, pointer, schema, name, true)
    }

    fn unique_name(&mut self, doc: usize, base: &str) -> String {
        let base = if RESERVED.contains(&base) {
            format!("{base}Type")
        } else {
            base.to_owned()
        };
        let base = base.as_str();
        let mut name = base.to_owned();
        let mut n = 2;
        while !self.names.insert((doc, name.clone())) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }

    fn placeholder(&mut self, doc: usize, pointer: &str, schema: &Value) -> NodeId {
        let text = |k: &str| schema.get(k).and_then(Value::as_str).map(str::to_owned);
        self.ir.push(Node {
            location: format!("{}#{pointer}", self.docs.get(doc).file),
            name: None,
            title: text("title"),
            description: text("description"),
            default: schema.get("default").cloned(),
            shape: Shape::Any,
            checks: Checks::default(),
            deferred: None,
        })
    }

    /// Builds the node at `pointer`; `hint` names it if it becomes a named type.
    fn build(
        &mut self,
        doc: usize,
        pointer: &str,
        schema: &Value,
        hint: &str,
        is_def: bool,
    ) -> NodeId {
        let id = self.placeholder(doc, pointer, schema);
        if let Some(Value::Array(examples)) = schema.get("examples") {
            self.examples.push((id, examples.clone()));
        }
        if is_def {
            self.memo.insert((doc, pointer.to_owned()), id);
        }
        let deferral = self.deferrals.get(&(doc, pointer.to_owned())).cloned();
        let map = match schema {
            Value::Object(map)
                if deferral
                    .as_ref()
                    .is_none_or(|h| h.kind == DeferralKind::Typed) =>
            {
                map
            }
            // `true`: any value; or a value deferred whole.
            _ => &Map::new(),
        };
        let mut shape = self.shape(doc, pointer, map, hint);
        if let Some(deferral) = deferral {
            self.ir.node_mut(id).deferred = Some(deferral.reason);
            self.add_applied_properties(doc, pointer, map, hint, &mut shape);
        }
        self.ir.node_mut(id).checks = checks(map, &shape);
        let wants_name = match &shape {
            Shape::Object {
                properties,
                additional,
                ..
            } => is_def || !(properties.is_empty() && additional.is_some()),
            Shape::OneOf { .. } | Shape::Union(_) => true,
            Shape::Const(Value::String(_)) => true,
            Shape::Enum(values) => crate::ir::is_literal_enum(values),
            Shape::Ref(_) | Shape::Nullable(_) => false,
            _ => is_def,
        };
        if wants_name {
            let name = self.unique_name(doc, hint);
            self.ir.node_mut(id).name = Some(name);
        }
        self.ir.node_mut(id).shape = shape;
        id
    }

    /// The members a deferred object's `then`, `else` and `dependentSchemas` declare, which its
    /// typed value has as optional fields (the interpreter says when they may be there):
    /// typed by their schema when only one place declares them, else `serde_json::Value`s.
    fn add_applied_properties(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        hint: &str,
        shape: &mut Shape,
    ) {
        let Shape::Object {
            properties,
            additional: None,
            ..
        } = shape
        else {
            return;
        };
        let members = applied_members(self.docs, doc, map, pointer);
        let name_of = |at: &str| {
            let key = at.rsplit('/').next().unwrap_or_default();
            perago_schema::load::unescape_pointer_token(key)
        };
        for (member_doc, at, schema) in &members {
            let name = name_of(at);
            if properties.iter().any(|p| p.name == name) {
                continue;
            }
            let declared = members
                .iter()
                .filter(|(_, a, _)| name_of(a) == name)
                .count();
            let hint = format!("{hint}{}", pascal(&name));
            let node = match declared {
                1 => self.build(*member_doc, at, schema, &hint, false),
                _ => self.placeholder(*member_doc, at, &Value::Bool(true)),
            };
            properties.push(Property {
                name,
                node,
                required: false,
            });
        }
    }

    fn shape(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, hint: &str) -> Shape {
        if let Some(Value::String(reference)) = map.get("$ref") {
            // Lint has resolved every reference already.
            return self.reference(doc, reference);
        }
        let document = self.docs.get(doc);
        if !self.deferrals.contains_key(&(doc, pointer.to_owned()))
            && let Some(Value::Object(written)) = document.root.pointer(pointer)
            && let Ok(Some(chain)) = crate::lint::conditions::chain(document, written, pointer)
        {
            // Lint has recognised the chain (`lint::conditions`) in the schema as written,
            // whose parts the normaliser leaves open and may reach by `$ref`.
            let written = written.clone();
            return self.conditional(doc, pointer, &written, hint, &chain);
        }
        if let Some(Value::Array(types)) = map.get("type")
            && types.iter().filter(|t| *t != "null").count() >= 2
            && !map.contains_key("const")
            && !map.contains_key("enum")
        {
            return self.type_union(doc, pointer, map, types, hint);
        }
        if let Some(Value::Array(list)) = map.get("oneOf").or_else(|| map.get("anyOf"))
            && is_union(doc, map, list, |d, s| Some(self.follow(d, s)))
        {
            return self.union(doc, pointer, map, list, hint);
        }
        if let Some(Value::Array(branches)) = map.get("oneOf") {
            // Lint has checked every branch and found how they are distinguished already.
            let members: Vec<(usize, (usize, Value))> = branches
                .iter()
                .enumerate()
                .map(|(i, b)| (i, self.follow(doc, b)))
                .collect();
            return self
                .decided(doc, pointer, map, "oneOf", hint, branches, &members)
                .unwrap_or(Shape::Any);
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            let i = branches
                .iter()
                .position(|b| b.get("type").is_none_or(|t| t != "null"))
                .unwrap_or(0);
            let inner = self.build(
                doc,
                &format!("{pointer}/anyOf/{i}"),
                &branches[i],
                hint,
                false,
            );
            return Shape::Nullable(inner);
        }
        if map.contains_key("allOf") {
            return self.merged(doc, pointer, map, hint);
        }
        if let Some(c) = map.get("const") {
            return Shape::Const(c.clone());
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return Shape::Enum(values.clone());
        }
        let ty = match map.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => {
                // [T, "null"]: the same keywords, minus null, wrapped as nullable.
                let t = ts
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|t| *t != "null")
                    .unwrap_or("null");
                let mut inner = map.clone();
                inner.insert("type".to_owned(), Value::String(t.to_owned()));
                for k in ["title", "description", "default", "examples"] {
                    inner.remove(k);
                }
                let inner = self.build(doc, pointer, &Value::Object(inner), hint, false);
                return Shape::Nullable(inner);
            }
            _ => return Shape::Any,
        };
        let num = |k: &str| map.get(k).and_then(Value::as_f64);
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        match ty {
            "null" => Shape::Null,
            "boolean" => Shape::Boolean,
            "integer" | "number" => {
                let bounds = Bounds {
                    minimum: num("minimum"),
                    maximum: num("maximum"),
                    exclusive_minimum: num("exclusiveMinimum"),
                    exclusive_maximum: num("exclusiveMaximum"),
                };
                if ty == "integer" {
                    Shape::Integer(bounds)
                } else {
                    Shape::Number(bounds)
                }
            }
            "string" => Shape::String {
                lengths: Lengths {
                    min: count("minLength"),
                    max: count("maxLength"),
                },
                pattern: map
                    .get("pattern")
                    .and_then(Value::as_str)
                    .map(Pattern::checked),
                secret: map.get("writeOnly") == Some(&Value::Bool(true))
                    || map.get("format").is_some_and(|f| f == "password"),
            },
            "array" if map.contains_key("prefixItems") => self.tuple(doc, pointer, map, hint),
            "array" => self.array(doc, pointer, map, hint),
            _ if is_checked_map(map) => self.checked_map(doc, pointer, map, hint),
            _ => self.object(doc, pointer, map, hint),
        }
    }

    /// A `$ref`: the node of the schema it names, built once under the name of its `$defs`
    /// entry or its file.
    fn reference(&mut self, doc: usize, reference: &str) -> Shape {
        let Ok((target_doc, target_ptr)) = self.docs.resolve(doc, "", reference) else {
            return Shape::Any;
        };
        let schema = self.normalised[target_doc]
            .pointer(&target_ptr)
            .cloned()
            .unwrap_or(Value::Bool(true));
        let name = match target_ptr.rsplit_once('/') {
            Some((_, key)) => pascal(&perago_schema::load::unescape_pointer_token(key)),
            None => root_name(
                &self.normalised[target_doc],
                &self.docs.get(target_doc).file,
            ),
        };
        let target = self.named(target_doc, &target_ptr, &schema, &name);
        Shape::Ref(target)
    }

    /// A union of JSON types (lint allows scalars only): a branch per type, with the keywords
    /// that apply to it, in the order written.
    fn type_union(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        types: &[Value],
        hint: &str,
    ) -> Shape {
        let mut built = Vec::new();
        for t in types.iter().filter_map(Value::as_str) {
            let Some(kind) = Kind::named(t) else {
                return Shape::Any;
            };
            let mut branch = Map::new();
            branch.insert("type".to_owned(), Value::from(t));
            for (k, v) in map {
                if keyword_types(k).is_some_and(|ts| ts.contains(&t)) {
                    branch.insert(k.clone(), v.clone());
                }
            }
            let branch_hint = format!("{hint}{}", pascal(t));
            let node = self.build(doc, pointer, &Value::Object(branch), &branch_hint, false);
            built.push(Alternative { kind, node });
        }
        Shape::Union(built)
    }

    /// A `oneOf` or `anyOf` of JSON types (lint has checked every branch has a JSON type of
    /// its own): a branch per type, the objects among them one `oneOf` in the place of the first.
    fn union(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        list: &[Value],
        hint: &str,
    ) -> Shape {
        let keyword = if map.contains_key("oneOf") {
            "oneOf"
        } else {
            "anyOf"
        };
        let mut kinds = Vec::new();
        let mut objects = Vec::new();
        for (i, branch) in list.iter().enumerate() {
            let (d, resolved) = self.follow(doc, branch);
            let Ok(kind) = union_kind(d, &resolved, |d, s| Some(self.follow(d, s))) else {
                return Shape::Any;
            };
            if kind == Kind::Object {
                objects.push((i, (d, resolved)));
            }
            kinds.push(kind);
        }
        // Several objects: one `oneOf` of them, discriminated by a property's `const`, in the
        // place of the first.
        let mut tagged = None;
        if objects.len() > 1 {
            let Some(shape) = self.decided(doc, pointer, map, keyword, hint, list, &objects) else {
                return Shape::Any;
            };
            let location = format!("{}#{pointer}", self.docs.get(doc).file);
            tagged = Some(self.ir.push(Node {
                location,
                name: None,
                title: None,
                description: None,
                default: None,
                shape,
                checks: Checks::default(),
                deferred: None,
            }));
        }
        let mut built = Vec::new();
        for (i, (branch, kind)) in list.iter().zip(kinds).enumerate() {
            if let Some(node) = tagged
                && kind == Kind::Object
            {
                if objects.first().is_some_and(|(first, _)| *first == i) {
                    built.push(Alternative { kind, node });
                }
                continue;
            }
            let node = self.build(
                doc,
                &format!("{pointer}/{keyword}/{i}"),
                branch,
                &format!("{hint}{}", pascal(kind.name())),
                false,
            );
            built.push(Alternative { kind, node });
        }
        // `anyOf: [A, B, null]` (Pydantic's `Optional[A | B]`): null, or the union of the
        // others, a type of its own at the same location (as the interpreter reads it).
        let nulls = built.iter().filter(|a| a.kind == Kind::Null).count();
        let plain_nulls = list
            .iter()
            .filter(|b| perago_schema::one_of::is_plain_null(b))
            .count();
        if keyword == "anyOf" && nulls == 1 && plain_nulls == 1 && built.len() > 2 {
            built.retain(|a| a.kind != Kind::Null);
            let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
            let name = self.unique_name(doc, hint);
            let inner = self.ir.push(Node {
                location: format!("{}#{pointer}", self.docs.get(doc).file),
                name: Some(name),
                title: text("title"),
                description: text("description"),
                default: None,
                shape: Shape::Union(built),
                checks: Checks::default(),
                deferred: None,
            });
            return Shape::Nullable(inner);
        }
        Shape::Union(built)
    }

    /// `prefixItems`: a tuple, and the items after it unless `items` is `false`.
    fn tuple(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, hint: &str) -> Shape {
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        let positions = map.get("prefixItems").and_then(Value::as_array);
        let items = positions
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, schema)| {
                let at = format!("{pointer}/prefixItems/{i}");
                self.build(doc, &at, schema, &format!("{hint}Item{i}"), false)
            })
            .collect();
        let fixed_by_count = count("maxItems") == Some(positions.map_or(0, Vec::len) as u64);
        let rest = match map.get("items") {
            Some(Value::Bool(false)) => None,
            // What `items` would admit after the positions, `maxItems` refuses.
            None | Some(Value::Bool(true)) if fixed_by_count => None,
            schema => {
                let schema = schema.cloned().unwrap_or(Value::Bool(true));
                let at = format!("{pointer}/items");
                Some(self.build(doc, &at, &schema, &format!("{hint}Item"), false))
            }
        };
        Shape::Tuple {
            items,
            rest,
            items_false: map.get("items") == Some(&Value::Bool(false)),
            min_items: count("minItems"),
            max_items: count("maxItems"),
        }
    }

    /// An array of one item schema.
    fn array(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, hint: &str) -> Shape {
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        let items = match map.get("items") {
            Some(items) => self.build(
                doc,
                &format!("{pointer}/items"),
                items,
                &format!("{hint}Item"),
                false,
            ),
            None => self.build(
                doc,
                &format!("{pointer}/items"),
                &Value::Bool(true),
                hint,
                false,
            ),
        };
        Shape::Array {
            items,
            min_items: count("minItems"),
            max_items: count("maxItems"),
        }
    }

    /// An object: its declared properties, a map's values, and the object rules.
    fn object(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, hint: &str) -> Shape {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut properties = Vec::new();
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, schema) in props {
                let ptr = format!("{pointer}/properties/{}", pointer_token(name));
                let node = self.build(doc, &ptr, schema, &format!("{hint}{}", pascal(name)), false);
                properties.push(Property {
                    name: name.clone(),
                    node,
                    required: required.contains(&name.as_str()),
                });
            }
        }
        let additional = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(schema) => Some(self.build(
                doc,
                &format!("{pointer}/additionalProperties"),
                schema,
                &format!("{hint}Value"),
                false,
            )),
            None => None,
        };
        let steps = object_steps(map, &properties);
        Shape::Object {
            properties,
            additional,
            rules: ObjectRules {
                steps,
                ..ObjectRules::default()
            },
        }
    }

    /// A map whose keys are checked ([`Shape::Map`]).
    fn checked_map(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        hint: &str,
    ) -> Shape {
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        let pattern = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .and_then(|p| p.iter().next());
        let values = match pattern {
            Some((source, schema)) => self.build(
                doc,
                &format!("{pointer}/patternProperties/{}", pointer_token(source)),
                schema,
                &format!("{hint}Value"),
                false,
            ),
            None => {
                let schema = map
                    .get("additionalProperties")
                    .cloned()
                    .unwrap_or(Value::Bool(true));
                let at = format!("{pointer}/additionalProperties");
                self.build(doc, &at, &schema, &format!("{hint}Value"), false)
            }
        };
        let names = map.get("propertyNames").map(|schema| {
            // Names are strings: the schema's string rules are what applies to them.
            let mut schema = schema.clone();
            if let Value::Object(m) = &mut schema
                && !m.contains_key("$ref")
            {
                m.entry("type")
                    .or_insert(Value::String("string".to_owned()));
            }
            let at = format!("{pointer}/propertyNames");
            self.build(doc, &at, &schema, &format!("{hint}Name"), false)
        });
        Shape::Map {
            values,
            pattern: pattern.map(|(source, _)| Pattern::checked(source)),
            names,
            min: count("minProperties"),
            max: count("maxProperties"),
        }
    }

    /// An `allOf` of objects as one object: every part's properties (a property declared in
    /// several parts, identically as lint made sure, is one field), checked part after part as
    /// the interpreter runs them, closed over them all.
    fn merged(&mut self, doc: usize, pointer: &str, map: &Map<String, Value>, hint: &str) -> Shape {
        let mut properties: Vec<Property> = Vec::new();
        let mut named = Vec::new();
        let type_errors = self.merge_part(doc, pointer, map, hint, &mut properties, &mut named);
        let index = |name: &str| properties.iter().position(|p| p.name == name);
        let mut steps = Vec::new();
        for step in named {
            // Lint made sure every name is declared by some part.
            let step = match step {
                NamedStep::Property(name, required) => {
                    index(&name).map(|i| Step::Property(i, required))
                }
                NamedStep::Present(name) => index(&name).map(Step::Present),
                NamedStep::Count(min, max) => Some(Step::Count(min, max)),
                NamedStep::DependentRequired(name, needed) => index(&name).map(|i| {
                    Step::DependentRequired(i, needed.iter().filter_map(|n| index(n)).collect())
                }),
            };
            steps.extend(step);
        }
        for step in &steps {
            if let Step::Property(i, true) | Step::Present(i) = step {
                properties[*i].required = true;
            }
        }
        Shape::Object {
            properties,
            additional: None,
            rules: ObjectRules {
                steps,
                unknown_last: true,
                type_errors,
                case: false,
            },
        }
    }

    /// Adds one part of an `allOf` (or its holder) to a merged object: its own properties and
    /// rules, then its parts'. Returns how many "must be an object" violations it gives a value
    /// of another type (the interpreter stops at a part's `type` before its own parts).
    fn merge_part(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        hint: &str,
        properties: &mut Vec<Property>,
        steps: &mut Vec<NamedStep>,
    ) -> usize {
        if map.contains_key("$ref") {
            // A base object: its node (built once, as its own type too) says it all. The `$ref`
            // gets a node of its own so the bundle finds where it leads.
            let shape = self.shape(doc, pointer, map, hint);
            let Shape::Ref(target) = shape else {
                return 0;
            };
            let id = self.placeholder(doc, pointer, &Value::Object(map.clone()));
            self.ir.node_mut(id).shape = Shape::Ref(target);
            let target = self.ir.resolve(target);
            let Shape::Object {
                properties: base,
                rules,
                ..
            } = &self.ir.node(target).shape
            else {
                return 0;
            };
            let (base, rules) = (base.clone(), rules.clone());
            for p in &base {
                if !properties.iter().any(|q| q.name == p.name) {
                    properties.push(Property {
                        required: false,
                        ..p.clone()
                    });
                }
            }
            let name = |i: usize| base[i].name.clone();
            for step in rules.steps_of(&base) {
                steps.push(match step {
                    Step::Property(i, required) => NamedStep::Property(name(i), required),
                    Step::Present(i) => NamedStep::Present(name(i)),
                    Step::Count(min, max) => NamedStep::Count(min, max),
                    Step::DependentRequired(i, needed) => NamedStep::DependentRequired(
                        name(i),
                        needed.into_iter().map(name).collect(),
                    ),
                });
            }
            return rules.type_errors;
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let own = map.get("properties").and_then(Value::as_object);
        for (name, schema) in own.into_iter().flatten() {
            if !properties.iter().any(|p| p.name == *name) {
                let node = self.build(
                    doc,
                    &format!("{pointer}/properties/{}", pointer_token(name)),
                    schema,
                    &format!("{hint}{}", pascal(name)),
                    false,
                );
                properties.push(Property {
                    name: name.clone(),
                    node,
                    required: false,
                });
            }
            steps.push(NamedStep::Property(
                name.clone(),
                required.contains(&name.as_str()),
            ));
        }
        for name in required {
            if !own.is_some_and(|o| o.contains_key(name)) {
                steps.push(NamedStep::Present(name.to_owned()));
            }
        }
        let count = |k: &str| map.get(k).and_then(Value::as_u64);
        if map.contains_key("minProperties") || map.contains_key("maxProperties") {
            steps.push(NamedStep::Count(
                count("minProperties"),
                count("maxProperties"),
            ));
        }
        for (name, needed) in dependent_required(map) {
            steps.push(NamedStep::DependentRequired(name, needed));
        }
        let mut type_errors = 0;
        if let Some(Value::Array(parts)) = map.get("allOf") {
            for (i, part) in parts.iter().enumerate() {
                if let Value::Object(part) = part {
                    let at = format!("{pointer}/allOf/{i}");
                    type_errors += self.merge_part(doc, &at, part, hint, properties, steps);
                }
            }
        }
        if map.contains_key("type") {
            1
        } else {
            type_errors
        }
    }

    /// An `if`/`then`/`else` chain (`lint::conditions`) as a `oneOf` decided by its tag: a
    /// variant per case, an object of the members its parts declare (each built once, whichever
    /// cases share it), checked part after part and closed after them, as the interpreter runs
    /// them.
    fn conditional(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        hint: &str,
        chain: &Chain,
    ) -> Shape {
        use perago_schema::one_of::{DecisionTree, Test};
        let document = self.docs.get(doc).clone();
        let file = document.file.clone();
        let mut built: HashMap<String, NodeId> = HashMap::new();
        let mut branches = Vec::new();
        for (c, case) in chain.cases.iter().enumerate() {
            let mut properties: Vec<Property> = Vec::new();
            let mut steps = Vec::new();
            let declared = case.parts.iter().any(|at| {
                own_members(&document, map, pointer, at)
                    .0
                    .is_some_and(|p| p.contains_key(&chain.tag))
            });
            let named = chain
                .values
                .iter()
                .zip(&chain.by_value)
                .find(|(_, b)| **b == c)
                .map(|(v, _)| tag_name(v));
            // The tag an `if` that held evaluated: a member of the case, checked by nothing.
            if let (false, Some(at)) = (declared, &case.tag_schema) {
                let schema = crate::lint::conditions::at(&document, at).unwrap_or(&Value::Null);
                let h = format!(
                    "{hint}{}{}",
                    named.as_deref().unwrap_or_default(),
                    pascal(&chain.tag)
                );
                let node = match built.get(at) {
                    Some(node) => *node,
                    None => {
                        let node = self.build(doc, at, schema, &h, false);
                        built.insert(at.clone(), node);
                        node
                    }
                };
                properties.push(Property {
                    name: chain.tag.clone(),
                    node,
                    required: false,
                });
            }
            for at in &case.parts {
                let (props, required) = own_members(&document, map, pointer, at);
                for (name, schema) in props.into_iter().flatten() {
                    let i = match properties.iter().position(|p| p.name == *name) {
                        Some(i) => i,
                        None => {
                            let ptr = format!("{at}/properties/{}", pointer_token(name));
                            let node = match built.get(&ptr) {
                                Some(node) => *node,
                                None => {
                                    let h = format!("{hint}{}", pascal(name));
                                    let node = self.build(doc, &ptr, schema, &h, false);
                                    built.insert(ptr, node);
                                    node
                                }
                            };
                            properties.push(Property {
                                name: name.clone(),
                                node,
                                required: false,
                            });
                            properties.len() - 1
                        }
                    };
                    steps.push(Step::Property(i, required.contains(&name.as_str())));
                }
                for name in required {
                    if !props.is_some_and(|p| p.contains_key(name))
                        && let Some(i) = properties.iter().position(|p| p.name == name)
                    {
                        steps.push(Step::Present(i));
                    }
                }
            }
            for step in &steps {
                if let Step::Property(i, true) | Step::Present(i) = step {
                    properties[*i].required = true;
                }
            }
            // A case the tag's presence chooses always has it.
            if chain.absent != c
                && let Some(p) = properties.iter_mut().find(|p| p.name == chain.tag)
            {
                p.required = true;
            }
            let last = case.parts.last().map(String::as_str).unwrap_or(pointer);
            let part = crate::lint::conditions::at(&document, last);
            let text = |k: &str| {
                (last != pointer)
                    .then(|| part.and_then(|p| p.get(k)).and_then(Value::as_str))
                    .flatten()
                    .map(str::to_owned)
            };
            // A part reached by `$ref` is named after its `$defs` entry.
            let def = last
                .strip_prefix("/$defs/")
                .filter(|k| !k.contains('/'))
                .map(|k| pascal(&perago_schema::load::unescape_pointer_token(k)));
            let name = named
                .or_else(|| text("title").map(|t| pascal(&t)))
                .or(def)
                .unwrap_or_else(|| "Other".to_owned());
            let name = self.unique_name(doc, &format!("{hint}{name}"));
            let node = self.ir.push(Node {
                location: format!("{file}#{last}"),
                name: Some(name),
                title: text("title"),
                description: text("description"),
                default: None,
                shape: Shape::Object {
                    properties,
                    additional: None,
                    rules: ObjectRules {
                        steps,
                        unknown_last: true,
                        type_errors: 1,
                        case: true,
                    },
                },
                checks: Checks::default(),
                deferred: None,
            });
            branches.push(Branch {
                tag: None,
                node,
                keys: Vec::new(),
            });
        }
        let mut tags: Vec<(Vec<Value>, usize)> = Vec::new();
        for (value, c) in chain.values.iter().zip(&chain.by_value) {
            match tags.iter_mut().find(|(_, next)| *next == c + 1) {
                Some((values, _)) => values.push(value.clone()),
                None => tags.push((vec![value.clone()], c + 1)),
            }
        }
        let mut tests = vec![Test::Tag {
            member: 0,
            tags,
            other: Some(chain.other + 1),
            absent: Some(chain.absent + 1),
        }];
        tests.extend((0..chain.cases.len()).map(Test::Branch));
        Shape::OneOf {
            discriminators: Vec::new(),
            branches,
            decision: Some(DecisionTree {
                members: vec![chain.tag.clone()],
                tests,
            }),
        }
    }

    /// Follows `$ref`s from document `doc` to the schema that says something, and its document.
    /// The `oneOf` of closed objects `members` (each its index in `list`, the `keyword`'s
    /// branches at `pointer`, and the resolved branch) as [`perago_schema::one_of::decider`] tells them
    /// apart: a plain `oneOf`, or a union's objects. `None` when nothing does (lint said so).
    #[allow(clippy::too_many_arguments)]
    fn decided(
        &mut self,
        doc: usize,
        pointer: &str,
        map: &Map<String, Value>,
        keyword: &str,
        hint: &str,
        list: &[Value],
        members: &[(usize, (usize, Value))],
    ) -> Option<Shape> {
        let resolved: Vec<(usize, Value)> = members.iter().map(|(_, r)| r.clone()).collect();
        let perago_schema::one_of::Decider {
            properties: discriminators,
            tags,
            mut keys,
            decision,
        } = perago_schema::one_of::decider(
            &resolved,
            |d, s| Some(self.follow(d, s)),
            perago_schema::one_of::discriminator::property_name(map),
        )
        .ok()?;
        keys.resize(members.len(), Vec::new());
        let (decision, names) = match decision {
            Some((decision, labels)) => (Some(decision), decision_names(labels)),
            None => (None, vec![None; members.len()]),
        };
        let mut branches = Vec::new();
        for ((((i, (_, b)), tag), keys), name) in members.iter().zip(tags).zip(keys).zip(names) {
            let name = name.unwrap_or_else(|| branch_name(*i, b, &tag, &keys));
            let branch_hint = format!("{hint}{name}");
            let node = self.build(
                doc,
                &format!("{pointer}/{keyword}/{i}"),
                &list[*i],
                &branch_hint,
                false,
            );
            let tag = tag.map(|(property, values)| Tag { property, values });
            branches.push(Branch { tag, node, keys });
        }
        Some(Shape::OneOf {
            discriminators,
            branches,
            decision,
        })
    }

    fn follow(&mut self, doc: usize, schema: &Value) -> (usize, Value) {
        let mut current = schema.clone();
        let mut current_doc = doc;
        for _ in 0..32 {
            let Some(reference) = current
                .get("$ref")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                break;
            };
            let Ok((d, ptr)) = self.docs.resolve(current_doc, "", &reference) else {
                break;
            };
            current = self.normalised[d]
                .pointer(&ptr)
                .cloned()
                .unwrap_or(Value::Bool(true));
            current_doc = d;
        }
        (current_doc, current)
    }
}

/// True for an object schema that is a [`Shape::Map`]: no declared properties, and keys
/// checked by `patternProperties` or `propertyNames`, or counted.
pub(crate) fn is_checked_map(map: &Map<String, Value>) -> bool {
    let declares = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let a_map = map
        .get("additionalProperties")
        .is_some_and(|a| a.is_object() || *a == Value::Bool(true));
    !declares
        && (map.contains_key("patternProperties")
            || map.contains_key("propertyNames")
            || (a_map && (map.contains_key("minProperties") || map.contains_key("maxProperties"))))
}

/// A step of a merged object before its properties have their final indices.
enum NamedStep {
    Property(String, bool),
    Present(String),
    Count(Option<u64>, Option<u64>),
    DependentRequired(String, Vec<String>),
}

/// `dependentRequired` as (property, the properties it needs), in schema order.
fn dependent_required(map: &Map<String, Value>) -> Vec<(String, Vec<String>)> {
    map.get("dependentRequired")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, needed)| {
            let needed = needed
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            (name.clone(), needed)
        })
        .collect()
}

/// The explicit steps of a plain object with `minProperties`, `maxProperties` or
/// `dependentRequired` (its properties, then those, as the interpreter checks them); none for
/// an object without them.
fn object_steps(map: &Map<String, Value>, properties: &[Property]) -> Vec<Step> {
    let count = |k: &str| map.get(k).and_then(Value::as_u64);
    let counted = map.contains_key("minProperties") || map.contains_key("maxProperties");
    let dependent = dependent_required(map);
    if !counted && dependent.is_empty() {
        return Vec::new();
    }
    let index = |name: &str| properties.iter().position(|p| p.name == name);
    let mut steps: Vec<Step> = properties
        .iter()
        .enumerate()
        .map(|(i, p)| Step::Property(i, p.required))
        .collect();
    if counted {
        steps.push(Step::Count(count("minProperties"), count("maxProperties")));
    }
    for (name, needed) in dependent {
        // Lint made sure every name is a declared property.
        if let Some(i) = index(&name) {
            steps.push(Step::DependentRequired(
                i,
                needed.iter().filter_map(|n| index(n)).collect(),
            ));
        }
    }
    steps
}

/// The checks beside a shape that its keywords ask for (a nullable's are its inner node's).
fn checks(map: &Map<String, Value>, shape: &Shape) -> Checks {
    if matches!(shape, Shape::Nullable(_)) {
        return Checks::default();
    }
    Checks {
        format: map
            .get("format")
            .and_then(Value::as_str)
            .and_then(perago_schema::check::Format::named),
        multiple_of: map.get("multipleOf").and_then(Value::as_f64),
        unique_items: map.get("uniqueItems") == Some(&Value::Bool(true)),
    }
}

/// A violation of a default or example: its message, prefixed by where in the value it is
/// unless that is the value itself.
fn violation_text(v: &perago_schema::Violation) -> String {
    if v.path == "$" {
        v.message.clone()
    } else {
        format!("{}: {}", v.path, v.message)
    }
}

fn root_name(schema: &Value, file: &str) -> String {
    match schema.get("title").and_then(Value::as_str) {
        Some(title) => pascal(title),
        None => pascal(
            file.strip_suffix(".schema.json")
                .or_else(|| file.strip_suffix(".json"))
                .unwrap_or(file),
        ),
    }
}

/// `worker-completion.v1` → `WorkerCompletionV1`; `ref_type` → `RefType`.
pub fn pascal(s: &str) -> String {
    let mut out = String::new();
    for word in s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            if word.chars().all(|c| !c.is_ascii_lowercase()) {
                out.push_str(&chars.as_str().to_ascii_lowercase());
            } else {
                out.push_str(chars.as_str());
            }
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// The names of the branches a [`DecisionTree`](perago_schema::one_of::DecisionTree) distinguishes, from what
/// chooses each (the JSON types, tags and keys on the way to it); `None` for a branch only
/// members' absence chooses, or whose name another branch has too.
fn decision_names(labels: Vec<Vec<perago_schema::one_of::Label>>) -> Vec<Option<String>> {
    use perago_schema::one_of::Label;
    let names: Vec<String> = labels
        .into_iter()
        .map(|path| {
            path.into_iter()
                .map(|label| match label {
                    Label::Kind(kind) => pascal(kind.name()),
                    Label::Tag(tag) => tag_name(&tag),
                    Label::Key(key) => pascal(&key),
                })
                .collect()
        })
        .collect();
    let unique = |n: &String| !n.is_empty() && names.iter().filter(|m| *m == n).count() == 1;
    names
        .iter()
        .map(|n| Some(n.clone()).filter(unique))
        .collect()
}

/// The name of `oneOf` branch `i` (`branch`, resolved): its tag, else (discriminated by keys) the
/// first of its own `keys` it requires, else its position. An `enum` tag's first value names it.
fn branch_name(
    i: usize,
    branch: &Value,
    tag: &Option<(usize, Vec<Value>)>,
    keys: &[String],
) -> String {
    let required = branch.get("required").and_then(Value::as_array);
    let own = keys
        .iter()
        .find(|k| required.is_some_and(|r| r.iter().any(|n| n == k.as_str())));
    match tag {
        Some((_, values)) => tag_name(&values[0]),
        None => own
            .map(|k| pascal(k))
            .unwrap_or_else(|| format!("Variant{i}")),
    }
}

/// Names generated code uses unqualified: a type of the same name would shadow them.
const RESERVED: &[&str] = &[
    "Self", "String", "Vec", "Option", "Some", "None", "Box", "Result", "Ok", "Err",
];

/// Names after their `title` the inline enums several places declare alike (the same `title`,
/// the same values: Pydantic writes a `Literal` alias that several models use inline in each,
/// titled after the field), so that code generation makes them one type
/// (`emit::shared_enums`): `Environment` rather than `DeployParamsEnvironment` and
/// `ScheduleParamsEnvironment`. Only where the name is free in every file involved.
fn name_shared_literals(ir: &mut crate::ir::Ir) {
    let file_of = |location: &str| location.split_once('#').map_or("", |(f, _)| f).to_owned();
    let mut groups: Vec<((String, String), Vec<NodeId>)> = Vec::new();
    for (id, node) in ir.nodes() {
        let pointer = node.location.split_once('#').map_or("", |(_, p)| p);
        let by_key = pointer.is_empty()
            || pointer
                .strip_prefix("/$defs/")
                .is_some_and(|k| !k.contains('/'));
        let (Some(_), Some(title), Shape::Enum(values), false) =
            (&node.name, &node.title, &node.shape, by_key)
        else {
            continue;
        };
        let key = (title.clone(), Value::Array(values.clone()).to_string());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(id),
            None => groups.push((key, vec![id])),
        }
    }
    for ((title, _), members) in groups {
        let name = pascal(&title);
        if members.len() < 2
            || RESERVED.contains(&name.as_str())
            || syn::parse_str::<syn::Ident>(&name).is_err()
        {
            continue;
        }
        let files: HashSet<String> = members
            .iter()
            .map(|m| file_of(&ir.node(*m).location))
            .collect();
        let taken = ir.nodes().any(|(id, node)| {
            !members.contains(&id)
                && node.name.as_deref() == Some(name.as_str())
                && files.contains(&file_of(&node.location))
        });
        // Two members in one file would be two items of one name.
        if taken || files.len() < members.len() {
            continue;
        }
        for m in members {
            ir.node_mut(m).name = Some(name.clone());
        }
    }
}

/// The name a tag gives its branch: a string's in Pascal case, `V1` for the integer 1
/// (`VMinus1` for -1), `True`, `False`.
pub fn tag_name(tag: &Value) -> String {
    match tag {
        Value::String(s) => pascal(s),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i < 0 => format!("VMinus{}", i.unsigned_abs()),
            _ => format!("V{n}"),
        },
        other => pascal(&other.to_string()),
    }
}
