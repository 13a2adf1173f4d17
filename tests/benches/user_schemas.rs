//! Validation on schemas written the way users write them (`tests/user-schemas/`), on the
//! corpora of `perago_tests::user_corpus` (20,000 small completions, 2,000 large ones, 20,000
//! task inputs, and the small completions again against the three schemas written with
//! `if`/`then`/`else`, made at start from the seed), throughput in bytes of the whole corpus.
//!
//! Contenders, each given one document's bytes at a time:
//!
//! - `serde_json_value`: `serde_json::from_slice::<Value>`, the floor of anything that parses;
//! - `serde_derive`: `serde_json::from_slice` into hand-written `#[derive(Deserialize)]` types
//!   mirroring the schemas (`deny_unknown_fields`, owned strings, serde's own tagged and
//!   untagged enums): parsing into the type with no validation beyond the shape, first error
//!   only;
//! - `jsonschema`: the `jsonschema` crate (draft 2020-12) compiled once from the root type's
//!   closed schema (`user_corpus::closed_schema`), every error collected after a `Value` parse;
//! - `perago_interpreter`: `Validator::validate_slice_with`, the run-time interpreter (the
//!   schema compiled once, each document read once into a reused tape);
//! - `typify_jsonschema`: the pipeline a user would assemble instead of perago: a `Value` parse,
//!   the `jsonschema` check above (every error), then, when valid, `serde_json::from_value` into
//!   typify's types for the same closed schema (`perago_tests::typify_types`);
//! - `perago_generated`: the generated `Contract::from_slice` (`perago_tests::user_contracts`):
//!   one pass from the bytes to the typed value or every violation.
//!
//! `cargo bench -p perago-tests --bench user_schemas`; results are in BENCHMARKS.md.
//! Before criterion's groups, each corpus gets `PERAGO_BENCH_ROUNDS` (default 15) paired rounds
//! (see [`paired`]): on a shared machine whose load drifts, their per-round ratios are the
//! figures to compare. `PERAGO_BENCH_SEED=N` derives the corpora from another seed; `PERAGO_BENCH_BREAKDOWN=1` adds
//! a `breakdown/<corpus>/{valid,invalid}` group per corpus: serde's derive and the generated
//! reader on the valid and the invalid documents apart.

#[path = "user_schemas/serde_peer.rs"]
mod serde_peer;

use criterion::{Criterion, SamplingMode, Throughput};
use perago::Contract;
use perago_schema::{Options as ValidatorOptions, Scratch, Validator};
use perago_tests::corpus::Corpus;
use perago_tests::typify_types;
use perago_tests::user_contracts::agent_report::AgentReport;
use perago_tests::user_contracts::agent_result::AgentResult;
use perago_tests::user_contracts::agent_result_cases::CaseResult;
use perago_tests::user_contracts::agent_result_conditional::ConditionalResult;
use perago_tests::user_contracts::train_model_input::TrainModelInput;
use perago_tests::user_corpus;
use serde_json::Value;
use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

/// One contender: validates one document, keeping its whole result alive through `black_box`,
/// and says whether the document was accepted.
type Contender<'a> = Box<dyn Fn(&[u8]) -> bool + 'a>;

fn serde_json_value(doc: &[u8]) -> bool {
    black_box(serde_json::from_slice::<Value>(doc)).is_ok()
}

fn serde_derive<T: serde::de::DeserializeOwned>(doc: &[u8]) -> bool {
    black_box(serde_json::from_slice::<T>(doc)).is_ok()
}

/// A `Value` parse, every `jsonschema` error, then typify's type read from the valid value.
fn typify_jsonschema<T: serde::de::DeserializeOwned>(
    validator: &jsonschema::Validator,
    doc: &[u8],
) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(doc) else {
        return false;
    };
    let errors: Vec<_> = validator.iter_errors(&value).collect();
    if !black_box(&errors).is_empty() {
        return false;
    }
    black_box(serde_json::from_value::<T>(value)).is_ok()
}

fn jsonschema_validate(validator: &jsonschema::Validator, doc: &[u8]) -> bool {
    match serde_json::from_slice::<Value>(doc) {
        Ok(value) => {
            let errors: Vec<_> = validator.iter_errors(&value).collect();
            black_box(&errors).is_empty()
        }
        Err(e) => {
            black_box(e);
            false
        }
    }
}

fn interpreter(validator: &Validator, scratch: &RefCell<Scratch>, doc: &[u8]) -> bool {
    black_box(validator.validate_slice_with(&mut scratch.borrow_mut(), doc)).is_empty()
}

fn generated<T: Contract>(doc: &[u8]) -> bool {
    black_box(T::from_slice(doc)).is_ok()
}

/// Validates every document; the number accepted.
fn run(contender: &dyn Fn(&[u8]) -> bool, docs: &[Vec<u8>]) -> usize {
    docs.iter().filter(|doc| contender(black_box(doc))).count()
}

/// How a contender's verdicts compare with the corpus labels. `validates`: a validator, which
/// must agree on every document (a warning otherwise); serde's derive only checks the shape.
fn sanity(corpus: &Corpus, name: &str, validates: bool, contender: &dyn Fn(&[u8]) -> bool) {
    let wrong: Vec<usize> = corpus
        .docs
        .iter()
        .zip(corpus.expected_valid())
        .enumerate()
        .filter(|(_, (doc, valid))| contender(doc) != *valid)
        .map(|(i, _)| i)
        .collect();
    let accepted = run(contender, &corpus.docs);
    let rejected = corpus.docs.len() - accepted;
    if wrong.is_empty() {
        println!("  {name:<20} accepts {accepted}, rejects {rejected} (as labelled)");
    } else if !validates {
        println!(
            "  {name:<20} accepts {accepted}, rejects {rejected} ({} invalid documents have the right shape)",
            wrong.len()
        );
    } else {
        let i = wrong[0];
        println!(
            "  WARNING {name}: {} documents disagree with their label, e.g. #{i} ({:?}): {}",
            wrong.len(),
            corpus.mutations[i],
            String::from_utf8_lossy(&corpus.docs[i]),
        );
    }
}

/// Documents per corpus when run as a test.
const QUICK_DOCS: usize = 1000;

/// Paired rounds: every round times one pass of each contender over the corpus, back to back
/// (the order rotating), so that a machine whose load drifts slows all of them alike; prints
/// each contender's median pass and the median over rounds of its time relative to
/// `serde_derive`'s in the same round.
fn paired(corpus: &Corpus, contenders: &[(&str, bool, Contender<'_>)], rounds: usize) {
    let mut times = vec![Vec::with_capacity(rounds); contenders.len()];
    for round in 0..rounds {
        for k in 0..contenders.len() {
            let i = (k + round) % contenders.len();
            let start = std::time::Instant::now();
            black_box(run(&contenders[i].2, &corpus.docs));
            times[i].push(start.elapsed().as_secs_f64());
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let serde = contenders
        .iter()
        .position(|(name, _, _)| *name == "serde_derive")
        .expect("serde_derive is a contender");
    println!("  paired rounds ({rounds}): median pass, median time relative to serde_derive");
    for (i, (name, _, _)) in contenders.iter().enumerate() {
        let relative: Vec<f64> = (0..rounds).map(|r| times[i][r] / times[serde][r]).collect();
        let mb = corpus.total_bytes() as f64 / median(times[i].clone()) / 1e6;
        println!(
            "    {name:<20} {:>9.3} ms  {mb:>7.1} MB/s  x{:.3}",
            median(times[i].clone()) * 1e3,
            median(relative)
        );
    }
}

fn main() {
    let seed = match std::env::var("PERAGO_BENCH_SEED") {
        Ok(text) => text.parse().expect("PERAGO_BENCH_SEED is a whole number"),
        Err(_) => user_corpus::DEFAULT_SEED,
    };
    let set = user_corpus::schemas();
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once, on a slice.
    let quick = !std::env::args().any(|a| a == "--bench");
    let mut corpora = user_corpus::all(seed);
    if quick {
        for corpus in &mut corpora {
            corpus.docs.truncate(QUICK_DOCS);
            corpus.mutations.truncate(QUICK_DOCS);
        }
    }
    let rounds = match std::env::var("PERAGO_BENCH_ROUNDS") {
        Ok(text) => text.parse().expect("PERAGO_BENCH_ROUNDS is a whole number"),
        Err(_) if quick => 1,
        Err(_) => 15,
    };

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();

    for corpus in &corpora {
        let file = set
            .find(corpus.schema)
            .expect("the corpus schema is in the set");
        let validator = jsonschema::draft202012::new(&user_corpus::closed_schema(corpus.schema))
            .expect("jsonschema compiles the schema");
        let interpreted = Validator::load_sources(
            user_corpus::SCHEMAS.iter().copied(),
            &file.file,
            ValidatorOptions::default(),
        )
        .expect("the interpreter compiles the schema");
        let scratch = RefCell::new(Scratch::default());
        // typify's types where typify takes the schema (it stops on `if`/`then`/`else`).
        let (derive, typify, typed): (Contender<'_>, Option<Contender<'_>>, Contender<'_>) =
            match corpus.schema {
                user_corpus::COMPLETION_SCHEMA => (
                    Box::new(serde_derive::<serde_peer::AgentResult>),
                    Some(Box::new(|doc| {
                        typify_jsonschema::<typify_types::agent_result::AgentResult>(
                            &validator, doc,
                        )
                    })),
                    Box::new(generated::<AgentResult>),
                ),
                // The same documents: serde's types are the same.
                user_corpus::CONDITIONAL_SCHEMA => (
                    Box::new(serde_derive::<serde_peer::AgentResult>),
                    None,
                    Box::new(generated::<ConditionalResult>),
                ),
                user_corpus::CASES_SCHEMA => (
                    Box::new(serde_derive::<serde_peer::AgentResult>),
                    None,
                    Box::new(generated::<CaseResult>),
                ),
                user_corpus::REPORT_SCHEMA => (
                    Box::new(serde_derive::<serde_peer::AgentReport>),
                    None,
                    Box::new(generated::<AgentReport>),
                ),
                user_corpus::TASK_INPUT_SCHEMA => (
                    Box::new(serde_derive::<serde_peer::TrainModelInput>),
                    Some(Box::new(|doc| {
                        typify_jsonschema::<typify_types::train_model_input::TrainModelInput>(
                            &validator, doc,
                        )
                    })),
                    Box::new(generated::<TrainModelInput>),
                ),
                other => panic!("no generated type for corpus schema {other}"),
            };
        let mut contenders: Vec<(&str, bool, Contender<'_>)> = vec![
            ("serde_json_value", false, Box::new(serde_json_value)),
            ("serde_derive", false, derive),
            (
                "jsonschema",
                true,
                Box::new(|doc| jsonschema_validate(&validator, doc)),
            ),
            (
                "perago_interpreter",
                true,
                Box::new(|doc| interpreter(&interpreted, &scratch, doc)),
            ),
        ];
        if let Some(typify) = typify {
            contenders.push(("typify_jsonschema", true, typify));
        }
        contenders.push(("perago_generated", true, typed));

        println!(
            "corpus {} (seed {seed}): {} documents ({} invalid) against {}, {} bytes in all, average document size {:.0} B",
            corpus.name,
            corpus.docs.len(),
            corpus.invalid_count(),
            file.file,
            corpus.total_bytes(),
            corpus.average_size(),
        );
        let mutations: Vec<String> = corpus
            .mutation_counts()
            .iter()
            .map(|(m, n)| format!("{m:?} {n}"))
            .collect();
        println!("  mutations: {}", mutations.join(", "));
        for (name, validates, contender) in &contenders {
            if *name != "serde_json_value" {
                sanity(corpus, name, *validates, contender);
            }
        }

        paired(corpus, &contenders, rounds);

        let mut group = criterion.benchmark_group(format!("users/{}", corpus.name));
        group.throughput(Throughput::Bytes(corpus.total_bytes()));
        group.sampling_mode(SamplingMode::Flat);
        for (name, _, contender) in &contenders {
            group.bench_function(*name, |b| b.iter(|| run(contender, &corpus.docs)));
        }
        group.finish();

        if std::env::var_os("PERAGO_BENCH_BREAKDOWN").is_some() {
            // The valid and the invalid documents apart, for the two typed readers.
            let (valid, invalid): (Vec<_>, Vec<_>) = corpus
                .docs
                .iter()
                .cloned()
                .zip(corpus.expected_valid())
                .partition(|(_, valid)| *valid);
            for (part, docs) in [("valid", valid), ("invalid", invalid)] {
                let docs: Vec<Vec<u8>> = docs.into_iter().map(|(d, _)| d).collect();
                let mut group =
                    criterion.benchmark_group(format!("breakdown/{}/{part}", corpus.name));
                group.throughput(Throughput::Bytes(docs.iter().map(|d| d.len() as u64).sum()));
                group.sampling_mode(SamplingMode::Flat);
                for (name, _, contender) in &contenders {
                    if matches!(*name, "serde_derive" | "perago_generated") {
                        group.bench_function(*name, |b| b.iter(|| run(contender, &docs)));
                    }
                }
                group.finish();
            }
        }
    }
    criterion.final_summary();
}
