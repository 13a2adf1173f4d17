//! `schemars::JsonSchema` for generated types (the `schemars` feature): a type's schema is the
//! closed standalone schema its validator enforces ([`Contract::schema`]), with its `$defs`
//! moved into the generator's definitions, so that it composes with the schemas of other types
//! (a field of a struct that derives `JsonSchema`, an OpenAPI document's components).

use crate::Contract;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The schema of generated type `T` for `generator`: `T::schema()` without its `$schema`, its
/// `$defs` entries added to the generator's definitions (named `{T}_{entry}`, numbered when
/// another type took the name) and every `$ref` to them, or to the root, rewritten to where
/// they now are. The generator's transforms (draft-07's, OpenAPI's) then apply as to any schema.
pub fn json_schema<T: Contract + JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let mut root: Value = serde_json::from_str(T::schema()).expect("a generated schema is JSON");
    let Value::Object(map) = &mut root else {
        // A generated schema is an object; a boolean one stands as it is.
        return Schema::try_from(root).unwrap_or_default();
    };
    map.shift_remove("$schema");
    let defs = match map.shift_remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let base = definitions_base(generator);
    let prefix = T::schema_name();
    let names: HashMap<String, String> = defs
        .keys()
        .map(|entry| {
            let wanted = format!("{prefix}_{entry}");
            let mut name = wanted.clone();
            let mut n = 2;
            while generator.definitions().contains_key(&name) {
                name = format!("{wanted}{n}");
                n += 1;
            }
            (entry.clone(), name)
        })
        .collect();
    let mut this = None;
    let mut to_root = || {
        this.get_or_insert_with(|| {
            // `{"$ref": …}` to T's definition (`#` while T is the root); T is generating, so
            // this does not recurse.
            let reference = generator.subschema_for::<T>();
            reference
                .get("$ref")
                .and_then(Value::as_str)
                .unwrap_or("#")
                .to_owned()
        })
        .clone()
    };
    rewrite_refs(&mut root, &base, &names, &mut to_root);
    let mut moved = Vec::with_capacity(defs.len());
    for (entry, mut schema) in defs {
        rewrite_refs(&mut schema, &base, &names, &mut to_root);
        moved.push((names[&entry].clone(), schema));
    }
    generator.definitions_mut().extend(moved);
    Schema::try_from(root).expect("an object is a schema")
}

/// `#` followed by the generator's definitions path with no trailing `/` (`#/$defs`,
/// `#/definitions`, `#/components/schemas`).
fn definitions_base(generator: &SchemaGenerator) -> String {
    let path = &generator.settings().definitions_path;
    let path = path.strip_prefix('#').unwrap_or(path);
    format!("#{}", path.strip_suffix('/').unwrap_or(path))
}

/// Rewrites the `$ref`s under `value` that name the bundle's `$defs` (`#/$defs/E…`) or its root
/// (`#`, `#/…`) to where they now are; `to_root` gives the reference to the type itself.
fn rewrite_refs(
    value: &mut Value,
    base: &str,
    names: &HashMap<String, String>,
    to_root: &mut dyn FnMut() -> String,
) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(pointer) = reference.strip_prefix('#')
            {
                *reference = match pointer.strip_prefix("/$defs/") {
                    Some(rest) => {
                        let (entry, tail) = rest.split_once('/').unwrap_or((rest, ""));
                        let entry = crate::path::unescape_pointer_token(entry);
                        match names.get(&entry) {
                            Some(name) => {
                                let name = crate::path::pointer_token(name);
                                let slash = if tail.is_empty() { "" } else { "/" };
                                format!("{base}/{name}{slash}{tail}")
                            }
                            None => reference.clone(),
                        }
                    }
                    None => format!("{}{pointer}", to_root()),
                };
            }
            for child in map.values_mut() {
                rewrite_refs(child, base, names, to_root);
            }
        }
        Value::Array(items) => {
            for child in items {
                rewrite_refs(child, base, names, to_root);
            }
        }
        _ => {}
    }
}
