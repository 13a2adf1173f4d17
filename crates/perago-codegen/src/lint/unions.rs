//! `oneOf` and `anyOf`: unions of JSON types, nullable values, and `oneOf`s of closed objects.

use super::*;

/// Why a resolved `oneOf` branch is not a closed object, if it is not.
pub(super) fn not_a_closed_object(branch: &Value) -> Option<String> {
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

impl Linter<'_> {
    pub(super) fn is_union(&mut self, map: &Map<String, Value>, list: &[Value]) -> bool {
        let doc = self.doc;
        is_union(doc, map, list, |d, s| self.follow(d, s))
    }
    /// A `oneOf` / `anyOf` of JSON types: each branch takes values of one JSON type, its own.
    pub(super) fn union(
        &mut self,
        list: &[Value],
        pointer: &str,
        keyword: &str,
        discriminator: Option<&str>,
    ) {
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
        // Several objects: distinguished as a `oneOf` of objects is, by a property's `const`.
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
                        format!("the objects of a `{keyword}` of JSON types are distinguished as a `oneOf` of objects is, so each must be a closed object (`\"type\": \"object\"` with `properties`), but this one {why}"),
                    );
                    }
                }
                if fine && let Err(why) = decider(&objects, |d, s| self.follow(d, s), discriminator)
                {
                    fine = false;
                    self.untyped(
                    pointer,
                    keyword,
                    format!("the branches that take objects (numbered among themselves below) cannot be distinguished for certain: {why}"),
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
                format!("branches {i} ({}) and {j} ({}) overlap: a value could match both and the generated reader could not tell which branch it is ({why}); give each branch its own JSON type, or for objects use a `oneOf` of closed objects discriminated by a property with a string `const`", a.name(), b.name()),
            );
        }
    }
    pub(super) fn any_of(&mut self, branches: &Value, pointer: &str) {
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
    pub(super) fn one_of(&mut self, branches: &Value, pointer: &str, discriminator: Option<&str>) {
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
        if let Err(why) = decider(&resolved, |d, s| self.follow(d, s), discriminator) {
            self.untyped(pointer, "oneOf", why);
        }
    }
}
