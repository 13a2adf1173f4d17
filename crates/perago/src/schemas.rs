//! The contract schemas of the runtime (the Conductor input and result envelopes), as written
//! in the repository's `schemas/envelopes/`: their text is embedded by the generated
//! [`crate::contracts`], so the crate needs no file outside its own directory.

use crate::contracts::SCHEMA_FILES;

/// A built-in schema: its file name, `$id` and text.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSchema {
    /// The file name under `schemas/envelopes/`.
    pub file: &'static str,
    /// The text as written.
    pub source: &'static str,
}

/// Every built-in schema, sorted by file name.
// The generated `SCHEMA_FILES`, one `BuiltinSchema` each, built at compile time.
pub const BUILTIN: &[BuiltinSchema] = &{
    let mut all = [BuiltinSchema {
        file: "",
        source: "",
    }; SCHEMA_FILES.len()];
    let mut i = 0;
    while i < all.len() {
        let (file, source) = SCHEMA_FILES[i];
        all[i] = BuiltinSchema { file, source };
        i += 1;
    }
    all
};
