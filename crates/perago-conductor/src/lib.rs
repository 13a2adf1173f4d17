//! The Conductor REST client: [`Client`] ([`client`]), blocking, with its retries
//! ([`Retry`], [`Backoff`]), and the API areas as its methods and functions: [`tasks`] (batch
//! poll, result updates, [`TaskResult`](tasks::TaskResult)) and [`metadata`] (TaskDefs, the
//! schema registry).
//!
//! It knows Conductor's endpoints and nothing of perago's tasks, so the completion gateway
//! compiles it without a command-line parser, signal handling or a lakeFS client. The worker,
//! TaskDefs and a task binary's command line are `perago-worker`, over this client.

pub mod client;
pub mod metadata;
pub mod tasks;

pub use client::*;
