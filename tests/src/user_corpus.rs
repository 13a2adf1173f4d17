//! Corpora against schemas written the way users write them, not perago's own contract schemas:
//! what the performance issue measures perago on, reproducible from a seed.
//!
//! The schemas are `tests/user-schemas/` (see [`SCHEMAS`]), written by hand from the specs:
//!
//! - `agent-result.schema.json`: worker-completion/v1 as a team would write it, a tagged union
//!   whose branches each carry their own inline `const`s (`kind`, and `contract` in every
//!   branch), a completion branch distinguished by having no `kind`;
//! - `train-model-input.schema.json`: the `inputData` of a workspace task, closed `workspace`
//!   and `params`, bounds, an enum, a nullable, a default, a map and a nested tagged union
//!   (`split`, inline `const`s again);
//! - `agent-result-conditional.schema.json`: `agent-result`'s documents, the union written as
//!   a chain of `if`/`then`/`else` on `kind` at the root (member rules shared through `$defs`);
//! - `agent-report.schema.json`: a completion in an envelope, the union inside `$defs` written
//!   as an `allOf` of `if`/`then` parts (one per `kind`, one whose `else` is a completion).
//!
//! The corpora, each 80% valid and 20% invalid through one realistic mutation (labelled):
//!
//! - [`small_completions`]: 20,000 payloads of ~280 B (60% completions, 40% refusals; in a
//!   third of the refusals `kind` comes last, as a serialiser that does not sort puts it);
//! - [`large_completions`]: 2,000 completions of ~7 KB (200 files, a 1500–2000 code-point
//!   summary of mixed scripts);
//! - [`task_inputs`]: 20,000 task inputs of ~450 B;
//! - [`small_completions_conditional`] and [`small_reports`]: the small completions again,
//!   against the two schemas written with `if`/`then`/`else` (the second in an envelope).
//!
//! Every document is the same bytes on every run and machine for a given seed
//! ([`DEFAULT_SEED`]); `cargo run -p perago-tests --bin user-corpus -- --out DIR` writes them as
//! JSON Lines with their labels and the schemas, for whole-process benchmarks.

use crate::corpus::{self, Corpus, Mutation, Rng, obj};
use perago_codegen::SchemaSet;
use serde_json::{Map, Value, json};

/// The seed every corpus is derived from unless told otherwise.
pub const DEFAULT_SEED: u64 = 0x0051_5E55;

/// Documents in the small-completion and task-input corpora.
pub const MANY: usize = 20_000;

/// Documents in the large-completion corpus.
pub const LARGE: usize = 2_000;

/// The schema files, `(file name, text)`.
pub const SCHEMAS: &[(&str, &str)] = &[
    (
        "agent-result.schema.json",
        include_str!("../user-schemas/agent-result.schema.json"),
    ),
    (
        "agent-result-conditional.schema.json",
        include_str!("../user-schemas/agent-result-conditional.schema.json"),
    ),
    (
        "agent-result-cases.schema.json",
        include_str!("../user-schemas/agent-result-cases.schema.json"),
    ),
    (
        "agent-report.schema.json",
        include_str!("../user-schemas/agent-report.schema.json"),
    ),
    (
        "train-model-input.schema.json",
        include_str!("../user-schemas/train-model-input.schema.json"),
    ),
];

/// The schema of the completion corpora (its short name, for [`SchemaSet::find`]).
pub const COMPLETION_SCHEMA: &str = "agent-result";

/// [`COMPLETION_SCHEMA`]'s language written with a chain of `if`/`then`/`else` on `kind`.
pub const CONDITIONAL_SCHEMA: &str = "agent-result-conditional";

/// [`CONDITIONAL_SCHEMA`] with each case a `$defs` entry that its `then` (or the last `else`)
/// names by `$ref`.
pub const CASES_SCHEMA: &str = "agent-result-cases";

/// A completion in an envelope, written with an `allOf` of `if`/`then` parts inside `$defs`.
pub const REPORT_SCHEMA: &str = "agent-report";

/// The schema of the task-input corpus.
pub const TASK_INPUT_SCHEMA: &str = "train-model-input";

/// The closed schema of a corpus schema's root type as a standard validator takes it
/// ([`perago::Contract::schema`]: normalised, bundled, the `$defs` a part applies in place
/// left open). The set's `normalised` documents close every `$defs` entry, which is right for
/// an entry used as a type but not for one a `then` names by `$ref`.
pub fn closed_schema(schema: &str) -> Value {
    use crate::user_contracts::{
        agent_report::AgentReport, agent_result::AgentResult, agent_result_cases::CaseResult,
        agent_result_conditional::ConditionalResult, train_model_input::TrainModelInput,
    };
    use perago::Contract;
    let text = match schema {
        COMPLETION_SCHEMA => AgentResult::schema(),
        CONDITIONAL_SCHEMA => ConditionalResult::schema(),
        CASES_SCHEMA => CaseResult::schema(),
        REPORT_SCHEMA => AgentReport::schema(),
        TASK_INPUT_SCHEMA => TrainModelInput::schema(),
        other => panic!("no corpus schema {other}"),
    };
    serde_json::from_str(text).expect("a generated schema is JSON")
}

/// [`SCHEMAS`] loaded as one set.
pub fn schemas() -> SchemaSet {
    SchemaSet::load_sources(SCHEMAS.iter().copied()).expect("the user schemas load")
}

/// The corpora from `seed`, in benchmark order.
pub fn all(seed: u64) -> Vec<Corpus> {
    vec![
        small_completions(seed),
        large_completions(seed),
        task_inputs(seed),
        small_completions_conditional(seed),
        small_completions_cases(seed),
        small_reports(seed),
    ]
}

/// A refusal's `kind` moved to the end a third of the time (a `kind` the reader meets last).
fn kind_last_sometimes(rng: &mut Rng, mut doc: Value) -> Value {
    let m = obj(&mut doc);
    if m.contains_key("kind") && rng.chance(33) {
        let kind = m.shift_remove("kind").expect("present");
        m.insert("kind".into(), kind);
    }
    doc
}

/// [`MANY`] small completion payloads.
pub fn small_completions(seed: u64) -> Corpus {
    corpus::build_n(
        "small_completion",
        COMPLETION_SCHEMA,
        seed ^ 0x01,
        MANY,
        |rng| {
            let doc = corpus::small_completion_doc(rng);
            kind_last_sometimes(rng, doc)
        },
        //                                unknown missing type blank over const empty malformed
        |rng, doc| corpus::mutate_completion(rng, doc, &[20, 20, 18, 16, 3, 12, 6, 5]),
    )
}

/// The documents of [`small_completions`], against [`CONDITIONAL_SCHEMA`] (which admits the
/// same ones): the same union, written with `if`/`then`/`else`.
pub fn small_completions_conditional(seed: u64) -> Corpus {
    Corpus {
        name: "small_completion_conditional",
        schema: CONDITIONAL_SCHEMA,
        ..small_completions(seed)
    }
}

/// The documents of [`small_completions`], against [`CASES_SCHEMA`] (which admits the same
/// ones): the chain of `if`s with its cases written as `$ref`s.
pub fn small_completions_cases(seed: u64) -> Corpus {
    Corpus {
        name: "small_completion_cases",
        schema: CASES_SCHEMA,
        ..small_completions(seed)
    }
}

/// The documents of [`small_completions`], each as the `result` of an envelope with a
/// `task_id`, against [`REPORT_SCHEMA`] (an `allOf` of `if`/`then` parts inside `$defs`). A
/// malformed completion stays malformed: its envelope closes, the completion does not.
pub fn small_reports(seed: u64) -> Corpus {
    let completions = small_completions(seed);
    let mut rng = Rng::new(seed ^ 0x04);
    let docs = completions
        .docs
        .iter()
        .map(|doc| {
            let task = corpus::hex(&mut rng, 12);
            let mut out = format!("{{\"task_id\":\"t-{task}\",\"result\":").into_bytes();
            out.extend_from_slice(doc);
            out.push(b'}');
            out
        })
        .collect();
    Corpus {
        name: "small_report",
        schema: REPORT_SCHEMA,
        docs,
        mutations: completions.mutations,
    }
}

/// [`LARGE`] large completion payloads.
pub fn large_completions(seed: u64) -> Corpus {
    corpus::build_n(
        "large_completion",
        COMPLETION_SCHEMA,
        seed ^ 0x02,
        LARGE,
        corpus::large_completion,
        corpus::mutate_large,
    )
}

/// [`MANY`] task inputs.
pub fn task_inputs(seed: u64) -> Corpus {
    corpus::build_n(
        "task_input",
        TASK_INPUT_SCHEMA,
        seed ^ 0x03,
        MANY,
        task_input,
        mutate_task_input,
    )
}

const COLUMNS: &[&str] = &[
    "user_id",
    "country",
    "age_days",
    "plays_7d",
    "plays_30d",
    "skips_7d",
    "device",
    "plan",
    "genre_top",
    "session_len_p50",
    "session_len_p90",
    "tenure_months",
    "churned",
    "ltv_eur",
    "signup_date",
];

fn task_input(rng: &mut Rng) -> Value {
    let workspace = json!({
        "repository": format!("{}-{}", rng.pick(&["ml-data", "features", "events", "catalog"]), rng.below(500)),
        "branch": rng.pick(corpus::BRANCHES),
        "ref": corpus::hex(rng, 64),
        "ref_type": "commit",
    });
    let mut params = Map::new();
    params.insert(
        "dataset".into(),
        format!(
            "{}/{}.parquet",
            rng.pick(&["churn", "ltv", "skips"]),
            rng.pick(&["2026-10", "2026-11", "latest"])
        )
        .into(),
    );
    params.insert(
        "target".into(),
        (*rng.pick(&["churned", "ltv_eur", "skips_7d"])).into(),
    );
    let n = rng.range(2, 8);
    let mut features: Vec<&str> = COLUMNS.to_vec();
    rng.shuffle(&mut features);
    params.insert("features".into(), json!(features[..n]));
    params.insert(
        "model".into(),
        (*rng.pick(&["linear", "gbdt", "random_forest", "mlp"])).into(),
    );
    if rng.chance(70) {
        params.insert(
            "learning_rate".into(),
            json!(*rng.pick(&[0.001, 0.01, 0.05, 0.1, 0.3])),
        );
    }
    if rng.chance(60) {
        params.insert("epochs".into(), json!(rng.range(1, 200)));
    }
    match rng.below(4) {
        0 => {}
        1 => {
            params.insert("seed".into(), Value::Null);
        }
        _ => {
            params.insert("seed".into(), json!(rng.below(100_000)));
        }
    }
    if rng.chance(30) {
        params.insert("dry_run".into(), json!(rng.chance(50)));
    }
    let split = match rng.below(3) {
        0 => json!({"strategy": "random", "test_fraction": *rng.pick(&[0.1, 0.2, 0.25, 0.3])}),
        1 => json!({
            "strategy": "by_column",
            "column": "country",
            "test_values": rng.pick(&[json!(["DE"]), json!(["FR", "IT"]), json!(["SE", "NO", "FI"])]),
        }),
        _ => json!({
            "strategy": "time",
            "column": "signup_date",
            "cutoff": format!("2026-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28)),
        }),
    };
    params.insert("split".into(), split);
    if rng.chance(40) {
        let mut labels = Map::new();
        for _ in 0..rng.range(1, 4) {
            labels.insert(
                (*rng.pick(&["team", "owner", "ticket", "purpose", "cost_center"])).into(),
                format!("{}-{}", rng.pick(&["ml", "growth", "data"]), rng.below(100)).into(),
            );
        }
        params.insert("labels".into(), Value::Object(labels));
    }
    json!({"workspace": workspace, "params": params})
}

fn mutate_task_input(rng: &mut Rng, doc: &mut Value) -> Mutation {
    let m = obj(doc);
    //                     unknown missing type blank const empty range pattern malformed
    match rng.weighted(&[20, 18, 16, 10, 10, 6, 8, 7, 5]) {
        0 => {
            let (at, key): (&[&str], &str) = rng.pick_cloned(&[
                (&[][..], "inputData"),
                (&["workspace"][..], "prefix"),
                (&["params"][..], "learningRate"),
                (&["params"][..], "batch_size"),
                (&["params", "split"][..], "shuffle"),
            ]);
            let mut target = &mut *m;
            for k in at {
                target = target[*k].as_object_mut().expect("present");
            }
            target.insert(key.into(), json!(1));
            Mutation::UnknownField
        }
        1 => {
            let (at, key): (&str, &str) = rng.pick_cloned(&[
                ("", "params"),
                ("workspace", "ref"),
                ("workspace", "ref_type"),
                ("params", "features"),
                ("params", "target"),
                ("split", "column"),
            ]);
            match at {
                "" => {
                    m.remove(key);
                }
                "split" => {
                    let split = m["params"]["split"].as_object_mut().expect("present");
                    if split.contains_key("column") {
                        split.remove("column");
                    } else {
                        split.remove("test_fraction");
                    }
                }
                _ => {
                    m[at].as_object_mut().expect("present").remove(key);
                }
            }
            Mutation::MissingRequired
        }
        2 => {
            let p = &mut m["params"];
            match rng.below(4) {
                0 => p["epochs"] = json!("10"),
                1 => p["features"] = json!("user_id,country"),
                2 => p["seed"] = json!(1.5),
                _ => p["dry_run"] = json!("false"),
            }
            Mutation::WrongType
        }
        3 => {
            if rng.chance(50) {
                m["workspace"][*rng.pick(&["repository", "branch"])] = json!("");
            } else {
                m["params"]["dataset"] = json!("");
            }
            Mutation::BlankString
        }
        4 => {
            match rng.below(3) {
                0 => m["workspace"]["ref_type"] = json!(*rng.pick(&["branch", "Commit"])),
                1 => m["params"]["model"] = json!(*rng.pick(&["svm", "GBDT", "xgboost"])),
                _ => m["params"]["split"]["strategy"] = json!(*rng.pick(&["stratified", "Random"])),
            }
            Mutation::BadConst
        }
        5 => {
            m["params"]["features"] = json!([]);
            Mutation::EmptyArray
        }
        6 => {
            match rng.below(3) {
                0 => m["params"]["epochs"] = json!(*rng.pick(&[0, 5000])),
                1 => m["params"]["learning_rate"] = json!(*rng.pick(&[0.0, 1.5])),
                _ => m["params"]["seed"] = json!(-1),
            }
            Mutation::OutOfRange
        }
        7 => {
            if rng.chance(60) {
                m["workspace"]["ref"] = json!(*rng.pick(&["main", "HEAD~1", "0123abc"]));
            } else {
                m["params"]["split"] =
                    json!({"strategy": "time", "column": "signup_date", "cutoff": "01/11/2026"});
            }
            Mutation::PatternMismatch
        }
        _ => Mutation::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_contracts::agent_report::AgentReport;
    use crate::user_contracts::agent_result::AgentResult;
    use crate::user_contracts::agent_result_cases::CaseResult;
    use crate::user_contracts::agent_result_conditional::ConditionalResult;
    use crate::user_contracts::train_model_input::TrainModelInput;
    use perago::Contract;
    use std::collections::BTreeMap;

    fn generated_violations<T: Contract>(doc: &[u8]) -> Vec<perago_schema::Violation> {
        T::from_slice(doc)
            .err()
            .map(|v| v.into_vec())
            .unwrap_or_default()
    }

    #[test]
    fn corpora_are_reproducible_and_sized() {
        let (a, b) = (task_inputs(DEFAULT_SEED), task_inputs(DEFAULT_SEED));
        assert_eq!(a.docs, b.docs);
        assert_ne!(a.docs, task_inputs(DEFAULT_SEED + 1).docs);
        for corpus in all(DEFAULT_SEED) {
            let n = corpus.docs.len();
            assert_eq!(
                n,
                if corpus.name == "large_completion" {
                    LARGE
                } else {
                    MANY
                }
            );
            assert_eq!(corpus.invalid_count(), n / 5, "{}", corpus.name);
            let size = corpus.average_size();
            let (lo, hi) = match corpus.name {
                "small_completion" | "small_completion_conditional" | "small_completion_cases" => {
                    (200.0, 400.0)
                }
                "small_report" => (230.0, 440.0),
                "large_completion" => (6000.0, 8500.0),
                _ => (350.0, 600.0),
            };
            assert!((lo..=hi).contains(&size), "{}: {size}", corpus.name);
        }
    }

    /// Every label is what the interpreter and jsonschema (on the closed schemas) say, and the
    /// generated reader (`crate::user_contracts`) reports exactly the interpreter's violations;
    /// every mutation kind a corpus uses occurs, and some refusals name their `kind` last.
    #[test]
    fn labels_agree_with_the_interpreter_and_jsonschema() {
        let set = schemas();
        let interpreter = set.validator().expect("the interpreter takes the schemas");
        for corpus in all(DEFAULT_SEED) {
            let file = set.find(corpus.schema).expect("the schema is in the set");
            let root = file.root.expect("a root schema");
            let interpreter = interpreter
                .at(&set.ir.node(root).location)
                .expect("the root is compiled");
            let validator = jsonschema::draft202012::new(&closed_schema(corpus.schema))
                .expect("jsonschema compiles the schema");
            let mut seen = BTreeMap::new();
            let mut kind_last = 0;
            for (i, (doc, mutation)) in corpus.docs.iter().zip(&corpus.mutations).enumerate() {
                let text = String::from_utf8_lossy(doc);
                let violations = interpreter.validate_slice(doc);
                assert_eq!(
                    violations.is_empty(),
                    mutation.is_none(),
                    "{} #{i} {mutation:?}: {text}\n{violations:?}",
                    corpus.name
                );
                let generated = match corpus.schema {
                    COMPLETION_SCHEMA => generated_violations::<AgentResult>(doc),
                    CONDITIONAL_SCHEMA => generated_violations::<ConditionalResult>(doc),
                    CASES_SCHEMA => generated_violations::<CaseResult>(doc),
                    REPORT_SCHEMA => generated_violations::<AgentReport>(doc),
                    _ => generated_violations::<TrainModelInput>(doc),
                };
                assert_eq!(
                    generated, violations,
                    "{} #{i} (generated): {text}",
                    corpus.name
                );
                let parsed = serde_json::from_slice::<Value>(doc);
                let valid = parsed.as_ref().is_ok_and(|v| validator.is_valid(v));
                assert_eq!(
                    valid,
                    mutation.is_none(),
                    "{} #{i} {mutation:?} (jsonschema): {text}",
                    corpus.name
                );
                if let Ok(Value::Object(m)) = &parsed
                    && m.keys().next_back().is_some_and(|k| k == "kind")
                {
                    kind_last += 1;
                }
                if let Some(m) = mutation {
                    *seen.entry(*m).or_insert(0) += 1;
                }
            }
            assert!(seen.len() >= 6, "{}: {seen:?}", corpus.name);
            if corpus.name == "small_completion" {
                assert!(
                    kind_last > 1000,
                    "{kind_last} refusals name their kind last"
                );
            }
        }
    }
}
