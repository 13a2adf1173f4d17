//! What `fragments.rs` and `pydantic.rs` hold every generated type to: documents generated
//! and mutated from a type's schema (see `perago_tests::mutate`), each checked against the
//! generated reader, serde's `Deserialize`, the interpreter and, for the verdict, the
//! `jsonschema` crate on the type's standalone schema (`check_set`; the rules are listed at
//! the top of `fragments.rs`).

use perago::Contract;
use perago_codegen::NodeId;
use perago_codegen::SchemaSet;
use perago_codegen::ir::Shape;
use perago_schema::Violation;
use perago_schema::{Options, Validator};
use perago_tests::mutate::{Generator, Optional, byte_variants};
use perago_tests::schemas::node_at;
use serde_json::Value;
use std::collections::HashSet;
use std::fmt::{Debug, Write as _};

/// Valid documents generated per type; each is mutated.
pub const BASES: usize = 9;
/// Single mutations kept per valid document at most: every k-th, from an offset that differs
/// between documents (those of recursive schemas have thousands).
pub const SINGLES: usize = 400;
/// Random multi-mutation documents per valid document.
pub const COMBOS: usize = 16;
/// How deep generated documents go before optional properties stop (recursive schemas).
pub const DEEP: usize = 1;
/// Byte-level variants for every this many valid documents.
pub const BYTES_EVERY: usize = 3;
/// Failures printed in full.
pub const PRINT: usize = 12;
/// Single mutations written again with every object's keys in reverse order (a `oneOf`'s
/// discriminator after the keys it decides), one in this many.
pub const REVERSED_EVERY: usize = 3;

/// One document: its bytes, and the value they parse to (when they are JSON).
pub struct Doc {
    pub label: String,
    pub bytes: Vec<u8>,
    /// What serde reads: with a repeated key, its last occurrence.
    pub value: Option<Value>,
    /// The bytes repeat a key, which every perago door rejects; `value` is then another
    /// document, checked on its own.
    pub duplicate: bool,
}

/// The documents of node `root`, in a fixed order from a fixed seed, without duplicates.
/// Every generated base document must be valid (a `pattern` the generator cannot meet needs a
/// `patterns` entry), or the typed values would go untested.
pub fn documents(
    set: &SchemaSet,
    interpreter: &Validator,
    root: NodeId,
    seed: u64,
    patterns: &[&str],
) -> Vec<Doc> {
    let mut generator = Generator::new(set, seed);
    generator.pattern_examples = patterns.iter().map(|s| (*s).to_owned()).collect();
    generator.deep = DEEP;
    let mut seen = HashSet::new();
    let mut docs = Vec::new();
    let mut push = |label: String, bytes: Vec<u8>| {
        if seen.insert(bytes.clone()) {
            let value = serde_json::from_slice(&bytes).ok();
            let duplicate = matches!(
                perago_schema::json::parse_strict_slice(&bytes),
                Err(perago_schema::json::ParseError::DuplicateKey { .. })
            );
            docs.push(Doc {
                label,
                bytes,
                value,
                duplicate,
            });
        }
    };
    let json = |v: &Value| serde_json::to_vec(v).expect("serialisable");
    for base in 0..BASES {
        generator.optional = [Optional::Random, Optional::All, Optional::None][base % 3];
        generator.branch = Some(base);
        let valid = generator.valid(root);
        let v = interpreter.validate_value(&valid);
        assert!(v.is_empty(), "generated base {valid} is invalid: {v:?}");
        push(format!("base {base}: valid"), json(&valid));
        push(
            format!("base {base}: valid, keys reversed"),
            json(&reversed(&valid)),
        );
        let mutations = generator.mutations(root, &valid);
        let k = mutations.len().div_ceil(SINGLES).max(1);
        for (i, m) in mutations.iter().skip(base % k).step_by(k).enumerate() {
            let mut v = valid.clone();
            assert!(m.op.apply(&mut v), "mutation {} does not apply", m.label);
            push(format!("base {base}: {}", m.label), json(&v));
            if i % REVERSED_EVERY == 0 {
                push(
                    format!("base {base}: {}, keys reversed", m.label),
                    json(&reversed(&v)),
                );
            }
        }
        for c in 0..COMBOS.min(mutations.len()) {
            let mut v = valid.clone();
            let mut labels = Vec::new();
            for _ in 0..2 + generator.rng.below(2) {
                let m = generator.rng.pick(&mutations);
                if m.op.apply(&mut v) {
                    labels.push(m.label.as_str());
                }
            }
            push(
                format!("base {base} combo {c}: {}", labels.join(" + ")),
                json(&v),
            );
        }
        if base.is_multiple_of(BYTES_EVERY) {
            for b in byte_variants(&valid, &mutations, 7) {
                push(format!("base {base}: {}", b.label), b.bytes);
            }
        }
    }
    docs
}

/// `v` with the members of every object in reverse order.
pub fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, x)| (k.clone(), reversed(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

pub fn violations<T>(r: &Result<T, perago::Violations>) -> Vec<Violation> {
    match r {
        Ok(_) => Vec::new(),
        Err(v) => v.clone().into_vec(),
    }
}

/// Checks one document against a generated type; `Ok(valid)`, or what went wrong.
pub fn check_doc<T: Contract + for<'de> serde::Deserialize<'de> + Debug + PartialEq>(
    interpreter: &Validator,
    doc: &Doc,
) -> Result<bool, String> {
    let mut problems = String::new();
    let mut problem = |what: String| {
        let _ = writeln!(problems, "  - {what}");
    };
    // The bytes door: the interpreter as `perago validate` runs it, and `from_slice`.
    let interpreter_slice = interpreter.validate_slice(&doc.bytes);
    let slice = T::from_slice(&doc.bytes);
    if violations(&slice) != interpreter_slice {
        problem(format!(
            "from_slice and the interpreter disagree\n      from_slice:  {:?}\n      interpreter: {interpreter_slice:?}",
            violations(&slice)
        ));
    }
    if doc.duplicate
        && !matches!(&interpreter_slice[..], [v] if v.code == perago::Code::DuplicateField)
    {
        problem(format!(
            "a repeated key is not one duplicate_field: {interpreter_slice:?}"
        ));
    }
    // The value door, on what serde read (another document when a key repeats).
    let by_value = match &doc.value {
        Some(v) => interpreter.validate_value(v),
        None => interpreter_slice.clone(),
    };
    let walked = doc.value.as_ref().map(T::from_value);
    if let Some(walked) = &walked
        && violations(walked) != by_value
    {
        problem(format!(
            "from_value and the interpreter disagree\n      from_value:  {:?}\n      interpreter: {by_value:?}",
            violations(walked)
        ));
    }
    if let Some(walked) = &walked
        && !doc.duplicate
    {
        if violations(walked) != violations(&slice) {
            problem(format!(
                "from_value and from_slice disagree\n      from_value: {:?}\n      from_slice: {:?}",
                violations(walked),
                violations(&slice)
            ));
        }
        if let (Ok(a), Ok(b)) = (&slice, walked)
            && a != b
        {
            problem(format!(
                "typed values differ\n      from_slice: {a:?}\n      from_value: {b:?}"
            ));
        }
    }
    // serde's `Deserialize` is the same reader: it accepts what `from_slice` accepts.
    let serde = serde_json::from_slice::<T>(&doc.bytes);
    match (&serde, &slice) {
        (Ok(a), Ok(b)) if a != b => problem(format!(
            "Deserialize's typed value is not from_slice's\n      serde: {a:?}\n      from_slice: {b:?}"
        )),
        (Ok(a), Err(_)) => problem(format!(
            "Deserialize accepts what from_slice rejects: {a:?}"
        )),
        (Err(e), Ok(_)) => problem(format!("Deserialize rejects what from_slice accepts: {e}")),
        _ => {}
    }
    if let Some(Ok(w)) = &walked {
        let back = serde_json::to_value(w).expect("typed values serialise");
        let v = interpreter.validate_value(&back);
        if !v.is_empty() {
            problem(format!(
                "the typed value serialises to an invalid {back}: {v:?}"
            ));
        } else if T::from_value(&back).as_ref().ok() != Some(w) {
            problem(format!("the typed value does not walk back from {back}"));
        }
    }
    match problems.is_empty() {
        true => Ok(by_value.is_empty()),
        false => Err(problems),
    }
}

/// A generated type to check: where its schema is, and [`check_doc`] for it.
pub struct Checked {
    pub name: &'static str,
    pub location: &'static str,
    pub schema: &'static str,
    /// The schemas schemars makes of it, by name (6. in `fragments.rs`).
    pub schemars: fn() -> Vec<(&'static str, Value)>,
    pub check: fn(&Validator, &Doc) -> Result<bool, String>,
}

/// A struct with one field of a generated type: the type's schema is then one of schemars's
/// definitions, referred to, rather than the root.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Field<T> {
    value: T,
}

/// The schemas `schemars` makes of `T` (6. in `fragments.rs`).
fn schemars_schemas<T: schemars::JsonSchema>() -> Vec<(&'static str, Value)> {
    use schemars::generate::SchemaSettings;
    let value = |s: schemars::Schema| s.to_value();
    vec![
        ("schema_for!", value(schemars::schema_for!(T))),
        (
            "2019-09",
            value(
                SchemaSettings::draft2019_09()
                    .into_generator()
                    .into_root_schema_for::<T>(),
            ),
        ),
        ("as a field", value(schemars::schema_for!(Field<T>))),
    ]
}

impl Checked {
    pub fn of<
        T: Contract + schemars::JsonSchema + for<'de> serde::Deserialize<'de> + Debug + PartialEq,
    >() -> Self {
        Checked {
            name: std::any::type_name::<T>(),
            location: T::LOCATION,
            schema: T::schema(),
            schemars: schemars_schemas::<T>,
            check: check_doc::<T>,
        }
    }
}

pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `files`: the set's schema files, `(file name, text)`, for the compiled interpreter.
pub fn check_set(
    fragment: &str,
    set: &SchemaSet,
    files: &[(String, String)],
    checked: &[Checked],
    patterns: &[&str],
) {
    let mut report = String::new();
    let mut failures = 0;
    for c in checked {
        let root = node_at(set, c.location);
        let compiled = compiled_at(fragment, files, c.location);
        let docs = documents(set, &compiled, root, fnv(c.location), patterns);
        // `type: [T, "null"]` is two IR nodes at one location, and the type is the inner one
        // (no null): the compiled schema at the location admits null, the type does not.
        let inner_of_nullable = set.ir.nodes().any(|(_, n)| {
            n.location == set.ir.node(root).location
                && matches!(n.shape, Shape::Nullable(inner) if inner == root)
        });
        let mut standalone: Value = serde_json::from_str(c.schema).expect("SCHEMA is JSON");
        ascii_digits_where_lookaround(&mut standalone);
        let standalone = jsonschema::options()
            .should_validate_formats(true)
            .build(&standalone)
            .unwrap_or_else(|e| panic!("{}: SCHEMA does not compile: {e}", c.name));
        let compile = |(label, mut schema): (&'static str, Value)| {
            ascii_digits_where_lookaround(&mut schema);
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{}: schemars's {label} does not compile: {e}", c.name));
            (label, validator)
        };
        let schemars: Vec<_> = (c.schemars)().into_iter().map(compile).collect();
        let mut valid = 0;
        let mut failed = 0;
        for doc in &docs {
            if inner_of_nullable && doc.value.as_ref().is_some_and(Value::is_null) {
                continue;
            }
            let verdict = (c.check)(&compiled, doc).and_then(|valid| {
                let Some(value) = &doc.value else {
                    return Ok(valid);
                };
                let only_range = compiled
                    .validate_value(value)
                    .iter()
                    .all(|v| v.code == perago::Code::IntegerRange);
                if !valid && only_range {
                    return Ok(valid);
                }
                let mut problems = String::new();
                if standalone.is_valid(value) != valid {
                    let _ = writeln!(
                        problems,
                        "  - Contract::schema() alone says valid = {}",
                        !valid
                    );
                }
                let field = serde_json::json!({ "value": value });
                for (label, validator) in &schemars {
                    let doc = if *label == "as a field" {
                        &field
                    } else {
                        value
                    };
                    if validator.is_valid(doc) != valid {
                        let _ =
                            writeln!(problems, "  - schemars's {label} says valid = {}", !valid);
                    }
                }
                match problems.is_empty() {
                    true => Ok(valid),
                    false => Err(problems),
                }
            });
            match verdict {
                Ok(v) => valid += usize::from(v),
                Err(problems) => {
                    failed += 1;
                    if failures + failed <= PRINT {
                        let text = String::from_utf8_lossy(&doc.bytes);
                        let _ = write!(
                            report,
                            "\n{} — {}\n  document: {text}\n{problems}",
                            c.name, doc.label
                        );
                    }
                }
            }
        }
        eprintln!(
            "{fragment}: {} — {} documents, {valid} valid, {failed} failed",
            c.name,
            docs.len()
        );
        failures += failed;
    }
    assert!(failures == 0, "{failures} documents failed:{report}");
}

/// The compiled interpreter (`perago validate`'s) for the schema at `location`
/// (`file#pointer`) of a set: every file of the set, and a root that refers there.
pub fn compiled_at(fragment: &str, files: &[(String, String)], location: &str) -> Validator {
    let root = serde_json::json!({ "$ref": location }).to_string();
    let sources = files
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .chain([("(root).json", root.as_str())]);
    Validator::load_sources(sources, "(root).json", Options::default())
        .unwrap_or_else(|e| panic!("{fragment}: the compiled interpreter refuses {location}: {e}"))
}

/// Rewrites `\d` and `\D` outside classes as `[0-9]` and `[^0-9]` in the `pattern`s with
/// lookaround below `schema`: the same pattern in ECMA-262 terms (`\d` is ASCII there), for the
/// `jsonschema` crate, whose engine for lookaround (`fancy-regex`) matches any Unicode digit by
/// `\d` (Pydantic's `Decimal` pattern would otherwise take `"٣"`).
fn ascii_digits_where_lookaround(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(p) if key == "pattern" && p.contains("(?") => {
                        let mut out = String::new();
                        let mut chars = p.chars();
                        let mut class = false;
                        while let Some(c) = chars.next() {
                            match c {
                                '\\' => match chars.next() {
                                    Some('d') if !class => out.push_str("[0-9]"),
                                    Some('D') if !class => out.push_str("[^0-9]"),
                                    Some(e) => {
                                        out.push('\\');
                                        out.push(e);
                                    }
                                    None => out.push('\\'),
                                },
                                '[' => {
                                    class = true;
                                    out.push(c);
                                }
                                ']' => {
                                    class = false;
                                    out.push(c);
                                }
                                c => out.push(c),
                            }
                        }
                        *p = out;
                    }
                    other => ascii_digits_where_lookaround(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(ascii_digits_where_lookaround),
        _ => {}
    }
}
