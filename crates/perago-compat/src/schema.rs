//! [`Schema`]: a schema document compared by the analysis, with the interpreter that checks its
//! witnesses, and [`Loc`], a place in it.

use perago_schema::load::{Documents, pointer_token};
use perago_schema::{Error, Options, Validator, Violation};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;

/// A place in a [`Schema`]: one of its documents and a JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Loc {
    pub(crate) doc: usize,
    pub(crate) pointer: String,
}

impl Loc {
    /// The root of the schema's first document.
    pub fn root() -> Loc {
        Loc {
            doc: 0,
            pointer: String::new(),
        }
    }

    /// The place `pointer` (a JSON Pointer) in the first document.
    pub fn at(pointer: &str) -> Loc {
        Loc {
            doc: 0,
            pointer: pointer.to_owned(),
        }
    }

    /// The JSON Pointer of this place in its document.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The schema of keyword `keyword` here (`items`, `additionalProperties`).
    pub fn child(&self, keyword: &str) -> Loc {
        Loc {
            doc: self.doc,
            pointer: format!("{}/{}", self.pointer, pointer_token(keyword)),
        }
    }

    /// Schema `i` of keyword `keyword` here (`oneOf`, `prefixItems`).
    pub fn index(&self, keyword: &str, i: usize) -> Loc {
        Loc {
            doc: self.doc,
            pointer: format!("{}/{}/{i}", self.pointer, pointer_token(keyword)),
        }
    }

    /// Entry `name` of keyword `keyword` here (`properties`, `$defs`).
    pub fn entry(&self, keyword: &str, name: &str) -> Loc {
        Loc {
            doc: self.doc,
            pointer: format!(
                "{}/{}/{}",
                self.pointer,
                pointer_token(keyword),
                pointer_token(name)
            ),
        }
    }
}

/// A schema to compare, read as JSON Schema 2020-12 writes it (objects are open unless the
/// schema closes them: compare the closed form perago publishes, as a TaskDef carries it),
/// with the interpreter compiled from it, which every witness is checked against.
#[derive(Debug)]
pub struct Schema {
    docs: Mutex<Documents>,
    validator: Validator,
    /// Validators of subschemas, by location, made once.
    at: Mutex<HashMap<Loc, Option<Validator>>>,
}

/// The interpreter's options for compared schemas: the schema as written.
const AS_WRITTEN: Options = Options {
    close_objects: false,
};

impl Schema {
    /// One schema given as a value, named `name` in messages (its `$ref`s name only what is
    /// inside it).
    pub fn from_value(name: &str, schema: &Value) -> Result<Schema, Error> {
        let text = schema.to_string();
        let mut docs = Documents::default();
        docs.add_source(name, None, text.clone())?;
        let validator = Validator::load_sources([(name, text.as_str())], name, AS_WRITTEN)?;
        Ok(Schema::new(docs, validator))
    }

    /// A schema file and the sibling files its `$ref`s name.
    pub fn load_file(path: &std::path::Path) -> Result<Schema, Error> {
        let mut docs = Documents::default();
        docs.add_file(path)?;
        let validator = Validator::load_file_with(path, AS_WRITTEN)?;
        Ok(Schema::new(docs, validator))
    }

    /// The documents (a poisoned lock still holds them whole: they only grow).
    fn docs(&self) -> std::sync::MutexGuard<'_, Documents> {
        self.docs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn new(docs: Documents, validator: Validator) -> Schema {
        Schema {
            docs: Mutex::new(docs),
            validator,
            at: Mutex::default(),
        }
    }

    /// The schema at `loc`: `true` where nothing is (an absent keyword admits anything).
    pub(crate) fn value(&self, loc: &Loc) -> Value {
        let docs = self.docs();
        docs.get(loc.doc)
            .root
            .pointer(&loc.pointer)
            .cloned()
            .unwrap_or(Value::Bool(true))
    }

    /// `loc`, or one place standing for every absent keyword of its document (each admits
    /// anything): the places a walk has been, named so that it ends.
    pub(crate) fn canonical(&self, loc: &Loc) -> Loc {
        let absent = self
            .docs()
            .get(loc.doc)
            .root
            .pointer(&loc.pointer)
            .is_none();
        if absent {
            Loc {
                doc: loc.doc,
                pointer: "#absent".to_owned(),
            }
        } else {
            loc.clone()
        }
    }

    /// The schema at `loc` with its `$ref`s followed to the schema that says something: pure
    /// references are followed; a `$ref` beside other keywords is followed too when `drop_siblings`
    /// (what the siblings add only narrows what the schema accepts). `None` for a reference
    /// that leads nowhere or in a circle of references alone.
    pub(crate) fn follow(&self, loc: &Loc, drop_siblings: bool) -> Option<(Loc, Value)> {
        let mut loc = loc.clone();
        for _ in 0..64 {
            let value = self.value(&loc);
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                return Some((loc, value));
            };
            let pure = value
                .as_object()
                .is_some_and(|m| m.keys().all(|k| k == "$ref" || is_annotation(k)));
            if !pure && !drop_siblings {
                return Some((loc, value));
            }
            let (doc, pointer) = self.docs().resolve(loc.doc, &loc.pointer, reference).ok()?;
            loc = Loc { doc, pointer };
        }
        None
    }

    /// The schema at `loc`, its `$ref`s followed (what a `$ref`'s siblings add is left out).
    pub fn resolve(&self, loc: &Loc) -> Option<(Loc, Value)> {
        self.follow(loc, true)
    }

    /// Where the `$ref` written at `loc` leads.
    pub(crate) fn reference(&self, loc: &Loc) -> Option<Loc> {
        let value = self.value(loc);
        let reference = value.get("$ref").and_then(Value::as_str)?;
        let (doc, pointer) = self.docs().resolve(loc.doc, &loc.pointer, reference).ok()?;
        Some(Loc { doc, pointer })
    }

    /// Whether the subschema at `loc` accepts `document`; `None` when it cannot be told (no
    /// compiled schema there).
    pub fn accepts(&self, loc: &Loc, document: &Value) -> Option<bool> {
        self.violations_at(loc, document).map(|v| v.is_empty())
    }

    /// Every violation of `document` against the subschema at `loc`, as perago's runtime
    /// reports them (paths from `$` at `loc`); none when it cannot be told.
    pub fn violations(&self, loc: &Loc, document: &Value) -> Vec<Violation> {
        self.violations_at(loc, document).unwrap_or_default()
    }

    fn violations_at(&self, loc: &Loc, document: &Value) -> Option<Vec<Violation>> {
        let absent = {
            let docs = self.docs();
            docs.get(loc.doc).root.pointer(&loc.pointer).is_none()
        };
        if absent {
            // An absent keyword (`items`, `additionalProperties`) admits every value.
            return Some(Vec::new());
        }
        let mut cache = self.at.lock().unwrap_or_else(|e| e.into_inner());
        let validator = cache.entry(loc.clone()).or_insert_with(|| {
            if loc.doc == 0 && loc.pointer.is_empty() {
                return None;
            }
            let file = self.docs().get(loc.doc).file.clone();
            self.validator.at(&format!("{file}#{}", loc.pointer))
        });
        let validator = match validator {
            Some(v) => v,
            None if loc.doc == 0 && loc.pointer.is_empty() => &self.validator,
            None => return None,
        };
        Some(validator.validate_value(document))
    }

    /// A place as perago's messages name it: `file.json#/properties/a`.
    pub fn location(&self, loc: &Loc) -> String {
        let file = self.docs().get(loc.doc).file.clone();
        format!("{file}#{}", loc.pointer)
    }
}

/// Keywords that constrain nothing.
pub(crate) fn is_annotation(keyword: &str) -> bool {
    perago_schema::dialect::is_annotation(keyword)
        || matches!(
            keyword,
            "$schema" | "$id" | "$anchor" | "$defs" | "$comment"
        )
        || keyword.starts_with("x-")
}

/// The object of a schema, `None` for a boolean schema.
pub(crate) fn keywords(schema: &Value) -> Option<&Map<String, Value>> {
    schema.as_object()
}

/// Whether a schema admits every value: `true`, or an object of annotations only.
pub(crate) fn admits_all(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.keys().all(|k| is_annotation(k)),
        _ => false,
    }
}
