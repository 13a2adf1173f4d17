//! The interpreter (`perago_schema::Validator`, what `perago validate` runs) on arbitrary
//! bytes, against every root and `$defs` entry of the contract schemas (perago's and the
//! example crate's), of the kitchen-sink schema, and of the schemas written as users write
//! them (`tests/user-schemas/`). It must never panic; bytes and the strictly parsed value give
//! the same violations; the strict parser, when it accepts, parses to the same value as the
//! lenient one; and every violation names a place in the document (see
//! `perago_fuzz::check_violations`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago_fuzz::{CONTRACTS, KITCHEN, USER, check_violations, entry_points, parse};
use perago_schema::{Scratch, Validator};
use std::cell::RefCell;
use std::sync::LazyLock;

static TARGETS: LazyLock<Vec<(String, Validator)>> = LazyLock::new(|| {
    [&*CONTRACTS, &*KITCHEN, &*USER]
        .into_iter()
        .flat_map(|set| {
            let interpreter = set
                .validator()
                .unwrap_or_else(|e| panic!("the interpreter refuses a set: {e}"));
            entry_points(set)
                .into_iter()
                .map(move |(label, id)| {
                    let at = interpreter
                        .at(&set.ir.node(id).location)
                        .unwrap_or_else(|| panic!("{label}: not compiled"));
                    (label, at)
                })
                .collect::<Vec<_>>()
        })
        .collect()
});

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

fuzz_target!(|data: &[u8]| {
    let value = parse(data);
    for (label, validator) in TARGETS.iter() {
        let from_bytes = SCRATCH.with(|s| validator.validate_slice_with(&mut s.borrow_mut(), data));
        if let Some(value) = &value {
            let from_value = validator.validate_value(value);
            assert_eq!(
                from_bytes, from_value,
                "{label}: validate_slice and validate_value differ"
            );
        }
        check_violations(value.as_ref(), &from_bytes);
    }
});
