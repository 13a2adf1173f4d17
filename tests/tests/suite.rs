//! The official JSON-Schema-Test-Suite, drafts 2020-12, 2019-09 and 7
//! (`tests/data/json-schema-test-suite`, see its README for the source), run through the
//! interpreter (`perago_schema::Validator`), each schema read in its draft (the draft's
//! `$schema` added where a suite schema leaves it out, as the suite's harness says).
//!
//! Every case of the required files (leaving `format.json` aside) is counted as
//!
//! - **agrees**: perago's verdict is the suite's;
//! - **agrees by policy**: perago's verdict differs, and the same schema read with objects
//!   open (`Options { close_objects: false }`, the one difference) gives the suite's verdict:
//!   perago's closed-object policy explains it, nothing else;
//! - **refused**: the schema uses what perago leaves out (`$dynamicRef`, remote references,
//!   other vocabularies), and loading it says so;
//! - **disagrees**: anything else.
//!
//! The tests print the figures per file, fail on any disagreement, and require a share of the
//! required cases to agree (by policy included): 90% for 2020-12 (its `$dynamicRef` files are
//! refused), 95% for 2019-09 and draft 7. The `optional/format` files are measured the same
//! way; a disagreement there fails too, for the formats perago checks.

use perago_schema::{Options, Validator};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    cases: usize,
    agree: usize,
    by_policy: usize,
    refused: usize,
    disagree: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.cases += o.cases;
        self.agree += o.agree;
        self.by_policy += o.by_policy;
        self.refused += o.refused;
        self.disagree += o.disagree;
    }
}

/// One draft of the suite: its directory, the `$schema` its schemas mean, the share of the
/// required cases that must agree (in percent).
#[derive(Debug, Clone, Copy)]
struct Draft {
    dir: &'static str,
    dialect: &'static str,
    agree_percent: usize,
}

const DRAFT_2020_12: Draft = Draft {
    dir: "draft2020-12",
    dialect: "https://json-schema.org/draft/2020-12/schema",
    agree_percent: 90,
};
const DRAFT_2019_09: Draft = Draft {
    dir: "draft2019-09",
    dialect: "https://json-schema.org/draft/2019-09/schema",
    agree_percent: 95,
};
const DRAFT_7: Draft = Draft {
    dir: "draft7",
    dialect: "http://json-schema.org/draft-07/schema#",
    agree_percent: 95,
};

impl Draft {
    fn path(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/json-schema-test-suite")
            .join(self.dir)
    }

    /// A suite schema as its draft means it: with the draft's `$schema` when it has none.
    fn schema(self, schema: &Value) -> Value {
        let mut schema = schema.clone();
        if let Value::Object(map) = &mut schema
            && !map.contains_key("$schema")
        {
            let mut with = serde_json::Map::new();
            with.insert("$schema".to_owned(), self.dialect.into());
            with.extend(std::mem::take(map));
            *map = with;
        }
        schema
    }
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Runs one suite file; returns its tally, and what disagreed and why schemas were refused.
fn run_file(
    draft: Draft,
    path: &Path,
    failures: &mut Vec<String>,
    refusals: &mut Vec<String>,
) -> Tally {
    let text = std::fs::read_to_string(path).expect("suite file readable");
    let groups: Vec<Value> = serde_json::from_str(&text).expect("suite file is JSON");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut t = Tally::default();
    for group in &groups {
        let schema = &draft.schema(&group["schema"]);
        let tests = group["tests"].as_array().expect("tests");
        let description = group["description"].as_str().unwrap_or("");
        let closed = Validator::from_value(schema, Options::default());
        let open = Validator::from_value(
            schema,
            Options {
                close_objects: false,
            },
        );
        let (closed, open) = match (closed, open) {
            (Ok(c), Ok(o)) => (c, o),
            (Err(e), _) | (_, Err(e)) => {
                t.cases += tests.len();
                t.refused += tests.len();
                let first = e.to_string().lines().next().unwrap_or("").to_owned();
                refusals.push(format!(
                    "{name}: {description} ({} cases): {first}",
                    tests.len()
                ));
                continue;
            }
        };
        for case in tests {
            t.cases += 1;
            let bytes = serde_json::to_vec(&case["data"]).expect("serialisable");
            let expected = case["valid"].as_bool().expect("valid is a boolean");
            let violations = closed.validate_slice(&bytes);
            if violations.is_empty() == expected {
                t.agree += 1;
                continue;
            }
            if open.validate_slice(&bytes).is_empty() == expected {
                t.by_policy += 1;
                continue;
            }
            t.disagree += 1;
            failures.push(format!(
                "{name}: {description} / {}: suite says {}, perago reports {:?}\n    schema: {schema}\n    data: {}",
                case["description"].as_str().unwrap_or(""),
                if expected { "valid" } else { "invalid" },
                violations
                    .iter()
                    .map(|v| format!("{} [{}] {}", v.path, v.code, v.message))
                    .collect::<Vec<_>>(),
                case["data"]
            ));
        }
    }
    t
}

fn run_dir(
    draft: Draft,
    dir: &Path,
    skip: &[&str],
) -> (BTreeMap<String, Tally>, Vec<String>, Vec<String>) {
    let mut tallies = BTreeMap::new();
    let mut failures = Vec::new();
    let mut refusals = Vec::new();
    for path in json_files(dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if skip.contains(&name.as_str()) {
            continue;
        }
        let t = run_file(draft, &path, &mut failures, &mut refusals);
        tallies.insert(name, t);
    }
    (tallies, failures, refusals)
}

fn print(title: &str, tallies: &BTreeMap<String, Tally>) -> Tally {
    let mut total = Tally::default();
    eprintln!("{title}");
    eprintln!(
        "  {:32} {:>6} {:>6} {:>9} {:>8} {:>9}",
        "file", "cases", "agree", "by policy", "refused", "disagree"
    );
    for (name, t) in tallies {
        eprintln!(
            "  {name:32} {:>6} {:>6} {:>9} {:>8} {:>9}",
            t.cases, t.agree, t.by_policy, t.refused, t.disagree
        );
        total.add(t);
    }
    eprintln!(
        "  {:32} {:>6} {:>6} {:>9} {:>8} {:>9}",
        "total", total.cases, total.agree, total.by_policy, total.refused, total.disagree
    );
    total
}

/// The required files of `draft`: figures printed, no disagreement, the draft's share agreeing.
fn required(draft: Draft) {
    let (tallies, failures, refusals) = run_dir(draft, &draft.path(), &["format.json"]);
    let total = print(
        &format!(
            "JSON-Schema-Test-Suite {}, required files (format.json aside)",
            draft.dir
        ),
        &tallies,
    );
    let agreeing = total.agree + total.by_policy;
    eprintln!(
        "{}: agreeing: {agreeing} of {} ({:.1}%): {} as written, {} by the closed-object policy; {} refused; {} disagree",
        draft.dir,
        total.cases,
        100.0 * agreeing as f64 / total.cases as f64,
        total.agree,
        total.by_policy,
        total.refused,
        total.disagree
    );
    eprintln!("refused schemas:");
    for r in &refusals {
        eprintln!("  {r}");
    }
    for f in &failures {
        eprintln!("DISAGREES {f}");
    }
    assert!(
        failures.is_empty(),
        "{}: {} cases disagree (printed above)",
        draft.dir,
        failures.len()
    );
    assert!(
        refusals.iter().all(|r| !r.trim_end().ends_with(':')),
        "every refusal says why"
    );
    assert_eq!(agreeing + total.refused, total.cases);
    assert!(
        agreeing * 100 >= total.cases * draft.agree_percent,
        "{}: only {agreeing} of {} cases agree; at least {}% must",
        draft.dir,
        total.cases,
        draft.agree_percent
    );
}

#[test]
fn the_interpreter_agrees_with_the_json_schema_test_suite() {
    required(DRAFT_2020_12);
}

#[test]
fn the_interpreter_agrees_with_the_suite_draft_2019_09() {
    required(DRAFT_2019_09);
}

#[test]
fn the_interpreter_agrees_with_the_suite_draft_7() {
    required(DRAFT_7);
}

/// The `optional/format` files of `draft`: every case of a format perago checks agrees.
fn formats(draft: Draft) {
    let (tallies, failures, refusals) = run_dir(draft, &draft.path().join("optional/format"), &[]);
    let total = print(
        &format!("JSON-Schema-Test-Suite {}, optional/format", draft.dir),
        &tallies,
    );
    for r in &refusals {
        eprintln!("  refused: {r}");
    }
    for f in &failures {
        eprintln!("DISAGREES {f}");
    }
    eprintln!(
        "{} format: {} of {} agree, {} disagree",
        draft.dir,
        total.agree + total.by_policy,
        total.cases,
        total.disagree
    );
    // Formats perago does not check are annotations: their invalid cases are expected to
    // disagree. Every other format must agree on every case.
    let checked: Vec<&String> = failures
        .iter()
        .filter(|f| {
            !UNCHECKED
                .iter()
                .any(|u| f.starts_with(&format!("{u}.json:")))
        })
        .collect();
    assert!(
        checked.is_empty() && refusals.is_empty(),
        "{}: {} cases of checked formats disagree",
        draft.dir,
        checked.len()
    );
}

#[test]
fn formats_measured_on_the_suites_optional_format_files() {
    formats(DRAFT_2020_12);
}

#[test]
fn formats_measured_on_the_suites_optional_format_files_draft_2019_09() {
    formats(DRAFT_2019_09);
}

#[test]
fn formats_measured_on_the_suites_optional_format_files_draft_7() {
    formats(DRAFT_7);
}

/// Formats perago leaves as annotations (see `docs/src/schemas.md`).
const UNCHECKED: &[&str] = &["idn-email", "idn-hostname", "uri-template", "unknown"];

/// Code generation on the same schemas (`SchemaSet`, what `perago codegen` loads): how many it
/// takes, how many of those it types rule by rule and how many it defers in part to the
/// interpreter; and for every one it takes, the standalone schema a generated type records
/// (`Contract::SCHEMA`, what a TaskDef carries, for validators other than perago's: 2020-12,
/// whatever the draft the schema is written in) gives the original's verdict on every case of
/// the group.
fn code_generation(draft: Draft) {
    let mut groups = 0;
    let mut taken = 0;
    let mut deferred = 0;
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for path in json_files(&draft.path()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "format.json" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("suite file readable");
        let file_groups: Vec<Value> = serde_json::from_str(&text).expect("suite file is JSON");
        for group in &file_groups {
            let schema = draft.schema(&group["schema"]);
            let Ok(original) = Validator::from_value(&schema, Options::default()) else {
                continue; // what the interpreter refuses, codegen refuses too
            };
            groups += 1;
            let text = schema.to_string();
            let set = match perago_codegen::SchemaSet::load_sources([("s.json", text.as_str())]) {
                Ok(set) => set,
                Err(e) => {
                    let first = e.to_string().lines().next().unwrap_or("").to_owned();
                    let why = first
                        .split_once(": ")
                        .map_or(first.clone(), |(_, w)| w.to_owned());
                    let why: String = why.chars().take(90).collect();
                    *refusals.entry(why).or_default() += 1;
                    continue;
                }
            };
            taken += 1;
            if set.ir.nodes().any(|(_, n)| n.deferred.is_some()) {
                deferred += 1;
            }
            let Some(root) = set.files[0].root else {
                continue;
            };
            let standalone = perago_codegen::bundle::standalone(&set, root);
            let recorded =
                Validator::from_value(&standalone, Options::default()).unwrap_or_else(|e| {
                    panic!("{name}: the standalone schema {standalone} does not compile: {e}")
                });
            for case in group["tests"].as_array().expect("tests") {
                let bytes = serde_json::to_vec(&case["data"]).expect("serialisable");
                if original.is_valid(&bytes) != recorded.is_valid(&bytes) {
                    failures.push(format!(
                        "{name}: {} / {}\n    schema: {}\n    standalone: {standalone}\n    data: {}",
                        group["description"].as_str().unwrap_or(""),
                        case["description"].as_str().unwrap_or(""),
                        schema,
                        case["data"]
                    ));
                }
            }
        }
    }
    eprintln!(
        "{}: code generation takes {taken} of the {groups} suite schemas the interpreter takes ({:.1}%): {} typed rule by rule, {deferred} deferred in part to the interpreter",
        draft.dir,
        100.0 * taken as f64 / groups as f64,
        taken - deferred
    );
    eprintln!("refused, by reason:");
    let mut reasons: Vec<(&String, &usize)> = refusals.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1));
    for (why, n) in reasons {
        eprintln!("  {n:4}  {why}");
    }
    for f in &failures {
        eprintln!("DIFFERS {f}");
    }
    assert!(
        failures.is_empty(),
        "{}: {} cases: the standalone schema's verdict differs from the original's",
        draft.dir,
        failures.len()
    );
}

#[test]
fn code_generation_takes_the_suites_schemas() {
    code_generation(DRAFT_2020_12);
}

#[test]
fn code_generation_takes_the_suites_schemas_draft_2019_09() {
    code_generation(DRAFT_2019_09);
}

#[test]
fn code_generation_takes_the_suites_schemas_draft_7() {
    code_generation(DRAFT_7);
}
