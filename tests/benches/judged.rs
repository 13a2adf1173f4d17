//! What holding a part for the interpreter costs a generated reader: the `judged` fragment's
//! `Checks` (an object with `if`/`then` at its root, `not`, `contains` and `dependentSchemas`
//! below it), whose generated `Contract::read` keeps each judged part's text, has the
//! interpreter judge it, then reads the typed value.
//!
//! Documents: valid ones and single mutations from `perago_tests::mutate::Generator` (seed 7),
//! 2,000 in all. Contenders, one document's bytes at a time: `serde_json_value` (the floor),
//! `jsonschema` (the crate, on `Checks::SCHEMA`, every error collected), `perago_interpreter`
//! (`Validator` at the type's location, a reused `Scratch`), `perago_generated`
//! (`Checks::from_slice`).
//!
//! Run with `cargo bench -p perago-tests --bench judged`; results are in BENCHMARKS.md.

use criterion::{Criterion, SamplingMode, Throughput};
use perago::Contract;
use perago_schema::{SchemaSet, Scratch};
use perago_tests::fragments::judged::checks::Checks;
use perago_tests::mutate::Generator;
use perago_tests::schemas::node_at;
use serde_json::Value;
use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

type Contender<'a> = Box<dyn Fn(&[u8]) -> bool + 'a>;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/perago-codegen/tests/fragments/judged");
    let set = SchemaSet::load_dir(&dir).expect("the judged fragment loads");
    let interpreter = set
        .validator()
        .expect("the interpreter takes it")
        .at(Checks::LOCATION)
        .expect("compiled at the type's location");
    let root = node_at(&set, Checks::LOCATION);
    let mut generator = Generator::new(&set, 7);
    let mut docs: Vec<Vec<u8>> = Vec::new();
    while docs.len() < 2000 {
        let valid = generator.valid(root);
        docs.push(serde_json::to_vec(&valid).expect("serialisable"));
        for m in generator.mutations(root, &valid).iter().take(3) {
            let mut v = valid.clone();
            if m.op.apply(&mut v) {
                docs.push(serde_json::to_vec(&v).expect("serialisable"));
            }
        }
    }
    let invalid = docs
        .iter()
        .filter(|d| !interpreter.validate_slice(d).is_empty())
        .count();
    let bytes: usize = docs.iter().map(Vec::len).sum();
    println!(
        "{} documents ({invalid} invalid), {bytes} bytes, against `Checks`",
        docs.len()
    );

    let standalone: Value = serde_json::from_str(Checks::SCHEMA).expect("SCHEMA is JSON");
    let jsonschema = jsonschema::options()
        .should_validate_formats(true)
        .build(&standalone)
        .expect("jsonschema compiles SCHEMA");
    let scratch = RefCell::new(Scratch::default());
    let contenders: Vec<(&str, Contender<'_>)> = vec![
        (
            "serde_json_value",
            Box::new(|d| black_box(serde_json::from_slice::<Value>(d)).is_ok()),
        ),
        (
            "jsonschema",
            Box::new(|d| match serde_json::from_slice::<Value>(d) {
                Ok(v) => black_box(jsonschema.iter_errors(&v).collect::<Vec<_>>()).is_empty(),
                Err(_) => false,
            }),
        ),
        (
            "perago_interpreter",
            Box::new(|d| {
                black_box(interpreter.validate_slice_with(&mut scratch.borrow_mut(), d)).is_empty()
            }),
        ),
        (
            "perago_generated",
            Box::new(|d| black_box(Checks::from_slice(d)).is_ok()),
        ),
    ];
    for (name, contender) in &contenders[1..] {
        let accepted = docs.iter().filter(|d| contender(d)).count();
        assert_eq!(
            accepted,
            docs.len() - invalid,
            "{name} gives other verdicts"
        );
    }

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = criterion.benchmark_group("judged");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sampling_mode(SamplingMode::Flat);
    for (name, contender) in &contenders {
        group.bench_function(*name, |b| {
            b.iter(|| docs.iter().filter(|d| contender(d)).count())
        });
    }
    group.finish();
    criterion.final_summary();
}
