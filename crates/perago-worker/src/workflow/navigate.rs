//! Following a path of an expression (`result.items[0].id`) through a JSON Schema: to the
//! schemas of the values it can reach, whether it can reach nothing (an optional member, a
//! branch of a `oneOf` without it: Conductor then gives `null`), or where it leaves what the
//! schema declares.

use super::expr::Seg;
use perago_compat::{Loc, Schema, Types};
use serde_json::Value;

/// What a path reaches.
#[derive(Debug, Clone, PartialEq)]
pub enum Reach {
    /// The schemas of the values it reaches; `absent` says why it may reach none (a `null`);
    /// `list` that it names every item of an array (Conductor gives a list of them).
    Values {
        at: Vec<Loc>,
        absent: Option<String>,
        list: bool,
    },
    /// It names nothing the schema allows: why.
    Missing(String),
    /// It goes where this analysis does not follow: why.
    Unknown(String),
}

/// A fact known where the path is read: the value at `steps` (from the same root) is `value`
/// (a SWITCH case routed on it).
#[derive(Debug, Clone, PartialEq)]
pub struct Narrowing {
    pub steps: Vec<Seg>,
    pub value: Value,
}

/// Follows `steps` from `loc` in `schema`; branches of a `oneOf`/`anyOf` that cannot hold
/// under `narrowing` are left out.
pub fn reach(schema: &Schema, loc: &Loc, steps: &[Seg], narrowing: &[Narrowing]) -> Reach {
    let mut walk = Walk {
        schema,
        steps,
        narrowing,
        found: Vec::new(),
        absent: None,
        missing: None,
        unknown: None,
        list: false,
    };
    walk.go(loc, steps, 0, 0);
    if let Some(why) = walk.unknown {
        return Reach::Unknown(why);
    }
    if walk.found.is_empty() {
        return match (walk.missing, walk.absent) {
            (Some(why), _) => Reach::Missing(why),
            (None, absent) => Reach::Values {
                at: Vec::new(),
                absent: absent.or(Some("nothing".into())),
                list: walk.list,
            },
        };
    }
    Reach::Values {
        at: walk.found,
        absent: walk.absent.or(walk.missing),
        list: walk.list,
    }
}

struct Walk<'s> {
    schema: &'s Schema,
    /// The whole path, so a narrowing applies only where its own path passes.
    steps: &'s [Seg],
    narrowing: &'s [Narrowing],
    found: Vec<Loc>,
    absent: Option<String>,
    missing: Option<String>,
    unknown: Option<String>,
    list: bool,
}

/// How deep `$ref`s and branches are followed.
const DEPTH: usize = 48;

impl Walk<'_> {
    fn go(&mut self, loc: &Loc, steps: &[Seg], done: usize, depth: usize) {
        if depth > DEPTH {
            self.unknown
                .get_or_insert("the schema nests deeper than is followed".into());
            return;
        }
        let Some((loc, value)) = self.schema.resolve(loc) else {
            self.unknown.get_or_insert("a `$ref` leads nowhere".into());
            return;
        };
        let Some(map) = value.as_object() else {
            match value {
                Value::Bool(true) if steps.is_empty() => self.found.push(loc),
                Value::Bool(true) => {
                    self.unknown
                        .get_or_insert("the schema says nothing of what is there (`true`)".into());
                }
                _ => {
                    self.missing
                        .get_or_insert("the schema is `false`: nothing is there".into());
                }
            }
            return;
        };
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                for i in 0..branches.len() {
                    let branch = loc.index(keyword, i);
                    if self.holds(&branch, done) {
                        self.go(&branch, steps, done, depth + 1);
                    }
                }
                return;
            }
        }
        if map.contains_key("allOf") && !steps.is_empty() {
            self.unknown
                .get_or_insert("a member declared through `allOf` is not followed".into());
            return;
        }
        let Some((step, rest)) = steps.split_first() else {
            self.found.push(loc);
            return;
        };
        let types = map
            .get("type")
            .and_then(Types::of_keyword)
            .unwrap_or(Types::ALL);
        match step {
            Seg::Key(name) => {
                if !types.intersects(Types::OBJECT) {
                    self.missing.get_or_insert(format!(
                        "`{}` is {}, which has no member `{name}`",
                        at(loc.pointer()),
                        types.name()
                    ));
                    return;
                }
                let declared = map.get("properties").and_then(Value::as_object);
                let required = map
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|k| k == name));
                if !required {
                    self.absent.get_or_insert(format!(
                        "`{name}` is not required at {}",
                        at(loc.pointer())
                    ));
                }
                if types != Types::OBJECT {
                    self.absent.get_or_insert(format!(
                        "{} may be {}",
                        at(loc.pointer()),
                        (types - Types::OBJECT).name()
                    ));
                }
                if declared.is_some_and(|d| d.contains_key(name)) {
                    let next = loc.entry("properties", name);
                    self.go(&next, rest, done + 1, depth + 1);
                    return;
                }
                if map.contains_key("patternProperties") {
                    self.unknown.get_or_insert(format!(
                        "`{name}` may be a `patternProperties` member at {}",
                        at(loc.pointer())
                    ));
                    return;
                }
                match map.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let names: Vec<&str> = declared
                            .into_iter()
                            .flatten()
                            .map(|(k, _)| k.as_str())
                            .collect();
                        self.missing.get_or_insert(format!(
                            "{} declares no member `{name}`{}",
                            at(loc.pointer()),
                            if names.is_empty() {
                                String::new()
                            } else {
                                format!(" (it declares {})", names.join(", "))
                            }
                        ));
                    }
                    _ => {
                        self.go(
                            &loc.child("additionalProperties"),
                            rest,
                            done + 1,
                            depth + 1,
                        );
                    }
                }
            }
            Seg::Index(_) | Seg::Wildcard => {
                if !types.intersects(Types::ARRAY) {
                    self.missing.get_or_insert(format!(
                        "`{}` is {}, which has no items",
                        at(loc.pointer()),
                        types.name()
                    ));
                    return;
                }
                let prefix = map
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let next = match step {
                    Seg::Index(i) => {
                        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                        if (*i as u64) >= min {
                            self.absent.get_or_insert(format!(
                                "{} may have fewer than {} items",
                                at(loc.pointer()),
                                i + 1
                            ));
                        }
                        if *i < prefix {
                            loc.index("prefixItems", *i)
                        } else {
                            loc.child("items")
                        }
                    }
                    _ => {
                        if self.list {
                            self.unknown
                                .get_or_insert("a path with two `[*]` is not followed".into());
                            return;
                        }
                        self.list = true;
                        if prefix > 0 {
                            self.unknown
                                .get_or_insert("`[*]` over `prefixItems` is not followed".into());
                            return;
                        }
                        loc.child("items")
                    }
                };
                self.go(&next, rest, done + 1, depth + 1);
            }
        }
    }

    /// Whether a branch reached after `done` steps can hold under the narrowings: the value
    /// each names, followed inside the branch, can be what the narrowing says.
    fn holds(&self, branch: &Loc, done: usize) -> bool {
        self.narrowing.iter().all(|n| {
            if n.steps.len() < done || n.steps[..done] != self.steps[..done] {
                return true;
            }
            let rest = &n.steps[done..];
            match reach(self.schema, branch, rest, &[]) {
                Reach::Values {
                    at,
                    absent,
                    list: false,
                } => {
                    (absent.is_some() && n.value.is_null())
                        || at
                            .iter()
                            .any(|l| self.schema.accepts(l, &n.value) != Some(false))
                }
                Reach::Missing(_) => n.value.is_null(),
                _ => true,
            }
        })
    }
}

/// A JSON Pointer as a place in a schema: `#/properties/result`.
pub fn at(pointer: &str) -> String {
    format!("#{pointer}")
}
