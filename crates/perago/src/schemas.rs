//! The contract schemas of the runtime (the Conductor input and result envelopes), embedded
//! from this crate's `schemas/` at build time.

/// A built-in schema: its file name, `$id` and text.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSchema {
    /// The file name under `schemas/`.
    pub file: &'static str,
    /// The text as written.
    pub source: &'static str,
}

macro_rules! builtin {
    ($($file:literal),* $(,)?) => {
        /// Every built-in schema, sorted by file name.
        pub const BUILTIN: &[BuiltinSchema] = &[
            $(BuiltinSchema { file: $file, source: include_str!(concat!("../schemas/", $file)) },)*
        ];
    };
}

builtin![
    "task-failure.schema.json",
    "workspace-free-task-input.schema.json",
    "workspace-free-task-result.schema.json",
    "workspace-input.schema.json",
    "workspace-output.schema.json",
    "workspace-task-input.schema.json",
    "workspace-task-result.schema.json",
];
