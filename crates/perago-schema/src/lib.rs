//! perago's run-time schema core: everything between a schema and a verdict on a document,
//! with no code generation in it, so that a worker never links the generator or its linter.
//!
//! - [`Validator`]: the interpreter for schemas loaded at run time (`perago validate`): JSON
//!   Schema 2020-12 whole, and 2019-09 and draft-07 (but `$dynamicRef` and references that
//!   would need the network),
//!   compiled once (`compile`, into a `program`), each document read once from its bytes into
//!   a reusable tape (`tape`) and checked there (`eval`), `format` included (`format`); it
//!   checks defaults and examples too, and is the reference generated readers must agree with;
//! - [`load`]: schema files and texts parsed strictly into [`load::Documents`], with their
//!   `$id`s, for the interpreter and code generation alike; [`dialect`]: the dialects, their
//!   keywords, and [`dialect::upgrade`] (a draft read as its 2020-12 equivalent);
//! - [`one_of`]: how a `oneOf`'s branches are distinguished ([`one_of::DecisionTree`]:
//!   the tree of tests), the one analysis both the interpreter and generated readers decide by;
//! - [`check`]: the keyword checks that both the interpreter and generated readers call, so
//!   both report the same violations with the same messages; [`kind`]: the JSON types;
//! - `reader`: what generated readers read documents with, in one pass, and `fallback`, the
//!   interpreter for the parts code generation does not type (generated code reaches both
//!   through `__private`);
//! - [`json`]: the strict JSON parser (a repeated key is an error, at its path);
//!   [`input`]: documents read under a size limit;
//! - [`Violation`], [`Violations`] and [`Path`]: what validators report;
//! - [`Contract`]: what every generated type implements.
//!
//! Task authors depend on `perago`, which re-exports what they need from here; code generation
//! (`perago-codegen`) builds on [`load`], [`one_of`] and [`check`].

pub mod check;
mod compile;
mod contract;
pub mod dialect;
pub mod error;
mod eval;
#[doc(hidden)] // generated code's, through `__private`
pub mod fallback;
mod format;
pub mod input;
pub mod json;
pub mod kind;
pub mod load;
pub mod one_of;
mod path;
mod program;
#[doc(hidden)] // generated code's, through `__private`
pub mod reader;
mod tape;
mod validator;
mod violation;

pub use contract::Contract;
pub use dialect::DIALECT;
pub use error::{Error, LintError};
pub use path::{Path, push_key};
pub use validator::{Options, Scratch, Validator};
pub use violation::{Code, Violation, Violations};

/// What generated code refers to, through the crate it names as its runtime (`perago`, which
/// re-exports this module, or this crate itself). Not an API: it changes with the generator.
#[doc(hidden)]
pub mod __private {
    pub use crate::check;
    pub use crate::fallback;
    pub use crate::json;
    pub use crate::one_of;
    pub use crate::path::Path;
    pub use crate::reader;
    pub use crate::violation::Violation;
    pub use indexmap;
    pub use serde;
    pub use serde_json;
}
