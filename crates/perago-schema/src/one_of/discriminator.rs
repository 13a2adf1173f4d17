//! OpenAPI's `discriminator` (`{"propertyName": …, "mapping": {…}}`), which Pydantic writes
//! beside the `oneOf` of a discriminated union: the one check both doors run, so a schema the
//! interpreter takes is one code generation types and the other way round.
//!
//! OpenAPI 3.1 defines it as a hint, not an assertion: which branch a document is stays
//! decided by the `oneOf` (docs/src/reference/pydantic.md §2.3). perago reads it as a
//! claim about the branches and holds it to them: every branch requires `propertyName` and
//! tags it with a `const` (or an `enum`) of its own, every `mapping` value names one of the
//! branches, and every `mapping` key is a tag of the branch it names. A contradiction is an
//! error at its JSON Pointer; when it agrees, the property is the one the branches are told
//! apart by ([`super::decider`]).

use super::{Decider, requires, tags_of};
use crate::error::LintError;
use crate::load::{Documents, pointer_token};
use serde_json::{Map, Value};

/// The keyword.
pub const KEYWORD: &str = "discriminator";

/// The `propertyName` of the `discriminator` of the schema `map`, when it has one.
pub fn property_name(map: &Map<String, Value>) -> Option<&str> {
    map.get(KEYWORD)?.get("propertyName")?.as_str()
}

/// Checks the `discriminator` of the schema `map`, at `pointer` of document `doc`, against the
/// branches of the `oneOf` (or `anyOf`) beside it; nothing when it has none. The errors point
/// into the keyword: at `propertyName` for a tag the branches do not agree with, at a
/// `mapping` entry for a value that names no branch or a key its branch does not tag.
pub fn check(
    docs: &mut Documents,
    doc: usize,
    pointer: &str,
    map: &Map<String, Value>,
) -> Vec<LintError> {
    let Some(value) = map.get(KEYWORD) else {
        return Vec::new();
    };
    let file = docs.get(doc).file.clone();
    let at = format!("{pointer}/{KEYWORD}");
    let error = |pointer: &str, keyword: &str, message: String| {
        vec![LintError::new(&file, pointer, keyword, message)]
    };
    let Value::Object(d) = value else {
        return error(
            pointer,
            KEYWORD,
            format!(
                "must be an object with a `propertyName` (OpenAPI's Discriminator Object), found {value}"
            ),
        );
    };
    if let Some(k) = d
        .keys()
        .find(|k| !matches!(k.as_str(), "propertyName" | "mapping") && !k.starts_with("x-"))
    {
        return error(
            &at,
            k,
            "not a member of OpenAPI's Discriminator Object, which has `propertyName` and `mapping` (and `x-` extensions)".to_owned(),
        );
    }
    let Some(name) = d.get("propertyName").and_then(Value::as_str) else {
        return error(
            &at,
            "propertyName",
            match d.get("propertyName") {
                None => {
                    "missing: it names the property whose value tells the branches apart".to_owned()
                }
                Some(other) => format!("must be the name of a property, found {other}"),
            },
        );
    };
    let mapping = match d.get("mapping") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return error(
                &at,
                "mapping",
                format!(
                    "must be an object of tag value → URI reference of a branch, found {other}"
                ),
            );
        }
    };
    let Some((keyword, Value::Array(list))) = ["oneOf", "anyOf"]
        .into_iter()
        .find_map(|k| map.get(k).map(|v| (k, v)))
    else {
        return error(
            pointer,
            KEYWORD,
            "stands beside no `oneOf` or `anyOf`: perago reads it as a claim about the branches it tells apart (OpenAPI's inheritance form, a `discriminator` on a schema the branches `allOf`, is not read)".to_owned(),
        );
    };
    // Each branch's chain of locations, its own first, then each `$ref` it leads through.
    let mut chains: Vec<Vec<(usize, String)>> = Vec::new();
    let mut resolved: Vec<(usize, Value)> = Vec::new();
    for (i, branch) in list.iter().enumerate() {
        let mut here = (doc, format!("{pointer}/{keyword}/{i}"));
        let mut chain = vec![here.clone()];
        let mut schema = branch.clone();
        while let Some(r) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            let Ok(next) = docs.resolve(here.0, &here.1, &r) else {
                break; // reported where the `$ref` is
            };
            if chain.contains(&next) {
                break;
            }
            schema = docs
                .get(next.0)
                .root
                .pointer(&next.1)
                .cloned()
                .unwrap_or(Value::Bool(true));
            chain.push(next.clone());
            here = next;
        }
        resolved.push((here.0, schema));
        chains.push(chain);
    }
    let tags = match tagged_on(&resolved, |d, s| follow(docs, d, s), name) {
        Ok(tags) => tags,
        Err(why) => {
            return error(
                &at,
                "propertyName",
                format!("{name:?} does not tell the `{keyword}` branches apart: {why}"),
            );
        }
    };
    let mut errors = Vec::new();
    for (key, target) in &mapping {
        let entry = format!("{at}/mapping/{}", pointer_token(key));
        let Some(reference) = target.as_str() else {
            errors.extend(error(
                &entry,
                "",
                format!(
                    "must be a URI reference to a branch (e.g. \"#/$defs/Name\"), found {target}"
                ),
            ));
            continue;
        };
        let named = match docs.resolve(doc, &entry, reference) {
            Ok(named) => named,
            Err(why) => {
                errors.extend(error(
                    &entry,
                    "",
                    format!("names no schema ({why}); perago reads a mapping value as a URI reference, as `$ref` is (e.g. \"#/$defs/Name\")"),
                ));
                continue;
            }
        };
        let Some(branch) = chains.iter().position(|c| c.contains(&named)) else {
            errors.extend(error(
                &entry,
                "",
                format!("{reference:?} names no branch of the `{keyword}` beside it"),
            ));
            continue;
        };
        let own = &tags[branch];
        if !own.iter().any(|t| key_of(t) == *key) {
            let values: Vec<String> = own.iter().map(Value::to_string).collect();
            errors.extend(error(
                &entry,
                "",
                format!(
                    "maps {key:?} to branch {branch}, which tags {name:?} with {}",
                    values.join(" or ")
                ),
            ));
        }
    }
    errors
}

/// A tag value as a `mapping` key: a string itself, an integer or a boolean as its JSON text.
fn key_of(tag: &Value) -> String {
    match tag {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Follows `$ref`s from a schema in document `doc` to the schema that says something.
fn follow(docs: &mut Documents, doc: usize, schema: &Value) -> Option<(usize, Value)> {
    let mut current = (doc, schema.clone(), String::new());
    for _ in 0..32 {
        let Some(r) = current.1.get("$ref").and_then(Value::as_str) else {
            return Some((current.0, current.1));
        };
        let (d, p) = docs.resolve(current.0, &current.2, r).ok()?;
        let v = docs.get(d).root.pointer(&p)?.clone();
        current = (d, v, p);
    }
    None
}

/// Per branch, its tags on property `name` (its `const`, or the values of its `enum`), when
/// every branch declares `name`, requires it and tags it with values no other branch gives;
/// else why not (a branch's number, what it does).
pub(super) fn tagged_on(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
    name: &str,
) -> Result<Vec<Vec<Value>>, String> {
    let mut tags: Vec<Vec<Value>> = Vec::new();
    for (i, (doc, branch)) in branches.iter().enumerate() {
        let Some(schema) = branch.get("properties").and_then(|p| p.get(name)) else {
            return Err(format!("branch {i} does not declare it in `properties`"));
        };
        let own = match follow(*doc, schema).as_ref().and_then(|(_, s)| tags_of(s)) {
            None => {
                return Err(format!(
                    "branch {i} declares it without a string, integer or boolean `const` (or an `enum` of such values)"
                ));
            }
            Some(Err(why)) => return Err(format!("branch {i} {why}")),
            Some(Ok(own)) => own,
        };
        if !requires(branch, name) {
            return Err(format!("branch {i} does not list it in `required`"));
        }
        if let Some((j, v)) = tags
            .iter()
            .enumerate()
            .find_map(|(j, u)| own.iter().find(|v| u.contains(v)).map(|v| (j, v)))
        {
            return Err(format!("branches {j} and {i} both tag it {v}"));
        }
        tags.push(own);
    }
    Ok(tags)
}

/// The [`Decider`] of branches told apart by the one property `name` (see [`tagged_on`]).
pub(super) fn decider_on(
    branches: &[(usize, Value)],
    follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
    name: &str,
) -> Result<Decider, String> {
    let tags = tagged_on(branches, follow, name)?;
    Ok(Decider {
        properties: vec![name.to_owned()],
        tags: tags.into_iter().map(|t| Some((0, t))).collect(),
        keys: Vec::new(),
        decision: None,
    })
}
