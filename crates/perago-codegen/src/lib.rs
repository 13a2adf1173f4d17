//! perago's generator: the IR of a [`SchemaSet`] → Rust types and their one validator,
//! formatted with prettyplease, each file headed with the command that regenerates it.
//!
//! [`generate`] (and [`Codegen`], its settings) turns a directory of schemas into a directory
//! of modules, or checks that the checked-in ones are fresh: what a task crate's own `xtask`
//! or test calls, and (as [`Codegen`], for its `--runtime`) what `perago codegen` runs. Schema files are read, linted and normalised
//! by `perago-schema`; nothing at run time depends on this crate.

pub mod emit;
mod generate;

pub use generate::{
    Change, ChangeKind, Codegen, Error, Judged, Mode, ensure_file, generate, stale,
};
pub use perago_schema::SchemaSet;
