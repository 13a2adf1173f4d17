//! The validation benchmark: "from document bytes to a typed value or the full violation list",
//! per corpus (see `perago_tests::corpus`), throughput in bytes of the whole corpus.
//!
//! Contenders, each given one document's bytes at a time:
//!
//! - `serde_json_value`: `serde_json::from_slice::<Value>`, the floor;
//! - `jsonschema`: the `jsonschema` crate, draft 2020-12, validator compiled once from the
//!   closed (normalised) schemas with every `schemas/` file registered by `$id`; parse to a
//!   `Value`, then collect every error;
//! - `perago_interpreter`: `perago_schema::Validator`, the interpreter `perago validate` runs:
//!   the schema compiled once, each document read once from its bytes into a reused tape
//!   (until December 2026 this row was the walk over a parsed `Value`, `Ir::validate_slice`,
//!   since retired, and the compiled interpreter's row was `perago_compiled`);
//! - `perago_generated`: the generated `Contract::from_slice`: one pass from the bytes to the
//!   typed value or every violation (`perago_schema::reader`).
//!
//! Run with `cargo bench -p perago-tests --bench validate`; results are in BENCHMARKS.md.
//!
//! With `PERAGO_BENCH_BREAKDOWN=1` set, a `breakdown/<corpus>/…` group per corpus also runs,
//! setting the generated validator beside what bounds it (the parser's lexing alone, a `Value`
//! parse), on valid and invalid documents apart, and the `pattern` regex vs a hand-written
//! scan, to show where its time goes.

use criterion::{Criterion, SamplingMode, Throughput};
use perago::Contract;
use perago::contracts::workspace_task_input::WorkspaceTaskInput;
use perago_codegen::SchemaSet;
use perago_completion::contracts::worker_completion_v1::WorkerCompletionV1;
use perago_schema::{Options, Scratch, Validator};
use perago_tests::corpus::{self, Corpus};
use serde::de::IgnoredAny;
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

fn generated<T: Contract>(doc: &[u8]) -> bool {
    black_box(T::from_slice(doc)).is_ok()
}

/// Validates every document; the number accepted.
fn run(contender: &dyn Fn(&[u8]) -> bool, docs: &[Vec<u8>]) -> usize {
    docs.iter().filter(|doc| contender(black_box(doc))).count()
}

/// Checks that a contender accepts exactly the documents the corpus labels valid.
fn sanity(corpus: &Corpus, name: &str, contender: &dyn Fn(&[u8]) -> bool) {
    let wrong: Vec<usize> = corpus
        .docs
        .iter()
        .zip(corpus.expected_valid())
        .enumerate()
        .filter(|(_, (doc, valid))| contender(doc) != *valid)
        .map(|(i, _)| i)
        .collect();
    let accepted = run(contender, &corpus.docs);
    if wrong.is_empty() {
        println!(
            "  {name:<20} accepts {accepted}, rejects {} (as labelled)",
            corpus.docs.len() - accepted
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

fn main() {
    let set = corpus::contract_schemas();
    let registry = jsonschema::Registry::new()
        .extend(set.files.iter().map(|f| (f.id.as_str(), &f.normalised)))
        .and_then(|r| r.prepare())
        .expect("every schema registers by $id");
    let corpora = corpus::all();

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();

    for corpus in &corpora {
        let file = set
            .find(corpus.schema)
            .expect("the corpus schema is in schemas/");
        let validator = jsonschema::draft202012::options()
            .with_registry(&registry)
            .build(&file.normalised)
            .expect("jsonschema compiles the schema");

        let compiled = Validator::load_sources(
            set.files
                .iter()
                .map(|f| (f.file.as_str(), f.source.as_str())),
            &file.file,
            Options::default(),
        )
        .expect("the compiled interpreter takes the schema");
        let scratch = RefCell::new(Scratch::default());
        let mut contenders: Vec<(&str, Contender<'_>)> = vec![
            ("serde_json_value", Box::new(serde_json_value)),
            (
                "jsonschema",
                Box::new(|doc| jsonschema_validate(&validator, doc)),
            ),
            (
                "perago_interpreter",
                Box::new(|doc| {
                    black_box(compiled.validate_slice_with(&mut scratch.borrow_mut(), doc))
                        .is_empty()
                }),
            ),
        ];
        // --- perago_generated: the generated validators (perago::contracts) ---------------
        match corpus.schema {
            "worker-completion.v1" => {
                contenders.push((
                    "perago_generated",
                    Box::new(generated::<WorkerCompletionV1>),
                ));
            }
            "workspace-task-input" => {
                contenders.push((
                    "perago_generated",
                    Box::new(generated::<WorkspaceTaskInput>),
                ));
            }
            other => panic!("no generated type for corpus schema {other}"),
        }
        // --- end perago_generated ---------------------------------------------------------

        println!(
            "corpus {}: {} documents ({} invalid) against {}, {} bytes in all, average document size {:.0} B",
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
        for (name, contender) in &contenders {
            if *name != "serde_json_value" {
                sanity(corpus, name, contender);
            }
        }

        let mut group = criterion.benchmark_group(corpus.name);
        group.throughput(Throughput::Bytes(corpus.total_bytes()));
        group.sampling_mode(SamplingMode::Flat);
        for (name, contender) in &contenders {
            group.bench_function(*name, |b| b.iter(|| run(contender, &corpus.docs)));
        }
        group.finish();
    }

    if std::env::var_os("PERAGO_BENCH_BREAKDOWN").is_some() {
        for corpus in &corpora {
            match corpus.schema {
                "worker-completion.v1" => breakdown::<WorkerCompletionV1>(&mut criterion, corpus),
                _ => breakdown::<WorkspaceTaskInput>(&mut criterion, corpus),
            }
        }
        patterns(&mut criterion, &set, &corpora);
    }

    criterion.final_summary();
}

/// The generated validator taken apart on one corpus.
fn breakdown<T: Contract>(criterion: &mut Criterion, corpus: &Corpus) {
    let (valid, invalid): (Vec<_>, Vec<_>) = corpus
        .docs
        .iter()
        .zip(corpus.expected_valid())
        .partition(|(_, valid)| *valid);
    let valid: Vec<Vec<u8>> = valid.into_iter().map(|(d, _)| d.clone()).collect();
    let invalid: Vec<Vec<u8>> = invalid.into_iter().map(|(d, _)| d.clone()).collect();
    let bytes = |docs: &[Vec<u8>]| docs.iter().map(|d| d.len() as u64).sum::<u64>();

    let mut group = criterion.benchmark_group(format!("breakdown/{}", corpus.name));
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(corpus.total_bytes()));
    group.bench_function("all/lexing_only", |b| {
        b.iter(|| {
            run(
                &|d| black_box(serde_json::from_slice::<IgnoredAny>(d)).is_ok(),
                &corpus.docs,
            )
        })
    });
    group.throughput(Throughput::Bytes(bytes(&valid)));
    group.bench_function("valid/serde_json_value", |b| {
        b.iter(|| run(&serde_json_value, &valid))
    });
    group.bench_function("valid/perago_generated", |b| {
        b.iter(|| run(&generated::<T>, &valid))
    });
    group.throughput(Throughput::Bytes(bytes(&invalid)));
    group.bench_function("invalid/serde_json_value", |b| {
        b.iter(|| run(&serde_json_value, &invalid))
    });
    group.bench_function("invalid/perago_generated", |b| {
        b.iter(|| run(&generated::<T>, &invalid))
    });
    group.bench_function("invalid/value_then_read", |b| {
        b.iter(|| {
            run(
                &|d| {
                    black_box(serde_json::from_slice::<Value>(d).map(|v| T::from_value(&v))).is_ok()
                },
                &invalid,
            )
        })
    });
    group.finish();
}

/// The completion contract's non-blank `pattern`, as `perago::check::Pattern` matches it (a
/// character-class scan, as the class is recognised, not the regex engine) and as a hand-written
/// scan, over every string of the completion corpora that the generated `satisfies` checks.
fn patterns(criterion: &mut Criterion, set: &SchemaSet, corpora: &[Corpus]) {
    fn blank(c: char) -> bool {
        matches!(c, '\t'..='\r' | '\u{1c}'..=' ' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
            | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
    }
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(xs) => xs.iter().for_each(|x| strings(x, out)),
            Value::Object(m) => m
                .iter()
                .filter(|(k, _)| *k != "kind" && *k != "contract")
                .for_each(|(_, x)| strings(x, out)),
            _ => {}
        }
    }
    let completion = &set
        .find("worker-completion.v1")
        .expect("the completion schema")
        .normalised;
    let source = completion["$defs"]["NonBlankText"]["pattern"]
        .as_str()
        .expect("a pattern");
    let pattern = perago::check::Pattern::checked(source);
    for corpus in corpora
        .iter()
        .filter(|c| c.schema == "worker-completion.v1")
    {
        let mut all = Vec::new();
        for (doc, valid) in corpus.docs.iter().zip(corpus.expected_valid()) {
            if valid {
                strings(&serde_json::from_slice(doc).expect("valid"), &mut all);
            }
        }
        assert!(
            all.iter()
                .all(|s| pattern.is_match(s) == s.chars().any(|c| !blank(c)))
        );
        let mut group = criterion.benchmark_group(format!("breakdown/{}/pattern", corpus.name));
        group.throughput(Throughput::Elements(all.len() as u64));
        group.bench_function("pattern_is_match", |b| {
            b.iter(|| {
                all.iter()
                    .filter(|s| pattern.is_match(black_box(s)))
                    .count()
            })
        });
        group.bench_function("hand_scan", |b| {
            b.iter(|| {
                all.iter()
                    .filter(|s| black_box(s).chars().any(|c| !blank(c)))
                    .count()
            })
        });
        group.finish();
    }
}
