//! perago on Conductor: everything that talks to a Conductor server, and a task binary's
//! command line.
//!
//! - [`Client`] ([`client`]): the blocking REST client, with [`tasks`] (batch poll, result
//!   updates) and [`metadata`] (TaskDefs, the schema registry);
//! - [`worker`]: serves a registry's tasks against a server, polling, running them through
//!   `perago::runtime` and reporting their results;
//! - [`taskdef`]: Conductor TaskDefs assembled from task descriptors, checked against
//!   Conductor's rules, diffed against a server and published;
//! - [`cli`]: the command line of a task crate's binary (`run`, `tasks`, `taskdefs`,
//!   `publish`, `worker`):
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     perago_conductor::cli::main(perago::tasks![validate_song, build_features])
//! }
//! ```
//!
//! A crate that only needs the contracts or the runtime depends on `perago` alone, which
//! compiles no HTTP client, command-line parser or signal handling.

pub mod cli;
pub mod client;
pub mod metadata;
pub mod taskdef;
pub mod tasks;
pub mod worker;

pub use client::*;
