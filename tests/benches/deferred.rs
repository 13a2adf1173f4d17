//! What deferring a part to the interpreter costs a generated reader: the `deferred` fragment's
//! `Checks` (an object with `if`/`then` at its root, `not`, `contains` and `dependentSchemas`
//! below it), whose generated `Contract::read` keeps each deferred part's text, has the
//! interpreter check it, then reads the typed value; beside the `Value` parse, the jsonschema
//! crate and the interpreter (see `shared/fragment_bench.rs`).
//!
//! Run with `cargo bench -p perago-tests --bench deferred`; results are in BENCHMARKS.md.

#[path = "shared/fragment_bench.rs"]
mod fragment_bench;

use criterion::Criterion;
use perago_tests::fragments::deferred::checks::Checks;
use std::time::Duration;

fn main() {
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    fragment_bench::bench::<Checks>(&mut criterion, "deferred", "deferred");
    criterion.final_summary();
}
