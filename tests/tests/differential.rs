//! Differential test: every contract schema with a root, ≥ 10,000 deterministic documents each
//! (valid ones generated from the IR and systematic mutations of them, see
//! `perago_tests::mutate`), validated by
//!
//! - (a) the interpreter, `perago_schema::Validator` (what `perago validate` runs), on the
//!   bytes (`validate_slice`) and on the parsed value (`validate_value`);
//! - (b) the `jsonschema` crate (draft 2020-12) over the **normalised** schemas, every file
//!   registered under its `$id` so cross-file `$ref`s resolve offline; the normalised form is
//!   what perago means by a contract (objects closed), so it is the oracle for verdicts. The
//!   schemas **as written** are checked too: whatever perago accepts they must accept. (Closing
//!   objects narrows them, but can widen a `oneOf`: a document two open branches both admit
//!   fails `oneOf` as written yet may match one closed branch. The contracts, and the synthetic
//!   schema below, give every branch a required property or tag the others do not declare, so
//!   this cannot happen there);
//! - (c) perago's generated validators, `Contract::from_slice` and `Contract::from_value`.
//!
//! Assertions, per document:
//!
//! 1. verdicts (valid or not) agree across (a), (b) and (c). One divergence is by design and
//!    tolerated: an integral number outside the signed 64-bit range is an integer to JSON Schema
//!    but perago reports `integer_range` (its typed value is an `i64`); such documents are
//!    counted and printed, never failed, provided `integer_range` is all perago reports;
//! 2. (a) and (c) return identical violation lists: same order, paths, codes and messages, from
//!    bytes and from a parsed value alike; when (c) accepts, `from_slice` (the single pass)
//!    and `from_value` (the walk) build the same typed value, and that value serialised is valid;
//! 3. for a document with a single mutation that both (a) and (b) reject, the locations agree.
//!    jsonschema reports a JSON Pointer (`instance_path`); perago a JSONPath (`$.a[1]['b c']`),
//!    converted to a pointer `p`. A perago violation `v` (pointer `p`, code `c`) and a jsonschema
//!    error `e` (pointer `j`, keyword `k`) are *related* when
//!      - `p == j` (same instance location), or
//!      - `c` is `required` or `unknown_field` and `parent(p) == j` (perago reports the property,
//!        jsonschema the object that lacks or has it), or
//!      - `k` is `oneOf` or `anyOf` and `j` is a segment-wise prefix of `p` (jsonschema reports a
//!        failed combinator at the value that failed every branch; perago chooses the branch by
//!        its discriminator, or the non-null side of a nullable, and reports inside it).
//!
//!    Every jsonschema error must be related to some perago violation and every perago violation
//!    (but `integer_range`) to some jsonschema error.
//!
//!    Since jsonschema reports a failed root `oneOf` only at `""`, the last rule alone says little
//!    for the `oneOf` schemas. So when perago's discriminator rule picks a branch (the branch
//!    whose tag the discriminator equals, or the untagged branch when it is absent), the
//!    document is also validated by jsonschema against that branch alone
//!    (`{"$ref": "<$id>#/oneOf/<i>"}`): its verdict must equal perago's and, for a single
//!    mutation, its errors must be related to perago's violations by the same rules (where the
//!    combinator rule then only serves the nullable `anyOf`).
//!
//! On failure the document and all results are printed, with a count of failures by kind.
//!
//! A second run, `interpreter_agrees_with_jsonschema_on_every_keyword`, does the same for a
//! synthetic schema using the keywords the contracts leave out (numeric bounds, enums,
//! non-string consts, `maxItems`, typed maps, recursion, an untagged `oneOf` branch, unions of
//! JSON types (string-or-integer, const-or-number-or-null, string-or-object-or-array, an integer
//! or one of two tagged objects), a `oneOf` discriminated by required keys (alone, and as the objects of a union), `\d`, `\w`,
//! `\s`, `.` and `\p{L}` patterns): interpreter and jsonschema only, as no validator is
//! generated for it.

use jsonschema::error::ValidationErrorKind;
use perago_codegen::NodeId;
use perago_codegen::SchemaSet;
use perago_codegen::ir::Shape;
use perago_schema::{Code, Options, Validator, Violation};
use perago_tests::mutate::{
    self, Generator, Mutation, Op, Optional, byte_variants, jsonpath_to_pointer,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Documents per schema at least.
const MIN_DOCS: usize = 10_000;
/// Generated-only valid documents per schema, on top of the mutated bases.
const EXTRA_VALID: usize = 1_000;
/// Random multi-mutation documents per base document.
const COMBOS: usize = 12;
/// Failures printed in full.
const PRINT: usize = 12;

/// A generated validator: `(schema file, from_slice, from_value, typed from_slice, typed
/// from_value)`. The first two give the violations (empty when valid); the last two the typed
/// value when valid, serialised back to JSON, so the single pass and the walk can be compared.
type Generated = (
    &'static str,
    fn(&[u8]) -> Vec<Violation>,
    fn(&Value) -> Vec<Violation>,
    fn(&[u8]) -> Option<Value>,
    fn(&Value) -> Option<Value>,
);

// ======================================================================================
// GENERATED VALIDATORS (c): ENABLED (`perago::contracts` exists). To disable them, e.g. while
// the generator is being rewritten, swap the two `cfg`s below (`#[cfg(any())]` is never
// compiled, `#[cfg(not(any()))]` always is).
// ======================================================================================
#[cfg(not(any()))]
fn generated() -> Vec<Generated> {
    use perago::Contract;
    use perago::contracts::*;

    fn slice<T: Contract>(bytes: &[u8]) -> Vec<Violation> {
        T::from_slice(bytes)
            .err()
            .map(|v| v.into_vec())
            .unwrap_or_default()
    }
    fn value<T: Contract>(v: &Value) -> Vec<Violation> {
        T::from_value(v)
            .err()
            .map(|v| v.into_vec())
            .unwrap_or_default()
    }
    fn typed_slice<T: Contract>(bytes: &[u8]) -> Option<Value> {
        T::from_slice(bytes)
            .ok()
            .map(|t| serde_json::to_value(t).expect("typed values serialise"))
    }
    fn typed_value<T: Contract>(v: &Value) -> Option<Value> {
        T::from_value(v)
            .ok()
            .map(|t| serde_json::to_value(t).expect("typed values serialise"))
    }
    macro_rules! table {
        ($($file:literal => $ty:ty,)*) => {
            vec![$(($file, slice::<$ty>, value::<$ty>, typed_slice::<$ty>, typed_value::<$ty>),)*]
        };
    }
    table! {
        "workspace-input.schema.json" => workspace_input::WorkspaceInput,
        "workspace-output.schema.json" => workspace_output::WorkspaceOutput,
        "workspace-task-input.schema.json" => workspace_task_input::WorkspaceTaskInput,
        "workspace-free-task-input.schema.json" => workspace_free_task_input::WorkspaceFreeTaskInput,
        "workspace-task-result.schema.json" => workspace_task_result::WorkspaceTaskResult,
        "workspace-free-task-result.schema.json" => workspace_free_task_result::WorkspaceFreeTaskResult,
        "worker-completion.v1.schema.json" => perago_completion::contracts::worker_completion_v1::WorkerCompletionV1,
        "worker-completion-result.v1.schema.json" => perago_completion::contracts::worker_completion_result_v1::WorkerCompletionResultV1,
    }
}

#[cfg(any())]
fn generated() -> Vec<Generated> {
    Vec::new()
}
// ======================================================================================

/// One jsonschema error, reduced to what is compared and printed.
#[derive(Debug, Clone)]
struct JsError {
    pointer: String,
    keyword: String,
    combinator: bool,
    message: String,
}

/// A document to validate.
struct Doc {
    label: String,
    /// The parsed value, when the bytes are JSON (with a repeated key, serde keeps the last).
    value: Option<Value>,
    bytes: Vec<u8>,
    /// One edit of a valid document (location comparison applies).
    single: bool,
    /// Where the bytes repeat a key, which perago rejects at every door: `value` is then
    /// another document, compared on its own.
    duplicate: Option<String>,
}

/// Everything the validators said about one document.
#[derive(Debug)]
struct Results {
    interpreter: Option<Vec<Violation>>,
    interpreter_slice: Vec<Violation>,
    generated_slice: Option<Vec<Violation>>,
    generated_value: Option<Vec<Violation>>,
    /// The typed values of from_slice and from_value, serialised, when either accepted.
    typed: Option<(Option<Value>, Option<Value>)>,
    /// Violations of the serialised typed value (it must be valid itself).
    typed_violations: Vec<Violation>,
    jsonschema: Option<Vec<JsError>>,
    /// jsonschema's errors against the `oneOf` branch perago chose, if any.
    branch: Option<Vec<JsError>>,
    /// jsonschema's errors against the schema as written.
    as_written: Option<Vec<JsError>>,
}

/// A `oneOf` branch: its discriminator tag (`None` for the untagged one) and its validator.
type Branch = (Option<String>, jsonschema::Validator);

struct Validators {
    compiled: Validator,
    normalised: jsonschema::Validator,
    as_written: jsonschema::Validator,
    generated: Option<Generated>,
    /// For a `oneOf` root: the discriminator and, per branch, its tag and a jsonschema validator
    /// of the branch alone (`{"$ref": "<$id>#/oneOf/<i>"}`).
    branches: Option<(String, Vec<Branch>)>,
}

impl Validators {
    fn run(&self, doc: &Doc) -> Results {
        let interpreter = doc.value.as_ref().map(|v| self.compiled.validate_value(v));
        let interpreter_slice = self.compiled.validate_slice(&doc.bytes);
        let generated_slice = self.generated.map(|g| (g.1)(&doc.bytes));
        let generated_value = match (self.generated, &doc.value) {
            (Some(g), Some(v)) => Some((g.2)(v)),
            _ => None,
        };
        let accepted = generated_slice.as_ref().is_some_and(Vec::is_empty)
            || generated_value.as_ref().is_some_and(Vec::is_empty);
        let typed = match (self.generated, &doc.value) {
            (Some(g), Some(v)) if accepted => Some(((g.3)(&doc.bytes), (g.4)(v))),
            _ => None,
        };
        let typed_violations = match &typed {
            Some((Some(t), _) | (None, Some(t))) => self.compiled.validate_value(t),
            _ => Vec::new(),
        };
        let jsonschema = doc.value.as_ref().map(|v| js_errors(&self.normalised, v));
        // The branch perago's discriminator rule chooses, validated by jsonschema alone.
        let branch = match (&self.branches, &doc.value) {
            (Some((discriminator, branches)), Some(Value::Object(map))) => {
                let tag = map.get(discriminator);
                branches
                    .iter()
                    .find(|(t, _)| match tag {
                        None => t.is_none(),
                        Some(tag) => t.is_some() && t.as_deref() == tag.as_str(),
                    })
                    .map(|(_, validator)| js_errors(validator, doc.value.as_ref().expect("object")))
            }
            _ => None,
        };
        let as_written = doc.value.as_ref().map(|v| js_errors(&self.as_written, v));
        Results {
            interpreter,
            interpreter_slice,
            generated_slice,
            generated_value,
            typed,
            typed_violations,
            jsonschema,
            branch,
            as_written,
        }
    }
}

fn js_errors(validator: &jsonschema::Validator, v: &Value) -> Vec<JsError> {
    validator
        .iter_errors(v)
        .map(|e| JsError {
            pointer: e.instance_path().as_str().to_owned(),
            keyword: e.kind().keyword().to_owned(),
            combinator: matches!(
                e.kind(),
                ValidationErrorKind::OneOfNotValid { .. }
                    | ValidationErrorKind::OneOfMultipleValid { .. }
                    | ValidationErrorKind::AnyOf { .. }
            ),
            message: e.to_string(),
        })
        .collect()
}

fn parent(pointer: &str) -> Option<&str> {
    pointer.rfind('/').map(|i| &pointer[..i])
}

/// `prefix` is `pointer` or one of its ancestors (segment-wise).
fn is_prefix(prefix: &str, pointer: &str) -> bool {
    pointer == prefix || (pointer.starts_with(prefix) && pointer[prefix.len()..].starts_with('/'))
}

fn related(v: &Violation, p: &str, e: &JsError) -> bool {
    p == e.pointer
        || (matches!(v.code, Code::Required | Code::UnknownField)
            && parent(p) == Some(e.pointer.as_str()))
        || (e.combinator && is_prefix(&e.pointer, p))
}

/// How a document's results compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Everything applicable agreed.
    Agreed,
    /// Agreed, and both rejected a single mutation at related locations.
    LocationsAgreed,
    /// The tolerated `integer_range` divergence.
    Tolerated,
}

/// What is wrong with one document's results, if anything.
fn verdict(doc: &Doc, r: &Results) -> Result<Verdict, String> {
    let perago = r.interpreter.as_ref().unwrap_or(&r.interpreter_slice);
    if let Some(path) = &doc.duplicate {
        let rejected = vec![Violation::new(
            path.clone(),
            Code::DuplicateField,
            "duplicate field",
        )];
        if r.interpreter_slice != rejected {
            return Err("a repeated key is not one duplicate_field at its path".into());
        }
    } else if let Some(i) = &r.interpreter
        && *i != r.interpreter_slice
    {
        return Err("interpreter: validate(value) and validate_slice(bytes) differ".into());
    }
    if let Some(g) = &r.generated_slice
        && *g != r.interpreter_slice
    {
        return Err("generated from_slice and the interpreter report different violations".into());
    }
    if let Some(g) = &r.generated_value
        && g != perago
    {
        return Err("generated from_value and the interpreter report different violations".into());
    }
    if let Some((slice, value)) = &r.typed {
        if slice != value && doc.duplicate.is_none() {
            return Err("from_slice and from_value build different typed values".into());
        }
        if !r.typed_violations.is_empty() {
            return Err("the typed value, serialised, is not valid".into());
        }
    }
    if doc.value.is_none() {
        return match perago.as_slice() {
            [v] if v.code == Code::MalformedJson && v.path == "$" => Ok(Verdict::Agreed),
            _ => Err("not JSON, but perago does not report exactly one malformed_json at $".into()),
        };
    }
    let js = r
        .jsonschema
        .as_ref()
        .expect("JSON documents go to jsonschema");
    if perago.is_empty() && r.as_written.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err("perago accepts what the schema as written rejects".into());
    }
    if js.is_empty() != perago.is_empty() {
        if js.is_empty() && perago.iter().all(|v| v.code == Code::IntegerRange) {
            return Ok(Verdict::Tolerated);
        }
        return Err(format!(
            "verdicts differ: jsonschema says {}, perago says {}",
            if js.is_empty() { "valid" } else { "invalid" },
            if perago.is_empty() {
                "valid"
            } else {
                "invalid"
            }
        ));
    }
    if let Some(branch) = &r.branch
        && branch.is_empty() != perago.is_empty()
        && !(branch.is_empty() && perago.iter().all(|v| v.code == Code::IntegerRange))
    {
        return Err("verdicts differ: jsonschema on the chosen oneOf branch and perago".into());
    }
    if doc.single && !js.is_empty() {
        let pointers: Vec<String> = perago
            .iter()
            .map(|v| {
                jsonpath_to_pointer(&v.path)
                    .unwrap_or_else(|| panic!("unparsable perago path {:?}", v.path))
            })
            .collect();
        locations(perago, &pointers, js, "jsonschema")?;
        if let Some(branch) = &r.branch {
            locations(perago, &pointers, branch, "jsonschema on the chosen branch")?;
        }
        return Ok(Verdict::LocationsAgreed);
    }
    Ok(Verdict::Agreed)
}

/// Every jsonschema error is related to a perago violation and every perago violation (but
/// `integer_range`, which jsonschema has no rule for) to a jsonschema error.
fn locations(
    perago: &[Violation],
    pointers: &[String],
    js: &[JsError],
    name: &str,
) -> Result<(), String> {
    for e in js {
        if !perago.iter().zip(pointers).any(|(v, p)| related(v, p, e)) {
            return Err(format!(
                "{name} error at {:?} ({}) has no related perago violation",
                e.pointer, e.keyword
            ));
        }
    }
    for (v, p) in perago.iter().zip(pointers) {
        if v.code != Code::IntegerRange && !js.iter().any(|e| related(v, p, e)) {
            return Err(format!(
                "perago violation at {} ({}) has no related {name} error",
                v.path, v.code
            ));
        }
    }
    Ok(())
}

fn report(file: &str, doc: &Doc, r: &Results, why: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "---- {file}: {why}");
    let _ = writeln!(s, "mutation: {}", doc.label);
    let text = String::from_utf8_lossy(&doc.bytes);
    let shown: String = text.chars().take(600).collect();
    let _ = writeln!(
        s,
        "document ({} bytes): {shown}{}",
        doc.bytes.len(),
        if text.chars().count() > 600 {
            "…"
        } else {
            ""
        }
    );
    let list = |s: &mut String, name: &str, l: &Option<Vec<Violation>>| {
        let _ = writeln!(s, "{name}:");
        match l {
            None => {
                let _ = writeln!(s, "    (not run)");
            }
            Some(l) if l.is_empty() => {
                let _ = writeln!(s, "    valid");
            }
            Some(l) => {
                for v in l {
                    let _ = writeln!(s, "    {} [{}] {}", v.path, v.code, v.message);
                }
            }
        }
    };
    list(&mut s, "interpreter validate(value)", &r.interpreter);
    list(
        &mut s,
        "interpreter validate_slice(bytes)",
        &Some(r.interpreter_slice.clone()),
    );
    list(&mut s, "generated from_slice", &r.generated_slice);
    list(&mut s, "generated from_value", &r.generated_value);
    if let Some((slice, value)) = &r.typed {
        let show = |t: &Option<Value>| t.as_ref().map_or("none".into(), Value::to_string);
        let _ = writeln!(s, "typed from_slice: {}", show(slice));
        let _ = writeln!(s, "typed from_value: {}", show(value));
        list(
            &mut s,
            "typed value re-validated",
            &Some(r.typed_violations.clone()),
        );
    }
    let _ = writeln!(s, "jsonschema (normalised):");
    match &r.jsonschema {
        None => {
            let _ = writeln!(s, "    (not run)");
        }
        Some(l) => js_list(&mut s, l),
    }
    if let Some(branch) = &r.branch {
        let _ = writeln!(s, "jsonschema on the chosen oneOf branch:");
        js_list(&mut s, branch);
    }
    if let Some(errors) = &r.as_written {
        let _ = writeln!(s, "jsonschema (as written):");
        js_list(&mut s, errors);
    }
    s
}

fn js_list(s: &mut String, errors: &[JsError]) {
    if errors.is_empty() {
        let _ = writeln!(s, "    valid");
    }
    for e in errors {
        let msg: String = e.message.chars().take(200).collect();
        let _ = writeln!(s, "    {:?} [{}] {msg}", e.pointer, e.keyword);
    }
}

fn value_doc(label: String, value: Value, single: bool) -> Doc {
    let bytes = serde_json::to_vec(&value).expect("serialisable");
    Doc {
        label,
        value: Some(value),
        bytes,
        single,
        duplicate: None,
    }
}

/// The documents of one schema, in a fixed order from a fixed seed.
/// At least `min_bases` valid documents are mutated, and more until there are `MIN_DOCS`.
fn documents(set: &SchemaSet, root: NodeId, seed: u64, min_bases: usize) -> Vec<Doc> {
    let mut generator = Generator::new(set, seed);
    let mut docs = Vec::new();
    let mut base = 0usize;
    while docs.len() < MIN_DOCS || base < min_bases {
        generator.optional = [Optional::Random, Optional::All, Optional::None][base % 3];
        generator.branch = Some(base);
        let valid = generator.valid(root);
        let mutations: Vec<Mutation> = generator.mutations(root, &valid);
        for m in &mutations {
            let mut v = valid.clone();
            assert!(m.op.apply(&mut v), "mutation {} does not apply", m.label);
            docs.push(value_doc(format!("base {base}: {}", m.label), v, true));
        }
        for c in 0..COMBOS.min(mutations.len()) {
            let n = 2 + generator.rng.below(2);
            let mut v = valid.clone();
            let mut labels = Vec::new();
            for _ in 0..n {
                let m = generator.rng.pick(&mutations);
                if m.op.apply(&mut v) {
                    labels.push(m.label.clone());
                }
            }
            docs.push(value_doc(
                format!("base {base} combo {c}: {}", labels.join(" + ")),
                v,
                false,
            ));
        }
        if base.is_multiple_of(4) {
            for b in byte_variants(&valid, &mutations, 5) {
                let value = serde_json::from_slice(&b.bytes).ok();
                let duplicate = match perago_schema::json::parse_strict_slice(&b.bytes) {
                    Err(perago_schema::json::ParseError::DuplicateKey { path, .. }) => Some(path),
                    _ => None,
                };
                docs.push(Doc {
                    label: format!("base {base}: {}", b.label),
                    value,
                    bytes: b.bytes,
                    single: b.single,
                    duplicate,
                });
            }
        }
        docs.push(value_doc(format!("base {base}: valid"), valid, false));
        base += 1;
    }
    for i in 0..EXTRA_VALID {
        generator.optional = [Optional::Random, Optional::All, Optional::None][i % 3];
        generator.branch = None;
        let v = generator.valid(root);
        docs.push(value_doc(format!("extra valid {i}"), v, false));
    }
    docs
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The mutation kind of a label (`type:null @ /a` → `type`), for the summary of failures.
fn kind(label: &str) -> &str {
    let l = label.split_once(": ").map_or(label, |(_, l)| l);
    l.split([':', ' ']).next().unwrap_or(l)
}

/// A jsonschema validator of `{"$ref": uri}` over a registry of every schema file.
fn build_ref(registry: &jsonschema::Registry<'_>, uri: &str) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(registry)
        .build(&serde_json::json!({ "$ref": uri }))
        .unwrap_or_else(|e| panic!("jsonschema cannot compile {uri}: {e}"))
}

#[test]
fn validators_agree_on_generated_and_mutated_documents() {
    let set = perago_tests::corpus::contract_schemas();
    let generated = generated();
    if generated.is_empty() {
        eprintln!(
            "NOTE: generated validators (c) are disabled; comparing interpreter and jsonschema only"
        );
    }
    let schemas = differential(&set, &generated, 30);
    assert_eq!(schemas, 8, "the eight contract schemas with a root");
}

/// The kitchen-sink schema ([`perago_tests::schemas::KITCHEN_SINK`]): every keyword of the
/// supported subset the contract schemas leave out, so the interpreter is checked against
/// jsonschema beyond the contracts. No generated validator.
#[test]
fn interpreter_agrees_with_jsonschema_on_every_keyword() {
    let set = SchemaSet::load_sources([(
        "kitchen-sink.schema.json",
        perago_tests::schemas::KITCHEN_SINK,
    )])
    .unwrap_or_else(|e| panic!("the kitchen-sink schema loads: {e}"));
    assert_eq!(differential(&set, &[], 4), 1);
}

/// Runs the differential over every file of `set` with a root; panics on any disagreement.
/// Returns how many schemas were checked.
fn differential(set: &SchemaSet, generated: &[Generated], min_bases: usize) -> usize {
    // Every file under its $id, normalised (the oracle) and as written.
    let normalised_registry = jsonschema::Registry::new()
        .extend(
            set.files
                .iter()
                .map(|f| (f.id.clone(), f.normalised.clone())),
        )
        .and_then(|b| b.prepare())
        .expect("normalised registry");
    let written: Vec<(String, Value)> = set
        .files
        .iter()
        .map(|f| {
            (
                f.id.clone(),
                serde_json::from_str(&f.source).expect("schema is JSON"),
            )
        })
        .collect();
    let written_registry = jsonschema::Registry::new()
        .extend(written.iter().map(|(id, v)| (id.clone(), v.clone())))
        .and_then(|b| b.prepare())
        .expect("as-written registry");

    let mut failures: Vec<String> = Vec::new();
    let mut failure_kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut failure_count = 0usize;
    let mut tolerated: Vec<String> = Vec::new();
    let mut schemas = 0;
    for file in &set.files {
        let Some(root) = file.root else {
            eprintln!("{}: no root schema, skipped", file.file);
            continue;
        };
        schemas += 1;
        let build = |registry| build_ref(registry, &file.id);
        let g = generated.iter().find(|g| g.0 == file.file).copied();
        if !generated.is_empty() {
            assert!(
                g.is_some(),
                "{}: no generated validator in the table",
                file.file
            );
        }
        let branches = match &set.ir.node(set.ir.resolve(root)).shape {
            Shape::OneOf {
                discriminators,
                branches,
                ..
            } => {
                let validators = branches
                    .iter()
                    .map(|b| {
                        let location = &set.ir.node(b.node).location;
                        let (branch_file, pointer) =
                            location.split_once('#').expect("file#pointer");
                        let id = &set.find(branch_file).expect("the branch's file").id;
                        (
                            b.tag_text().map(str::to_owned),
                            build_ref(&normalised_registry, &format!("{id}#{pointer}")),
                        )
                    })
                    .collect();
                // One discriminator with string tags (or none) in this corpus.
                Some((discriminators.concat(), validators))
            }
            _ => None,
        };
        let compiled = Validator::load_sources(
            set.files
                .iter()
                .map(|f| (f.file.as_str(), f.source.as_str())),
            &file.file,
            Options::default(),
        )
        .unwrap_or_else(|e| panic!("{}: the compiled interpreter refuses it: {e}", file.file));
        let validators = Validators {
            compiled,
            normalised: build(&normalised_registry),
            as_written: build(&written_registry),
            generated: g,
            branches,
        };
        let docs = documents(set, root, fnv(&file.file), min_bases);
        let (mut valid, mut invalid, mut malformed, mut single) = (0, 0, 0, 0);
        let (mut located, mut integer_range) = (0, 0);
        for doc in &docs {
            let r = validators.run(doc);
            match (&r.interpreter, r.interpreter_slice.is_empty()) {
                (None, _) => malformed += 1,
                (Some(_), true) => valid += 1,
                (Some(_), false) => invalid += 1,
            }
            single += usize::from(doc.single);
            match verdict(doc, &r) {
                Ok(Verdict::Agreed) => {}
                Ok(Verdict::LocationsAgreed) => located += 1,
                Ok(Verdict::Tolerated) => {
                    integer_range += 1;
                    if tolerated.len() < 2 {
                        tolerated.push(report(
                            &file.file,
                            doc,
                            &r,
                            "tolerated integer_range divergence",
                        ));
                    }
                }
                Err(why) => {
                    failure_count += 1;
                    *failure_kinds
                        .entry(format!("{}: {} [{}]", file.file, why, kind(&doc.label)))
                        .or_default() += 1;
                    if failures.len() < PRINT {
                        failures.push(report(&file.file, doc, &r, &why));
                    }
                }
            }
        }
        eprintln!(
            "{}: {} documents: {valid} valid, {invalid} invalid, {malformed} not JSON; \
             {single} single mutations, {located} rejected and compared by location; \
             {integer_range} tolerated integer_range; generated validator {}",
            file.file,
            docs.len(),
            if g.is_some() {
                "compared"
            } else {
                "not compared"
            },
        );
        assert!(
            docs.len() >= MIN_DOCS,
            "{}: only {} documents",
            file.file,
            docs.len()
        );
        assert!(
            valid >= EXTRA_VALID,
            "{}: only {valid} valid documents",
            file.file
        );
        assert!(
            invalid >= MIN_DOCS / 4,
            "{}: only {invalid} invalid documents",
            file.file
        );
    }
    for t in &tolerated {
        eprintln!("{t}");
    }
    if failure_count > 0 {
        for f in &failures {
            eprintln!("{f}");
        }
        eprintln!("failures by kind:");
        for (k, n) in &failure_kinds {
            eprintln!("  {n:6}  {k}");
        }
        panic!(
            "{failure_count} documents where the validators disagree (first {} printed above)",
            failures.len()
        );
    }
    schemas
}

#[test]
fn jsonpath_converts_to_pointer() {
    assert_eq!(jsonpath_to_pointer("$").as_deref(), Some(""));
    assert_eq!(
        jsonpath_to_pointer("$.a[1]['b c']").as_deref(),
        Some("/a/1/b c")
    );
    assert_eq!(
        jsonpath_to_pointer(r"$['it\'s\\']['a/b~c']").as_deref(),
        Some("/it's\\/a~1b~0c")
    );
    assert_eq!(
        jsonpath_to_pointer(r"$['a\u000ab']").as_deref(),
        Some("/a\nb")
    );
    assert_eq!(jsonpath_to_pointer("$['']").as_deref(), Some("/"));
    assert_eq!(
        jsonpath_to_pointer("$.files_changed[10]").as_deref(),
        Some("/files_changed/10")
    );
    assert_eq!(jsonpath_to_pointer("a.b"), None);
    // Round trip through perago's own renderer.
    let root = perago_schema::Path::Root;
    for key in mutate::ODD_KEYS {
        let k = root.key(key);
        let p = k.index(3);
        let expected = format!("/{}/3", key.replace('~', "~0").replace('/', "~1"));
        assert_eq!(jsonpath_to_pointer(&p.render()), Some(expected), "{key:?}");
    }
}

#[test]
fn generation_is_deterministic() {
    let set = perago_tests::corpus::contract_schemas();
    let file = set.find("worker-completion.v1").expect("worker completion");
    let root = file.root.expect("root");
    let run = || {
        let mut g = Generator::new(&set, 7);
        let v = g.valid(root);
        let m: Vec<String> = g
            .mutations(root, &v)
            .into_iter()
            .map(|m| format!("{} {:?}", m.label, op_value(&m.op)))
            .collect();
        (v, m)
    };
    assert_eq!(run(), run());
}

fn op_value(op: &Op) -> Option<&Value> {
    match op {
        Op::Set(_, v) => Some(v),
        Op::Remove(_) => None,
    }
}
