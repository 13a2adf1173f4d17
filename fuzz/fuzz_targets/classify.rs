//! The completion classifier on arbitrary input: it must never panic, a violation always
//! names at least one path, and an accepted payload's canonical form re-validates to it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago_completion::{Outcome, classify_payload, classify_text, validate_slice};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(&classify_text(text));
    }
    check(&validate_slice(data).into());
});

fn check(outcome: &Outcome) {
    if let Outcome::Violation(violations) = outcome {
        assert!(!violations.is_empty());
    }
    if let Some(canonical) = outcome.canonical() {
        assert_eq!(&classify_payload(&canonical), outcome);
    }
}
