//! Differential test of the interpreter against the `jsonschema` crate on the keywords of
//! JSON Schema 2020-12 beyond the contract subset: one schema family per keyword (or group of
//! keywords that only make sense together), thousands of documents each: documents drawn from
//! a pool of values the family's keywords care about (bounds, formats, lengths, the family's
//! property names), and systematic mutations of each (every member removed, every value
//! replaced, items added, repeated and removed, members added).
//!
//! Per document:
//! 1. read as JSON Schema writes it (`close_objects: false`), the interpreter's verdict is
//!    jsonschema's, always;
//! 2. with perago's closed-object policy, where the verdict differs, jsonschema accepts and
//!    perago reports `unknown_field`s (closing narrows; counted and printed);
//! 3. from bytes and from a parsed value, the interpreter reports the same violations.
//!
//! Each family must produce both verdicts in numbers (at least 5% of each), so a family
//! that only ever accepts (or rejects) cannot pass unnoticed.

use perago_schema::{Code, Options, Validator};
use perago_tests::mutate::Rng;
use serde_json::{Map, Value, json};

/// Documents per family at least: base documents, each with its mutations.
const DOCS: usize = 3_000;

fn families() -> Vec<(&'static str, Value, &'static [&'static str])> {
    vec![
        (
            "type arrays and keywords without a type",
            json!({"type": ["string", "integer", "null", "array"], "minLength": 2, "maximum": 10,
                   "items": {"type": "integer"}, "maxItems": 3}),
            &[],
        ),
        (
            "object keywords without a type",
            json!({"properties": {"a": {"minimum": 3}, "b": {"maxLength": 2}}, "required": ["a"],
                   "minItems": 1}),
            &["a", "b"],
        ),
        (
            "allOf",
            json!({"allOf": [
                {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}},
                {"maxProperties": 3}
            ]}),
            &["a", "b"],
        ),
        (
            "anyOf",
            json!({"anyOf": [
                {"type": "string", "maxLength": 2},
                {"type": "integer", "minimum": 5},
                {"type": "object", "required": ["a"]}
            ]}),
            &["a"],
        ),
        (
            "oneOf",
            json!({"oneOf": [
                {"type": "integer"},
                {"minimum": 2},
                {"type": "string", "pattern": "^a"}
            ]}),
            &[],
        ),
        (
            "oneOf of closed objects discriminated by tests of their members",
            json!({"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "n": {"type": "integer"}},
                 "required": ["kind"], "additionalProperties": false},
                {"type": "object", "properties": {"v": {"type": "string"}, "u": {"type": "string"}},
                 "required": ["v", "u"], "additionalProperties": false},
                {"type": "object", "properties": {"v": {"type": "string"}, "u": {"type": "null"}},
                 "required": ["u", "v"], "additionalProperties": false},
                {"type": "object", "properties": {"v": {"type": "number"}, "w": {"type": "boolean"}},
                 "required": ["v"], "additionalProperties": false}
            ]}),
            &["kind", "n", "v", "u", "w"],
        ),
        (
            "not",
            json!({"not": {"anyOf": [{"type": "string"}, {"required": ["a"]}]}}),
            &["a"],
        ),
        (
            "if then else",
            json!({"type": "object",
                   "properties": {"status": {"enum": ["OK", "FAILED"]}, "reason": {"type": "string"}},
                   "if": {"properties": {"status": {"const": "FAILED"}}, "required": ["status"]},
                   "then": {"required": ["reason"]},
                   "else": {"not": {"required": ["reason"]}}}),
            &["status", "reason"],
        ),
        (
            "prefixItems and items",
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                   "items": {"type": "boolean"}, "maxItems": 4}),
            &[],
        ),
        (
            "contains, minContains, maxContains",
            json!({"contains": {"type": "integer", "minimum": 3}, "minContains": 2, "maxContains": 3}),
            &[],
        ),
        (
            "uniqueItems",
            json!({"type": "array", "uniqueItems": true}),
            &[],
        ),
        (
            "patternProperties, propertyNames, additionalProperties, min/maxProperties",
            json!({"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
                   "propertyNames": {"maxLength": 4}, "additionalProperties": {"type": "string"},
                   "minProperties": 1, "maxProperties": 3}),
            &["x_1", "x_y", "a", "long_key"],
        ),
        (
            "dependentRequired and dependentSchemas",
            json!({"dependentRequired": {"a": ["b"]},
                   "dependentSchemas": {"c": {"properties": {"d": {"type": "integer"}}, "required": ["d"]}}}),
            &["a", "b", "c", "d"],
        ),
        (
            "multipleOf",
            json!({"anyOf": [{"type": "integer", "multipleOf": 3}, {"type": "number", "multipleOf": 0.5, "maximum": 4}]}),
            &[],
        ),
        (
            "format",
            json!({"type": "object", "properties": {
                "dt": {"format": "date-time"}, "d": {"format": "date"}, "t": {"format": "time"},
                "e": {"format": "email"}, "h": {"format": "hostname"}, "v4": {"format": "ipv4"},
                "v6": {"format": "ipv6"}, "u": {"format": "uuid"}, "uri": {"format": "uri"},
                "jp": {"format": "json-pointer"}, "du": {"format": "duration"}}}),
            &["dt", "d", "t", "e", "h", "v4", "v6", "u", "uri", "jp", "du"],
        ),
        (
            "$ref, $anchor and $id anywhere",
            json!({"$id": "https://example.test/root.json",
                   "$defs": {
                     "pos": {"$anchor": "pos", "type": "integer", "minimum": 1},
                     "inner": {"$id": "inner.json", "type": "array", "items": {"$ref": "#/$defs/s"},
                               "$defs": {"s": {"type": "string"}}}
                   },
                   "properties": {"a": {"$ref": "#pos"}, "b": {"$ref": "inner.json"},
                                  "c": {"$ref": "#/$defs/pos", "maximum": 5}}}),
            &["a", "b", "c"],
        ),
        (
            "unevaluatedProperties",
            json!({"properties": {"a": {}},
                   "allOf": [{"properties": {"b": {}}}],
                   "anyOf": [{"properties": {"c": {"type": "integer"}}, "required": ["c"]},
                             {"properties": {"d": {}}, "required": ["d"]}],
                   "unevaluatedProperties": {"type": "string"}}),
            &["a", "b", "c", "d", "x_1"],
        ),
        (
            "unevaluatedItems",
            json!({"prefixItems": [{"type": "string"}],
                   "allOf": [{"prefixItems": [true, {"type": "integer"}]}],
                   "anyOf": [{"contains": {"type": "boolean"}}, true],
                   "unevaluatedItems": false}),
            &[],
        ),
        (
            "boolean subschemas",
            json!({"anyOf": [false, {"type": "array", "prefixItems": [true, false]},
                             {"type": "object", "properties": {"no": false, "yes": true}}]}),
            &["no", "yes"],
        ),
        (
            "const and enum of any value",
            json!({"anyOf": [{"const": {"k": [1, 2.0]}}, {"enum": [1, "a", null, [1, 2], {"k": 1}]}]}),
            &["k"],
        ),
    ]
}

/// Valid documents of each family, which their mutations take apart.
fn seeds(family: &str) -> Vec<Value> {
    match family {
        "oneOf" => vec![json!(1.5), json!("abc"), json!(true), json!("b")],
        "oneOf of closed objects discriminated by tests of their members" => vec![
            json!({"kind": "a", "n": 1}),
            json!({"v": "s", "u": "t"}),
            json!({"u": null, "v": "s"}),
            json!({"v": 1.5, "w": true}),
            json!({"v": 2}),
        ],
        "not" => vec![json!(1), json!({"b": 1}), json!([1, "a"]), json!(null)],
        "if then else" => vec![
            json!({"status": "FAILED", "reason": "r"}),
            json!({"status": "OK"}),
            json!({}),
        ],
        "prefixItems and items" => vec![json!(["a", 1]), json!(["a", 1, true, false]), json!([])],
        "patternProperties, propertyNames, additionalProperties, min/maxProperties" => vec![
            json!({"x_1": 1, "a": "s"}),
            json!({"x_y": 2}),
            json!({"a": "s", "b": "t", "x_1": 3}),
        ],
        "multipleOf" => vec![json!(3), json!(1.5), json!(9), json!(0), json!(4.0)],
        "const and enum of any value" => vec![
            json!({"k": [1, 2]}),
            json!([1, 2]),
            json!({"k": 1}),
            json!("a"),
            json!(null),
        ],
        "format" => vec![json!({
            "dt": "2026-12-01T21:30:00Z", "d": "2026-12-01", "t": "21:30:00Z",
            "e": "joe@example.com", "h": "example.com", "v4": "192.168.0.1", "v6": "::1",
            "u": "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "uri": "http://x.test/a?b#c",
            "jp": "/a/b~0", "du": "P1DT2H"
        })],
        _ => Vec::new(),
    }
}

fn strings() -> Vec<&'static str> {
    vec![
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "x_1",
        "OK",
        "FAILED",
        "2026-12-01T21:30:00Z",
        "2026-12-01T21:30:00.5+02:00",
        "2026-02-30T00:00:00Z",
        "2026-12-01",
        "2026-13-01",
        "21:30:00Z",
        "25:00:00Z",
        "joe@example.com",
        "joe..x@example.com",
        "example.com",
        "-bad-.com",
        "192.168.0.1",
        "256.1.1.1",
        "::1",
        "1::2::3",
        "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
        "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
        "http://x.test/a?b#c",
        "not a uri",
        "/a/b~0",
        "/a~2",
        "P1DT2H",
        "PT",
        "P2W",
    ]
}

/// A value from the pool: the family's keys for objects.
fn value(rng: &mut Rng, keys: &[&str], depth: usize) -> Value {
    let kind = if depth >= 2 {
        rng.below(4)
    } else {
        rng.below(7)
    };
    match kind {
        0 => Value::String((*rng.pick(&strings())).to_owned()),
        1 => {
            let nums = [
                json!(0),
                json!(1),
                json!(2),
                json!(3),
                json!(4),
                json!(5),
                json!(6),
                json!(9),
                json!(10),
                json!(11),
                json!(-1),
                json!(1.5),
                json!(2.0),
                json!(2.5),
                json!(0.5),
                json!(4.5),
                json!(1e3),
            ];
            rng.pick(&nums).clone()
        }
        2 => Value::Bool(rng.chance(1, 2)),
        3 => Value::Null,
        4 | 5 => {
            let n = rng.below(6);
            let mut items: Vec<Value> = (0..n).map(|_| value(rng, keys, depth + 1)).collect();
            if n > 1 && rng.chance(1, 3) {
                let i = rng.below(n);
                items.push(items[i].clone());
            }
            Value::Array(items)
        }
        _ => {
            let mut map = Map::new();
            let generic = [
                "a", "b", "c", "d", "k", "x_1", "status", "reason", "long_key",
            ];
            for _ in 0..rng.below(5) {
                let key = if !keys.is_empty() && rng.chance(3, 4) {
                    *rng.pick(keys)
                } else {
                    *rng.pick(&generic)
                };
                map.insert(key.to_owned(), value(rng, keys, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// Every systematic mutation of `doc`: members removed, values replaced, items repeated,
/// removed and added, members added; at every level.
fn mutations(rng: &mut Rng, doc: &Value, keys: &[&str], out: &mut Vec<Value>) {
    out.push(value(rng, keys, 2));
    match doc {
        Value::Object(map) => {
            for k in map.keys() {
                let mut m = map.clone();
                m.shift_remove(k);
                out.push(Value::Object(m));
                let mut inner = Vec::new();
                mutations(rng, &map[k], keys, &mut inner);
                for v in inner.into_iter().take(4) {
                    let mut m = map.clone();
                    m.insert(k.clone(), v);
                    out.push(Value::Object(m));
                }
            }
            let mut m = map.clone();
            let key = if keys.is_empty() {
                "x_1"
            } else {
                *rng.pick(keys)
            };
            m.insert(key.to_owned(), value(rng, keys, 1));
            out.push(Value::Object(m));
        }
        Value::Array(items) => {
            for i in 0..items.len() {
                let mut a = items.clone();
                a.remove(i);
                out.push(Value::Array(a));
                let mut a = items.clone();
                a[i] = value(rng, keys, 2);
                out.push(Value::Array(a));
            }
            if let Some(first) = items.first() {
                let mut a = items.clone();
                a.push(first.clone());
                out.push(Value::Array(a));
            }
            let mut a = items.clone();
            a.push(value(rng, keys, 2));
            out.push(Value::Array(a));
        }
        _ => {}
    }
}

#[test]
fn interpreter_agrees_with_jsonschema_on_every_keyword_family() {
    let mut failures = Vec::new();
    for (name, schema, keys) in families() {
        let js = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{name}: jsonschema cannot compile it: {e}"));
        let open = Validator::from_value(
            &schema,
            Options {
                close_objects: false,
            },
        )
        .unwrap_or_else(|e| panic!("{name}: perago refuses it: {e}"));
        let closed = Validator::from_value(&schema, Options::default())
            .unwrap_or_else(|e| panic!("{name}: perago refuses it: {e}"));
        let mut rng = Rng::new(
            name.bytes()
                .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
        );
        let valid_seeds = seeds(name);
        let mut docs = Vec::new();
        while docs.len() < DOCS {
            // Half the bases are valid documents written for the family, half drawn at random;
            // the mutations of each do the rest.
            let base = if !valid_seeds.is_empty() && rng.chance(1, 2) {
                rng.pick(&valid_seeds).clone()
            } else {
                value(&mut rng, keys, 0)
            };
            mutations(&mut rng, &base, keys, &mut docs);
            docs.push(base);
        }
        let (mut valid, mut invalid, mut by_policy) = (0usize, 0usize, 0usize);
        for doc in &docs {
            let bytes = serde_json::to_vec(doc).expect("serialisable");
            let expected = js.is_valid(doc);
            let got = open.validate_slice(&bytes);
            if expected {
                valid += 1
            } else {
                invalid += 1
            }
            if got.is_empty() != expected {
                failures.push(format!(
                    "{name}: open: jsonschema says {}, perago {:?}\n    doc: {doc}",
                    if expected { "valid" } else { "invalid" },
                    got
                ));
                continue;
            }
            let from_value = open.validate_value(doc);
            if from_value != got {
                failures.push(format!(
                    "{name}: bytes and value differ: {got:?} / {from_value:?}\n    doc: {doc}"
                ));
            }
            let closed_got = closed.validate_slice(&bytes);
            if closed_got.is_empty() != expected {
                if expected && closed_got.iter().any(|v| v.code == Code::UnknownField) {
                    by_policy += 1;
                } else {
                    failures.push(format!(
                        "{name}: closed: jsonschema says {}, perago {:?}\n    doc: {doc}",
                        if expected { "valid" } else { "invalid" },
                        closed_got
                    ));
                }
            }
        }
        eprintln!(
            "{name}: {} documents, {valid} valid and {invalid} invalid for jsonschema; {by_policy} closed by perago's policy",
            docs.len()
        );
        if valid * 20 < docs.len() || invalid * 20 < docs.len() {
            failures.push(format!(
                "{name}: {valid} valid, {invalid} invalid: the family must exercise both verdicts"
            ));
        }
    }
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} documents disagree (first 20 above)",
        failures.len()
    );
}
