//! What a `oneOf` discriminated by tests of its members costs a generated reader (the members a
//! test reads are kept as text, the tests walked once the object is read, those members read
//! again with the branch's checks): the `one_of_by_tests` fragment's `Reading` (the types of
//! two members) and `Event` (a tag, then a member's type), beside the `Value` parse, the
//! jsonschema crate and the interpreter (see `shared/fragment_bench.rs`).
//!
//! Run with `cargo bench -p perago-tests --bench decided`; results are in BENCHMARKS.md.

#[path = "shared/fragment_bench.rs"]
mod fragment_bench;

use criterion::Criterion;
use perago_tests::fragments::one_of_by_tests::{event::Event, reading::Reading};
use std::time::Duration;

fn main() {
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    fragment_bench::bench::<Reading>(&mut criterion, "one_of_by_tests", "decided/reading");
    fragment_bench::bench::<Event>(&mut criterion, "one_of_by_tests", "decided/event");
    criterion.final_summary();
}
