//! The compatibility analysis (`perago_compat`) against the truth, on schemas it was not written
//! for: every codegen fragment schema, in the closed form a TaskDef carries, paired with
//! systematic mutations of itself (each keyword tightened and loosened, members and required
//! names added and removed, objects opened and closed, types widened and narrowed, enum values
//! and `oneOf` branches added and removed, patterns added, defaults changed), compared both
//! ways. For each pair:
//!
//! - every witness is a document the first schema accepts and the second refuses (the
//!   interpreter decides);
//! - when the verdict is "compatible", documents generated from the first schema (valid ones
//!   and single mutations of them, `perago_tests::mutate`) that it accepts, the second accepts
//!   too. One that it does not is a missed break: the analysis is unsound.

use perago_codegen::{SchemaSet, bundle};
use perago_compat::{Labels, Loc, Schema, compare, compatible};
use perago_tests::mutate::{Generator, Optional};
use serde_json::{Map, Value, json};
use std::path::Path;

/// Mutations tried per schema at most (spread over its nodes).
const MUTATIONS: usize = 20;
/// Documents checked per "compatible" verdict at most (spread over the pool).
const CHECKED: usize = 400;
/// Base documents generated per compatible verdict (each with its mutations).
const BASES: usize = 3;

/// The closed standalone form of every fragment file's root, and documents around it:
/// `(label, schema, documents)`.
fn schemas() -> Vec<(String, Value, Vec<Value>)> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/perago-codegen/tests/fragments");
    let mut dirs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let only = std::env::var("PERAGO_COMPAT_ONLY").unwrap_or_default();
    let mut out = Vec::new();
    for d in dirs.iter().filter(|d| d.is_dir()) {
        let set = SchemaSet::load_dir(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for file in &set.files {
            if let Some(root) = file.root {
                let name = format!("{}/{}", d.file_name().unwrap().to_string_lossy(), file.file);
                if name.contains(&only) {
                    // Documents now, while the set is here; few and shallow (recursive schemas).
                    out.push((name, bundle::standalone(&set, root), documents(&set, root)));
                }
            }
        }
    }
    out
}

/// The JSON Pointers of the schema objects in a schema (its subschemas, `$defs` included).
fn nodes(schema: &Value, pointer: String, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    out.push(pointer.clone());
    for (k, v) in map {
        let at = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
        match k.as_str() {
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties" => nodes(v, at, out),
            "properties" | "$defs" | "patternProperties" | "dependentSchemas" => {
                for (name, s) in v.as_object().into_iter().flatten() {
                    nodes(
                        s,
                        format!("{at}/{}", name.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => {
                for (i, s) in v.as_array().into_iter().flatten().enumerate() {
                    nodes(s, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

/// The edits of one schema object, each a label and the edited object.
fn edits(map: &Map<String, Value>) -> Vec<(String, Map<String, Value>)> {
    let mut out = Vec::new();
    let mut edit = |label: String, f: &dyn Fn(&mut Map<String, Value>)| {
        let mut m = map.clone();
        f(&mut m);
        if m != *map {
            out.push((label, m));
        }
    };
    for (k, delta) in [
        ("minimum", 1.0),
        ("maximum", -1.0),
        ("exclusiveMinimum", 1.0),
        ("exclusiveMaximum", -1.0),
        ("minLength", 1.0),
        ("maxLength", -1.0),
        ("minItems", 1.0),
        ("maxItems", -1.0),
    ] {
        if let Some(x) = map.get(k).and_then(Value::as_f64) {
            for (how, d) in [("tightened", delta), ("loosened", -delta)] {
                let y = x + d;
                if y >= 0.0 || !k.ends_with("Length") && !k.ends_with("Items") {
                    edit(format!("{k} {how}"), &|m| {
                        m.insert(k.into(), json!(y as i64));
                    });
                }
            }
            edit(format!("{k} removed"), &|m| {
                m.remove(k);
            });
        }
    }
    for (k, v) in [
        ("minimum", json!(0)),
        ("maxLength", json!(3)),
        ("minItems", json!(1)),
        ("pattern", json!("^x")),
    ] {
        let applies = match k {
            "minimum" => map
                .get("type")
                .is_some_and(|t| t == "integer" || t == "number"),
            "maxLength" | "pattern" => map.get("type").is_some_and(|t| t == "string"),
            _ => map.get("type").is_some_and(|t| t == "array"),
        };
        if applies && !map.contains_key(k) {
            edit(format!("{k} added"), &|m| {
                m.insert(k.into(), v.clone());
            });
        }
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        for name in props.keys().take(3) {
            if required.contains(name) {
                edit(format!("{name} no longer required"), &|m| {
                    let r: Vec<Value> = required
                        .iter()
                        .filter(|r| *r != name)
                        .map(|r| json!(r))
                        .collect();
                    m.insert("required".into(), Value::Array(r));
                });
            } else {
                edit(format!("{name} required"), &|m| {
                    let mut r: Vec<Value> = required.iter().map(|r| json!(r)).collect();
                    r.push(json!(name));
                    m.insert("required".into(), Value::Array(r));
                });
            }
            edit(format!("{name} removed"), &|m| {
                if let Some(Value::Object(p)) = m.get_mut("properties") {
                    p.shift_remove(name);
                }
                if let Some(Value::Array(r)) = m.get_mut("required") {
                    r.retain(|x| x != name);
                }
            });
        }
        edit("member added".into(), &|m| {
            if let Some(Value::Object(p)) = m.get_mut("properties") {
                p.insert("added_member".into(), json!({"type": "string"}));
            }
        });
        edit("member added, required".into(), &|m| {
            if let Some(Value::Object(p)) = m.get_mut("properties") {
                p.insert("added_member".into(), json!({"type": "string"}));
            }
            let mut r: Vec<Value> = required.iter().map(|r| json!(r)).collect();
            r.push(json!("added_member"));
            m.insert("required".into(), Value::Array(r));
        });
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) => edit("opened".into(), &|m| {
            m.remove("additionalProperties");
        }),
        None if map.get("type").is_some_and(|t| t == "object") => edit("closed".into(), &|m| {
            m.insert("additionalProperties".into(), json!(false));
        }),
        _ => {}
    }
    match map.get("type") {
        Some(Value::String(t)) if t != "null" => {
            edit("type widened to null".into(), &|m| {
                m.insert("type".into(), json!([t, "null"]));
            });
            if t == "number" {
                edit("number narrowed to integer".into(), &|m| {
                    m.insert("type".into(), json!("integer"));
                });
            }
            if t == "integer" {
                edit("integer widened to number".into(), &|m| {
                    m.insert("type".into(), json!("number"));
                });
            }
        }
        Some(Value::Array(ts)) if ts.len() > 1 => {
            for i in 0..ts.len() {
                edit(format!("type {} dropped", ts[i]), &|m| {
                    let mut t = ts.clone();
                    t.remove(i);
                    m.insert("type".into(), Value::Array(t));
                });
            }
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        if values.len() > 1 {
            edit("enum value removed".into(), &|m| {
                m.insert("enum".into(), Value::Array(values[1..].to_vec()));
            });
        }
        edit("enum value added".into(), &|m| {
            let mut v = values.clone();
            v.push(json!("added_value"));
            m.insert("enum".into(), Value::Array(v));
        });
    }
    if let Some(c) = map.get("const") {
        edit("const changed".into(), &|m| {
            m.insert("const".into(), json!([c]));
        });
    }
    for k in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = map.get(k) {
            if branches.len() > 1 {
                edit(format!("{k} branch removed"), &|m| {
                    m.insert(
                        k.into(),
                        Value::Array(branches[..branches.len() - 1].to_vec()),
                    );
                });
            }
            edit(format!("{k} branch duplicated"), &|m| {
                let mut b = branches.clone();
                b.push(branches[0].clone());
                m.insert(k.into(), Value::Array(b));
            });
            edit(format!("{k} null branch added"), &|m| {
                let mut b = branches.clone();
                b.push(json!({"type": "null"}));
                m.insert(k.into(), Value::Array(b));
            });
        }
    }
    if map.contains_key("uniqueItems") {
        edit("uniqueItems removed".into(), &|m| {
            m.remove("uniqueItems");
        });
    } else if map.get("type").is_some_and(|t| t == "array") {
        edit("uniqueItems added".into(), &|m| {
            m.insert("uniqueItems".into(), json!(true));
        });
    }
    if map.contains_key("default") {
        edit("default changed".into(), &|m| {
            m.insert("default".into(), json!(null));
        });
    }
    out
}

/// Mutations of a whole schema: `(label, mutated schema)`, at most `MUTATIONS`, spread over its
/// nodes.
fn mutations(schema: &Value) -> Vec<(String, Value)> {
    let mut pointers = Vec::new();
    nodes(schema, String::new(), &mut pointers);
    let mut all = Vec::new();
    for p in &pointers {
        let Some(Value::Object(map)) = schema.pointer(p) else {
            continue;
        };
        for (label, edited) in edits(map) {
            let mut m = schema.clone();
            *m.pointer_mut(p).unwrap() = Value::Object(edited);
            all.push((format!("{p}: {label}"), m));
        }
    }
    if all.len() <= MUTATIONS {
        return all;
    }
    let step = all.len() as f64 / MUTATIONS as f64;
    (0..MUTATIONS)
        .map(|i| all[(i as f64 * step) as usize].clone())
        .collect()
}

/// Documents around a schema: generated valid ones and single mutations of each (which cross
/// every bound and rule the schema states, so they land on both sides of a mutated schema's),
/// from the fragment's own files, as the differential tests generate them.
fn documents(set: &SchemaSet, root: perago_codegen::ir::NodeId) -> Vec<Value> {
    let mut docs: Vec<Value> = Vec::new();
    for base in 0..BASES {
        let mut generator = Generator::new(set, 17 + base as u64);
        // Shallow: recursive fragments' documents stay small.
        generator.deep = 1;
        generator.optional = [Optional::Random, Optional::All, Optional::None][base % 3];
        generator.branch = Some(base);
        let valid = generator.valid(root);
        for m in generator.mutations(root, &valid) {
            let mut v = valid.clone();
            if m.op.apply(&mut v) {
                docs.push(v);
            }
        }
        docs.push(valid);
    }
    docs
}

#[test]
fn no_compatible_verdict_is_contradicted_and_every_witness_holds() {
    let labels = Labels {
        a: "A".into(),
        b: "B".into(),
    };
    let (mut pairs, mut compatible_pairs, mut checked, mut witnesses) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    for (name, schema, pool) in schemas() {
        let Ok(original) = Schema::from_value("s.json", &schema) else {
            continue;
        };
        for (label, mutated) in mutations(&schema) {
            let Ok(changed) = Schema::from_value("s.json", &mutated) else {
                continue;
            };
            let guesses: Vec<Value> = [&original, &changed]
                .iter()
                .filter_map(|s| perago_compat::example(s, &Loc::root(), perago_compat::Types::ALL))
                .collect();
            for (a, b, way) in [
                (&original, &changed, "original → mutated"),
                (&changed, &original, "mutated → original"),
            ] {
                pairs += 1;
                let changes = compare(a, &Loc::root(), b, &Loc::root(), &labels);
                for c in &changes {
                    if let Some(w) = &c.witness {
                        witnesses += 1;
                        assert_eq!(
                            a.accepts(&Loc::root(), w),
                            Some(true),
                            "{name} {label} {way}: witness {w} of {c:?}"
                        );
                        assert_eq!(
                            b.accepts(&Loc::root(), w),
                            Some(false),
                            "{name} {label} {way}: witness {w} of {c:?}"
                        );
                    }
                }
                if !compatible(&changes) {
                    continue;
                }
                compatible_pairs += 1;
                let step = pool.len().div_ceil(CHECKED).max(1);
                for doc in pool.iter().step_by(step).chain(&guesses) {
                    if a.accepts(&Loc::root(), doc) != Some(true) {
                        continue;
                    }
                    checked += 1;
                    if b.accepts(&Loc::root(), doc) != Some(true) {
                        missed.push(format!("{name}: {label} ({way}): called compatible, but {doc} is accepted by the first and refused by the second"));
                        break;
                    }
                }
            }
        }
    }
    eprintln!(
        "{pairs} pairs, {compatible_pairs} called compatible, {checked} documents checked against them, {witnesses} witnesses verified"
    );
    assert!(pairs > 1000, "{pairs} pairs");
    assert!(
        missed.is_empty(),
        "{} missed breaks:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
