//! perago: schema-first worker contracts for Conductor. This crate is what a task author
//! imports; `use perago::prelude::*;` brings the names a task file needs.
//!
//! - [`Contract`]: what every type generated from a JSON Schema implements, with the
//!   [`Violation`]s and [`Path`]s its validation reports;
//! - [`contracts`]: the generated types of perago's own contract schemas (the Conductor input and
//!   result envelopes);
//! - [`schemas`]: those schema files, embedded;
//! - [`mod@task`], [`macro@task`] and [`tasks!`]: task descriptors, the attribute that makes a
//!   plain function a task, and the registry of a crate's tasks;
//! - [`runtime`]: from a Conductor `inputData` to the Conductor result payload; [`workspace`]:
//!   what a workspace task works in; [`log`]: the JSON Lines log record of a run.
//!
//! Serving tasks against Conductor (the worker, TaskDefs, a task binary's command line) is
//! `perago-worker`; the `worker-completion/v1` contract is `perago-completion`.

extern crate self as perago;

#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;
pub mod log;
pub mod runtime;
pub mod schemas;
pub mod task;
pub mod workspace;

pub use perago_schema::{
    Code, Contract, Path, Secret, Violation, Violations, check, string_const, types,
};

/// Makes a type schema-backed from Rust (the `schemars` feature): on a type that derives
/// `schemars::JsonSchema`, serde's `Serialize` and `DeserializeOwned`, it implements
/// [`Contract`] with the schema schemars makes of the type, closed by perago's policy (an
/// object admits only the properties it declares). The interpreter validates every document
/// against it (every violation, with its path) before serde reads the value, so the type works
/// as a task's params or result; `schemas --out DIR` of a task binary writes the schema out,
/// to make the file the source of truth.
///
/// ```
/// #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, perago::Contract)]
/// struct Resize {
///     width: u32,
///     height: u32,
/// }
///
/// use perago::Contract;
/// assert!(Resize::from_slice(br#"{"width": 640, "height": 480}"#).is_ok());
/// let refused = Resize::from_slice(br#"{"width": -1, "height": 480, "depth": 3}"#).unwrap_err();
/// assert_eq!(refused.len(), 2); // `$.width` below its minimum, `$.depth` not declared
/// ```
#[cfg(feature = "schemars")]
pub use perago_macros::Contract;
/// Makes a plain handler function a perago task; see [`mod@task`] for signatures and options.
pub use perago_macros::task;
/// The [`task::Registry`] of the named tasks, in order: `perago::tasks![validate_song, build_features]`.
pub use perago_macros::tasks;

/// What a task file needs: `use perago::prelude::*;`.
pub mod prelude {
    pub use crate::task::{Registry, TaskError};
    pub use crate::workspace::Workspace;
    pub use crate::{Contract, task, tasks};
}

#[doc(hidden)]
pub use perago_schema::__private;
