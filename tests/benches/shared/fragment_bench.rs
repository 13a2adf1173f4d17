//! A fragment type read four ways, side by side: `serde_json_value` (the floor), `jsonschema`
//! (the crate, on the type's `Contract::schema`, every error collected), `perago_interpreter`
//! (`Validator` at the type's location, a reused `Scratch`) and `perago_generated`
//! (`T::from_slice`), one document's bytes at a time.
//!
//! Documents: valid ones and single mutations from `perago_tests::mutate::Generator` (seed 7),
//! 2,000 in all; every contender must give the interpreter's verdicts.

use criterion::{Criterion, SamplingMode, Throughput};
use perago::Contract;
use perago_codegen::SchemaSet;
use perago_schema::Scratch;
use perago_tests::mutate::Generator;
use perago_tests::schemas::node_at;
use serde_json::Value;
use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;

type Contender<'a> = Box<dyn Fn(&[u8]) -> bool + 'a>;

/// Benchmarks type `T` of fragment `fragment` (a directory under
/// `crates/perago-codegen/tests/fragments/`) as criterion group `group`.
pub fn bench<T: Contract>(criterion: &mut Criterion, fragment: &str, group: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/perago-codegen/tests/fragments")
        .join(fragment);
    let set = SchemaSet::load_dir(&dir).expect("the fragment loads");
    let interpreter = set
        .validator()
        .expect("the interpreter takes it")
        .at(T::LOCATION)
        .expect("compiled at the type's location");
    let root = node_at(&set, T::LOCATION);
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
        "{group}: {} documents ({invalid} invalid), {bytes} bytes, against `{}`",
        docs.len(),
        T::LOCATION
    );

    let standalone: Value = serde_json::from_str(T::schema()).expect("SCHEMA is JSON");
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
            Box::new(|d| black_box(T::from_slice(d)).is_ok()),
        ),
    ];
    for (name, contender) in &contenders[1..] {
        let accepted = docs.iter().filter(|d| contender(d)).count();
        assert_eq!(
            accepted,
            docs.len() - invalid,
            "{group}: {name} gives other verdicts"
        );
    }

    let mut group = criterion.benchmark_group(group);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sampling_mode(SamplingMode::Flat);
    for (name, contender) in &contenders {
        group.bench_function(*name, |b| {
            b.iter(|| docs.iter().filter(|d| contender(d)).count())
        });
    }
    group.finish();
}
