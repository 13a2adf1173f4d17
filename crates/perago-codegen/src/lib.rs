//! perago's generator: the IR of a [`SchemaSet`] → Rust types and their validators, formatted
//! with prettyplease, each file headed with the command that regenerates it.
//!
//! Schema files are read, linted and normalised by `perago-schema`; nothing at run time
//! depends on this crate.

pub mod emit;

pub use perago_schema::SchemaSet;
