//! Example documents of a schema, small ones: the raw material of witnesses. An example is a
//! guess (a `pattern` or `not` may refuse it); every witness built from one is checked by
//! the interpreter before it is shown.

use crate::change::Step;
use crate::schema::{Loc, Schema, keywords};
use crate::types::Types;
use serde_json::{Map, Value, json};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

/// How deep examples go before giving up.
const DEPTH: usize = 32;

/// A small document of `schema` at `loc` whose type is in `mask`.
pub fn example(schema: &Schema, loc: &Loc, mask: Types) -> Option<Value> {
    example_at(schema, loc, mask, &[], None)
}

/// A small document of `schema` at `loc` holding `fill` at `path` (when given), checked
/// against the schema there; `None` when no guess passes.
pub fn example_at(
    schema: &Schema,
    loc: &Loc,
    mask: Types,
    path: &[Step],
    fill: Option<&Value>,
) -> Option<Value> {
    let guess = Guess {
        schema,
        depth: Cell::new(0),
        memo: RefCell::default(),
        busy: RefCell::default(),
    };
    guess
        .guesses(loc, mask, path, fill)
        .into_iter()
        .find(|g| schema.accepts(loc, g) != Some(false))
}

struct Guess<'s> {
    schema: &'s Schema,
    depth: Cell<usize>,
    /// The example of each place, made once: a recursive schema's places are reached often.
    memo: RefCell<HashMap<(Loc, Types), Option<Value>>>,
    /// Places being made: reaching one again means a value would hold itself, so that way
    /// gives none (another branch, or leaving an optional member out, ends the recursion).
    busy: RefCell<HashSet<(Loc, Types)>>,
}

impl Guess<'_> {
    /// Candidate documents, the likeliest first.
    fn guesses(&self, loc: &Loc, mask: Types, path: &[Step], fill: Option<&Value>) -> Vec<Value> {
        if self.depth.get() > DEPTH {
            return Vec::new();
        }
        let Some((loc, value)) = self.schema.follow(loc, true) else {
            return Vec::new();
        };
        if let (Some(fill), []) = (fill, path) {
            return vec![fill.clone()];
        }
        let Some(map) = keywords(&value) else {
            return match value {
                Value::Bool(true) => self.of_type(&loc, &Map::new(), mask, path, fill),
                _ => Vec::new(),
            };
        };
        let mut out = Vec::new();
        if path.is_empty() {
            // What the author wrote as an example is the best guess.
            for key in ["const", "default"] {
                out.extend(map.get(key).cloned());
            }
            if let Some(Value::Array(values)) = map.get("examples") {
                out.extend(values.iter().cloned());
            }
            if let Some(Value::Array(values)) = map.get("enum") {
                out.extend(values.iter().cloned());
            }
            out.retain(|v| mask.contains(Types::of_value(v)));
        }
        for keyword in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                // A branch may lead back here: it counts as a step down.
                self.depth.set(self.depth.get() + 1);
                for i in 0..branches.len() {
                    out.extend(self.guesses(&loc.index(keyword, i), mask, path, fill));
                }
                self.depth.set(self.depth.get() - 1);
            }
        }
        out.extend(self.of_type(&loc, map, mask, path, fill));
        out
    }

    /// Guesses by JSON type: each type the schema admits, in `mask`.
    fn of_type(
        &self,
        loc: &Loc,
        map: &Map<String, Value>,
        mask: Types,
        path: &[Step],
        fill: Option<&Value>,
    ) -> Vec<Value> {
        let declared = map
            .get("type")
            .and_then(Types::of_keyword)
            .unwrap_or(Types::ALL);
        let types = declared & mask;
        let mut out = Vec::new();
        match path.first() {
            Some(Step::Key(_) | Step::Other) if types.contains(Types::OBJECT) => {
                out.extend(self.object(loc, map, path, fill));
            }
            Some(Step::Item(_) | Step::Items) if types.contains(Types::ARRAY) => {
                out.extend(self.array(loc, map, path, fill));
            }
            Some(_) => {}
            None => {
                for t in types.each() {
                    out.extend(self.scalar_or_container(loc, map, t));
                }
            }
        }
        out
    }

    fn scalar_or_container(&self, loc: &Loc, map: &Map<String, Value>, t: Types) -> Vec<Value> {
        match t {
            Types::OBJECT => self.object(loc, map, &[], None).into_iter().collect(),
            Types::ARRAY => self.array(loc, map, &[], None).into_iter().collect(),
            Types::STRING => strings(map),
            Types::INTEGER => numbers(map, true),
            Types::FRACTION => numbers(map, false),
            Types::BOOLEAN => vec![json!(false), json!(true)],
            _ => vec![Value::Null],
        }
    }

    /// An object with the required members (and the one on `path`).
    fn object(
        &self,
        loc: &Loc,
        map: &Map<String, Value>,
        path: &[Step],
        fill: Option<&Value>,
    ) -> Option<Value> {
        let properties = map.get("properties").and_then(Value::as_object);
        let mut out = Map::new();
        let required = map.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            let at = member_schema(loc, properties, name);
            let value = self.first(&at, Types::ALL, &[], None)?;
            out.insert(name.to_owned(), value);
        }
        match path.split_first() {
            Some((Step::Key(name), rest)) => {
                let at = member_schema(loc, properties, name);
                let value = self.first(&at, Types::ALL, rest, fill)?;
                out.insert(name.clone(), value);
            }
            Some((Step::Other, rest)) => {
                let name = unused_key(properties);
                let at = loc.child("additionalProperties");
                let value = self.first(&at, Types::ALL, rest, fill)?;
                out.insert(name, value);
            }
            _ => {}
        }
        Some(Value::Object(out))
    }

    /// An array of `minItems` items (and the one on `path`).
    fn array(
        &self,
        loc: &Loc,
        map: &Map<String, Value>,
        path: &[Step],
        fill: Option<&Value>,
    ) -> Option<Value> {
        let prefix = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let (at_index, rest) = match path.split_first() {
            Some((Step::Item(i), rest)) => (Some(*i), rest),
            Some((Step::Items, rest)) => (Some(prefix), rest),
            _ => (None, path),
        };
        let len = min.max(at_index.map_or(0, |i| i + 1)).min(64);
        let mut items = Vec::with_capacity(len);
        for i in 0..len {
            let at = if i < prefix {
                loc.index("prefixItems", i)
            } else {
                loc.child("items")
            };
            let item = if Some(i) == at_index {
                self.first(&at, Types::ALL, rest, fill)?
            } else {
                self.first(&at, Types::ALL, &[], None)?
            };
            items.push(item);
        }
        Some(Value::Array(items))
    }

    /// The first guess the schema at `loc` accepts, else the first guess; made once per place.
    fn first(&self, loc: &Loc, mask: Types, path: &[Step], fill: Option<&Value>) -> Option<Value> {
        let key = (loc.clone(), mask);
        let plain = path.is_empty() && fill.is_none();
        if plain {
            if let Some(known) = self.memo.borrow().get(&key) {
                return known.clone();
            }
            if !self.busy.borrow_mut().insert(key.clone()) {
                return None;
            }
        }
        self.depth.set(self.depth.get() + 1);
        let guesses = self.guesses(loc, mask, path, fill);
        self.depth.set(self.depth.get() - 1);
        let accepted = guesses
            .iter()
            .find(|g| self.schema.accepts(loc, g) == Some(true))
            .cloned();
        let made = accepted.or_else(|| guesses.into_iter().next());
        if plain {
            self.busy.borrow_mut().remove(&key);
            self.memo.borrow_mut().insert(key, made.clone());
        }
        made
    }
}

/// The schema of member `name`: its `properties` entry, else `additionalProperties`.
fn member_schema(loc: &Loc, properties: Option<&Map<String, Value>>, name: &str) -> Loc {
    match properties {
        Some(p) if p.contains_key(name) => loc.entry("properties", name),
        _ => loc.child("additionalProperties"),
    }
}

/// A member name `properties` does not declare.
pub fn unused_key(properties: Option<&Map<String, Value>>) -> String {
    let mut name = "unexpected".to_owned();
    while properties.is_some_and(|p| p.contains_key(&name)) {
        name.push('_');
    }
    name
}

/// Strings within the length bounds, formatted when a common `format` is named.
fn strings(map: &Map<String, Value>) -> Vec<Value> {
    let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = map
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut out = Vec::new();
    if let Some(format) = map.get("format").and_then(Value::as_str) {
        let sample = match format {
            "date-time" => "2026-01-01T00:00:00Z",
            "date" => "2026-01-01",
            "time" => "00:00:00Z",
            "uuid" => "00000000-0000-4000-8000-000000000000",
            "email" => "a@example.com",
            "uri" | "iri" => "https://example.com/",
            "uri-reference" | "iri-reference" => "a",
            "hostname" | "idn-hostname" => "example.com",
            "ipv4" => "192.0.2.1",
            "ipv6" => "2001:db8::1",
            "duration" => "P1D",
            _ => "",
        };
        if !sample.is_empty() {
            out.push(json!(sample));
        }
    }
    let len = min.min(max.unwrap_or(usize::MAX)).min(4096);
    out.push(json!("a".repeat(len.max(usize::from(min > 0)))));
    out.push(json!("a".repeat(len)));
    out
}

/// Numbers within the bounds: integral ones when `integral`, else non-integral ones.
fn numbers(map: &Map<String, Value>, integral: bool) -> Vec<Value> {
    let lower = ["minimum", "exclusiveMinimum"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_f64))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let upper = ["maximum", "exclusiveMaximum"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_f64))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
    let step = map.get("multipleOf").and_then(Value::as_f64);
    let base = match (lower, upper) {
        (Some(l), _) => l,
        (None, Some(u)) => u.min(0.0),
        (None, None) => 0.0,
    };
    let mut out = Vec::new();
    let candidates = if integral {
        let b = base.ceil();
        vec![b, b + 1.0, b - 1.0]
    } else {
        vec![base + 0.5, base - 0.5, base + 0.25]
    };
    for c in candidates {
        let c = match step {
            Some(s) if s > 0.0 && integral => (c / s).ceil() * s,
            _ => c,
        };
        out.push(number(c));
    }
    out
}

/// A JSON number, integral ones written as integers.
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}
