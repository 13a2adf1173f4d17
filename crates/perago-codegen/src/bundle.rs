//! One schema standing alone: a node's closed (normalised) schema with every `$ref` it reaches
//! bundled into its own `$defs`, so the document validates without the other files — what a
//! Conductor TaskDef carries and what [`perago_schema::Contract::schema`] records.

use crate::SchemaSet;
use crate::ir::{NodeId, Shape};
use perago_schema::dialect::{DIALECT, Dialect, is_annotation};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The standalone closed schema of node `id`, with `$schema` (2020-12) at its root: a draft-07
/// or 2019-09 file's schema as its 2020-12 equivalent, which validators that detect the draft
/// by `$schema` (Conductor's) read with the same meaning.
pub fn standalone(set: &SchemaSet, id: NodeId) -> Value {
    let mut bundler = Bundler {
        set,
        refs: ref_targets(set),
        defs: Vec::new(),
        root: id,
    };
    let mut schema = bundler.schema_at(id);
    if let Value::Object(map) = &mut schema {
        map.shift_remove("$id");
        map.shift_remove("$defs");
        // The body is 2020-12 whatever the file's dialect (`dialect::upgrade`), and says so.
        if map
            .get("$schema")
            .and_then(Value::as_str)
            .map(Dialect::named)
            != Some(Ok(Dialect::Draft2020_12))
        {
            map.shift_remove("$schema");
        }
        let mut out = Map::new();
        out.insert("$schema".to_owned(), Value::String(DIALECT.to_owned()));
        out.extend(std::mem::take(map));
        if !bundler.defs.is_empty() {
            let mut defs = Map::new();
            // Definitions are filled in as they are reached; cycles come back to a name.
            let mut i = 0;
            while i < bundler.defs.len() {
                let (name, target, open) = bundler.defs[i].clone();
                let mut body = bundler.schema_at(target);
                if open {
                    bundler.open(&mut body, target);
                }
                defs.insert(name, strip_root_keywords(body));
                i += 1;
            }
            out.insert("$defs".to_owned(), Value::Object(defs));
        }
        return Value::Object(out);
    }
    schema
}

/// The location (`file#pointer`) of every `$ref` node and the node it names.
fn ref_targets(set: &SchemaSet) -> HashMap<String, NodeId> {
    set.ir
        .nodes()
        .filter_map(|(_, node)| match node.shape {
            Shape::Ref(target) => Some((node.location.clone(), target)),
            _ => None,
        })
        .collect()
}

struct Bundler<'a> {
    set: &'a SchemaSet,
    refs: HashMap<String, NodeId>,
    /// `$defs` of the bundle: name, node, and whether it is the node's open form (see
    /// [`Bundler::open`]), in the order first reached.
    defs: Vec<(String, NodeId, bool)>,
    root: NodeId,
}

impl Bundler<'_> {
    /// The normalised JSON at a node's location, its `$ref`s rewritten into the bundle.
    fn schema_at(&mut self, id: NodeId) -> Value {
        let location = self.set.ir.node(id).location.clone();
        let (file, pointer) = location.split_once('#').unwrap_or((&location, ""));
        let mut schema = self
            .set
            .files
            .iter()
            .find(|f| f.file == file)
            .and_then(|f| f.normalised.pointer(pointer))
            .cloned()
            .unwrap_or(Value::Bool(true));
        self.rewrite(&mut schema, file, pointer, false);
        // `type: [T, "null"]` is two IR nodes at one location: the inner one admits no null.
        if !matches!(
            self.set.ir.node(id).shape,
            Shape::Nullable(_) | Shape::Any | Shape::Union(_)
        ) && let Some(Value::Array(types)) = schema.get("type")
            && let Some(t) = types.iter().find(|t| *t != "null").cloned()
        {
            schema["type"] = t;
        }
        // `anyOf: [A, B, null]` is two IR nodes at one location too: the union admits no null.
        if let Shape::Union(alternatives) = &self.set.ir.node(id).shape
            && !alternatives
                .iter()
                .any(|a| a.kind == perago_schema::kind::Kind::Null)
            && let Some(Value::Array(branches)) = schema.get_mut("anyOf")
        {
            branches.retain(|b| !perago_schema::one_of::is_plain_null(b));
        }
        schema
    }

    /// Rewrites every `$ref` below `schema` (which sits at `file#pointer`), skipping `$defs`:
    /// only what is reached is bundled.
    fn rewrite(&mut self, schema: &mut Value, file: &str, pointer: &str, in_place: bool) {
        let Value::Object(map) = schema else { return };
        if let Some(Value::String(written)) = map.get("$ref") {
            let reference = match self.refs.get(&format!("{file}#{pointer}")).copied() {
                Some(target) => Some(self.reference_to(target, false)),
                // Inside a part deferred to the interpreter: a schema applied in place (beside
                // others, or in an applicator) is not closed on its own.
                None => self.named_target(file, written).map(|target| {
                    let beside = map.keys().any(|k| k != "$ref" && !is_annotation(k));
                    self.reference_to(target, in_place || beside)
                }),
            };
            if let Some(reference) = reference {
                map.insert("$ref".to_owned(), Value::String(reference));
            }
        }
        let branch_refs = |map: &Map<String, Value>| -> Vec<Option<String>> {
            ["oneOf", "anyOf"]
                .into_iter()
                .find_map(|k| map.get(k).and_then(Value::as_array))
                .into_iter()
                .flatten()
                .map(|b| b.get("$ref").and_then(Value::as_str).map(str::to_owned))
                .collect()
        };
        let written = branch_refs(map);
        for (key, child) in map.iter_mut() {
            match (key.as_str(), child) {
                ("properties", Value::Object(props)) => {
                    for (name, prop) in props.iter_mut() {
                        let p = format!("{pointer}/properties/{}", token(name));
                        self.rewrite(prop, file, &p, false);
                    }
                }
                ("allOf", Value::Array(parts)) => {
                    for (i, part) in parts.iter_mut().enumerate() {
                        let at = format!("{pointer}/allOf/{i}");
                        self.part(part, file, &at);
                    }
                }
                ("oneOf" | "anyOf" | "prefixItems", Value::Array(branches)) => {
                    let in_place = key != "prefixItems";
                    for (i, branch) in branches.iter_mut().enumerate() {
                        self.rewrite(branch, file, &format!("{pointer}/{key}/{i}"), in_place);
                    }
                }
                ("patternProperties", Value::Object(patterns)) => {
                    for (source, schema) in patterns.iter_mut() {
                        let p = format!("{pointer}/patternProperties/{}", token(source));
                        self.rewrite(schema, file, &p, false);
                    }
                }
                (
                    "items"
                    | "additionalProperties"
                    | "propertyNames"
                    | "contains"
                    | "unevaluatedProperties"
                    | "unevaluatedItems",
                    child,
                ) => {
                    self.rewrite(child, file, &format!("{pointer}/{key}"), false);
                }
                ("not" | "if" | "then" | "else", child) => {
                    self.rewrite(child, file, &format!("{pointer}/{key}"), true);
                }
                ("dependentSchemas", Value::Object(deps)) => {
                    for (name, schema) in deps.iter_mut() {
                        let p = format!("{pointer}/dependentSchemas/{}", token(name));
                        self.rewrite(schema, file, &p, true);
                    }
                }
                _ => {}
            }
        }
        // A `discriminator`'s `mapping` names branches as their `$ref`s do: it follows them
        // into the bundle (an entry that names its branch another way is left out: the
        // branches' tags decide, the mapping only restates them).
        let bundled = branch_refs(map);
        if let Some(Value::Object(mapping)) = map
            .get_mut(perago_schema::one_of::discriminator::KEYWORD)
            .and_then(|d| d.get_mut("mapping"))
        {
            mapping.retain(|_, target| {
                let at = written
                    .iter()
                    .position(|w| w.is_some() && w.as_deref() == target.as_str());
                match at.and_then(|i| bundled[i].clone()) {
                    Some(reference) => {
                        *target = Value::String(reference);
                        true
                    }
                    None => false,
                }
            });
        }
    }

    /// The root or `$defs` entry a `$ref` written in `file` names, when the IR holds no `$ref`
    /// node there (inside a part generated code defers to the interpreter). Lint allows
    /// references to those only, by file name or `$id`.
    fn named_target(&self, file: &str, reference: &str) -> Option<NodeId> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let base = base.strip_prefix("./").unwrap_or(base);
        let target = match base {
            "" => self.set.files.iter().find(|f| f.file == file),
            _ => self
                .set
                .files
                .iter()
                .find(|f| f.id == base || base.rsplit('/').next() == Some(f.file.as_str())),
        }?;
        let pointer = target.read_pointer(&perago_schema::load::decode_fragment(fragment));
        match pointer.strip_prefix("/$defs/") {
            None if pointer.is_empty() => target.root,
            Some(name) => {
                let name = perago_schema::load::unescape_pointer_token(name);
                target
                    .defs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, id)| *id)
            }
            None => None,
        }
    }

    /// An `allOf` part: a base object it names by `$ref` is written out in place, open (its
    /// own closed form would forbid the other parts' members; the merged object is closed
    /// over all of them by `unevaluatedProperties`).
    fn part(&mut self, part: &mut Value, file: &str, pointer: &str) {
        let Some(target) = self.refs.get(&format!("{file}#{pointer}")).copied() else {
            self.rewrite(part, file, pointer, true);
            return;
        };
        let mut base = strip_root_keywords(self.schema_at(target));
        if let Value::Object(map) = &mut base {
            map.shift_remove("additionalProperties");
            map.shift_remove("unevaluatedProperties");
        }
        *part = base;
    }

    /// `#` for the bundled node itself, else `#/$defs/<name>` (added on first use); `open`
    /// asks for its form applied in place ([`Bundler::open`]).
    fn reference_to(&mut self, target: NodeId, open: bool) -> String {
        if target == self.root && !open {
            return "#".to_owned();
        }
        if let Some((name, ..)) = self
            .defs
            .iter()
            .find(|(_, id, o)| *id == target && *o == open)
        {
            return format!("#/$defs/{}", token(name));
        }
        let node = self.set.ir.node(target);
        let base = node
            .name
            .clone()
            .unwrap_or_else(|| unnamed_def(&node.location));
        let base = if open { format!("{base}Open") } else { base };
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.iter().any(|(other, ..)| *other == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.defs.push((name.clone(), target, open));
        format!("#/$defs/{}", token(&name))
    }
}

/// The `$defs` name of a node without a type name, from where it is written (`DefVerification`
/// for `…#/$defs/Verification`, `DefAnyOf1` for `…/anyOf/1`): the same whatever other
/// schemas are loaded beside it.
fn unnamed_def(location: &str) -> String {
    let (file, pointer) = location.split_once('#').unwrap_or((location, ""));
    let tokens: Vec<String> = pointer
        .split('/')
        .filter(|t| !t.is_empty())
        .map(perago_schema::load::unescape_pointer_token)
        .collect();
    let last = match tokens.as_slice() {
        [.., keyword, index] if index.parse::<usize>().is_ok() => format!("{keyword}{index}"),
        [.., last] => last.clone(),
        [] => file
            .trim_end_matches(".json")
            .trim_end_matches(".schema")
            .to_owned(),
    };
    format!("Def{}", crate::build::pascal(&last))
}

impl Bundler<'_> {
    /// A node's normalised schema as applied in place: the interpreter closes an object where
    /// a value is entered, not where a schema applies to it in place, so the closing
    /// normalisation added (not one the author wrote) goes.
    fn open(&self, schema: &mut Value, target: NodeId) {
        let location = &self.set.ir.node(target).location;
        let (file, pointer) = location.split_once('#').unwrap_or((location, ""));
        let written = self
            .set
            .files
            .iter()
            .find(|f| f.file == file)
            .and_then(|f| f.read.pointer(pointer).cloned());
        if let (Value::Object(map), Some(Value::Object(written))) = (schema, written) {
            for k in ["additionalProperties", "unevaluatedProperties"] {
                if !written.contains_key(k) {
                    map.shift_remove(k);
                }
            }
        }
    }
}

/// A file root bundled as a definition keeps its schema, not its file-level keywords.
fn strip_root_keywords(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        for k in ["$schema", "$id", "$defs"] {
            map.shift_remove(k);
        }
    }
    schema
}

fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(files: &[(&str, Value)]) -> SchemaSet {
        let texts: Vec<(&str, String)> = files.iter().map(|(n, v)| (*n, v.to_string())).collect();
        match SchemaSet::load_sources(texts.iter().map(|(n, t)| (*n, t.as_str()))) {
            Ok(set) => set,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn bundles_cross_file_refs_closed_and_only_what_is_reached() {
        let set = load(&[
            (
                "a.schema.json",
                json!({
                    "$schema": DIALECT, "$id": "https://x.test/a.schema.json", "title": "A",
                    "type": "object",
                    "properties": {"b": {"$ref": "b.schema.json"}, "n": {"$ref": "#/$defs/N"}},
                    "required": ["b"],
                    "$defs": {"N": {"type": "integer"}, "Unused": {"type": "string"}}
                }),
            ),
            (
                "b.schema.json",
                json!({
                    "$schema": DIALECT, "$id": "https://x.test/b.schema.json", "title": "B",
                    "type": "object", "properties": {"s": {"type": "string"}}
                }),
            ),
        ]);
        let root = set.find("a").and_then(|f| f.root).expect("a root");
        assert_eq!(
            standalone(&set, root),
            json!({
                "$schema": DIALECT, "title": "A", "type": "object",
                "properties": {"b": {"$ref": "#/$defs/B"}, "n": {"$ref": "#/$defs/N"}},
                "required": ["b"],
                "additionalProperties": false,
                "$defs": {
                    "B": {"title": "B", "type": "object", "properties": {"s": {"type": "string"}}, "additionalProperties": false},
                    "N": {"type": "integer"}
                }
            })
        );
    }

    #[test]
    fn recursion_refers_back_to_the_root() {
        let set = load(&[(
            "tree.schema.json",
            json!({
                "$schema": DIALECT, "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
            }),
        )]);
        let root = set.files[0].root.expect("a root");
        let schema = standalone(&set, root);
        assert_eq!(
            schema["properties"]["children"]["items"],
            json!({"$ref": "#"})
        );
        assert!(schema.get("$defs").is_none());
    }

    /// A bundled node without a type name (the object of a `[object, null]` reference) is
    /// named after where it is written, not its place among every loaded schema: loading
    /// another file beside it changes nothing.
    #[test]
    fn unnamed_defs_are_named_by_location() {
        let report = json!({
            "$schema": DIALECT, "title": "Report", "type": "object",
            "properties": {"check": {"$ref": "#/$defs/Check"}},
            "$defs": {"Check": {
                "type": ["object", "null"],
                "properties": {"ok": {"type": "boolean"}},
                "if": {"properties": {"ok": {"const": false}}}, "then": {"required": ["ok"]}
            }}
        });
        let other = json!({
            "$schema": DIALECT, "title": "Aaa", "type": "object",
            "properties": {"x": {"type": ["object", "null"], "properties": {"y": {"type": "string"}}}}
        });
        let bundled = |files: &[(&str, Value)]| {
            let set = load(files);
            let root = set.find("report").and_then(|f| f.root).expect("a root");
            standalone(&set, root)
        };
        let alone = bundled(&[("report.schema.json", report.clone())]);
        let beside = bundled(&[("aaa.schema.json", other), ("report.schema.json", report)]);
        assert_eq!(alone, beside);
        let defs = alone["$defs"].as_object().expect("bundled $defs");
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["DefCheck"]);
    }
}
