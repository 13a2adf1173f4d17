//! perago's tasks on Conductor, over the [`perago_conductor`] client:
//!
//! - [`worker`]: serves a registry's tasks against a server, polling, running them through
//!   `perago::runtime` and reporting their results;
//! - [`taskdef`]: Conductor TaskDefs assembled from task descriptors, checked against
//!   Conductor's rules, diffed against a server and published;
//! - [`cli`]: the command line of a task crate's binary (`run`, `tasks`, `taskdefs`,
//!   `publish`, `worker`):
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     perago_worker::cli::main(perago::tasks![validate_song, build_features])
//! }
//! ```
//!
//! A crate that only needs the contracts or the runtime depends on `perago` alone, which
//! compiles no HTTP client, command-line parser or signal handling; one that only talks to
//! Conductor (the completion gateway) depends on `perago-conductor` alone.

pub mod cli;
pub mod taskdef;
pub mod worker;
pub mod workflow;
