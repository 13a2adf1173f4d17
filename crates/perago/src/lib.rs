//! perago: schema-first worker contracts for Conductor.
//!
//! - the validation runtime generated code calls: [`Violation`], [`Violations`], [`Path`],
//!   the [`Contract`] trait;
//! - [`contracts`]: the generated types and validators of the runtime contract schemas;
//! - [`completion`]: the `worker-completion/v1` contract: classification, strict validation,
//!   records and follow-ups;
//! - [`schemas`]: the schema files themselves, embedded.

extern crate self as perago;

pub mod completion;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;
pub mod schemas;

pub use perago_ir::{Code, Contract, Path, Violation, Violations, check, string_const};

#[doc(hidden)]
pub mod __private {
    pub use perago_ir::__private::*;
    pub use perago_ir::check;
    pub use perago_ir::de;
    pub use perago_ir::path::Path;
    pub use perago_ir::violation::Violation;
}
