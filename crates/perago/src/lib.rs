//! perago: schema-first worker contracts for Conductor.
//!
//! - the validation runtime generated code calls: [`Violation`], [`Violations`], [`Path`],
//!   the [`Contract`] trait;
//! - [`contracts`]: the generated types and validators of the runtime contract schemas;
//! - [`completion`]: the `worker-completion/v1` contract: classification, strict validation,
//!   records and follow-ups;
//! - [`schemas`]: the schema files themselves, embedded;
//! - [`mod@task`], [`macro@task`] and [`tasks!`]: task descriptors, the attribute that makes a plain
//!   function a task, and the registry of a crate's tasks;
//! - [`workspace`]: what a workspace task works in; [`runtime`]: from Conductor `inputData` to
//!   the Conductor result payload; [`log`]: the JSON Lines log; [`cli`]: a task crate's binary;
//!   [`conductor`]: the blocking Conductor API client (metadata; the worker's task calls);
//!   [`worker`]: serves a registry's tasks against a Conductor server;
//!   [`taskdef`]: Conductor TaskDefs from task descriptors, and publishing them.

extern crate self as perago;

pub mod cli;
pub mod completion;
pub mod conductor;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;
pub mod log;
pub mod runtime;
pub mod schemas;
pub mod task;
pub mod taskdef;
pub mod worker;
pub mod workspace;

pub use perago_ir::{Code, Contract, Path, Violation, Violations, check, string_const};

/// Makes a plain handler function a perago task; see [`mod@task`] for signatures and options.
pub use perago_macros::task;
/// The [`task::Registry`] of the named tasks, in order: `perago::tasks![validate_song, build_features]`.
pub use perago_macros::tasks;

#[doc(hidden)]
pub mod __private {
    pub use perago_ir::__private::*;
    pub use perago_ir::check;
    pub use perago_ir::de;
    pub use perago_ir::json;
    pub use perago_ir::path::Path;
    pub use perago_ir::stream;
    pub use perago_ir::violation::Violation;
}
