//! The run-time interpreter (`Ir::validate`, `Ir::validate_slice`) on arbitrary bytes, against
//! every root and `$defs` entry of the contract schemas (perago's and the example crate's) and
//! of the kitchen-sink schema. It must never panic; bytes and the strictly parsed value give
//! the same violations; the strict parser, when it accepts, parses to the same value as the
//! lenient one; and every violation names a place in the document (see
//! `perago_fuzz::check_violations`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago_fuzz::{CONTRACTS, KITCHEN, check_violations, entry_points, parse};
use perago_schema::{NodeId, SchemaSet};
use std::sync::LazyLock;

static TARGETS: LazyLock<Vec<(&'static SchemaSet, String, NodeId)>> = LazyLock::new(|| {
    [&*CONTRACTS, &*KITCHEN]
        .into_iter()
        .flat_map(|set| {
            entry_points(set)
                .into_iter()
                .map(move |(label, id)| (set, label, id))
        })
        .collect()
});

fuzz_target!(|data: &[u8]| {
    let value = parse(data);
    for (set, label, id) in TARGETS.iter() {
        let from_bytes = set.ir.validate_slice(*id, data);
        if let Some(value) = &value {
            let from_value = set.ir.validate(*id, value);
            assert_eq!(
                from_bytes, from_value,
                "{label}: validate_slice and validate differ"
            );
        }
        check_violations(value.as_ref(), &from_bytes);
    }
});
