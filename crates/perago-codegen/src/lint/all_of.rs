//! `allOf`: the parts of one object, merged into one struct.

use super::*;

/// The keywords an `allOf` holder or part may have in generated code: an object's.
pub(super) const MERGED: &[&str] = &[
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
pub(super) struct Merge {
    /// Some schema says `"type": "object"`.
    typed: bool,
    /// Some part is not an object schema (reported).
    refused: bool,
    /// Every property declaration, in order.
    declared: Vec<(String, Declared)>,
    /// Names `required` or `dependentRequired` list: where (pointer in this file), which keyword.
    named: Vec<(String, &'static str, String)>,
}

pub(super) struct Declared {
    doc: usize,
    schema: Value,
    /// `file#pointer`, for messages.
    location: String,
}

/// Why a schema cannot be a part of an `allOf` merged into one object, if it cannot.
pub(super) fn not_mergeable(map: &Map<String, Value>) -> Option<String> {
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

impl Linter<'_> {
    /// `allOf`: objects merged into one. The holder may say `"type": "object"` and declare
    /// properties and object rules of its own; each part is an inline object schema or a
    /// `$ref` to one (a base it extends). A property declared by two parts must be declared
    /// identically; every name `required` or `dependentRequired` lists must be declared by
    /// some part.
    pub(super) fn all_of(&mut self, map: &Map<String, Value>, parts: &Value, pointer: &str) {
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
    pub(super) fn merge(
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
}
