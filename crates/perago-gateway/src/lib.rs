//! The completion gateway: `worker-completion/v1` at an HTTP boundary, for agents working
//! Conductor tasks.
//!
//! The gateway is a Conductor worker for agent task types that hands each task to an agent over
//! HTTP. An agent claims a task (`POST /v1/claims`: a Conductor poll made for it, taking one of
//! the type's slots), works, heartbeats (`POST /v1/tasks/{id}/heartbeat`: the Conductor lease
//! is extended), and submits a completion or a typed refusal (`POST /v1/tasks/{id}/complete`),
//! which the gateway classifies with [`perago_completion`] and answers exactly as the
//! contract's completion API table says (200 / 422 / 409 / 404).
//!
//! - [`ledger`]: the embedded SQLite database (WAL) that is the gateway's source of truth:
//!   tasks, the ledger, follow-ups, the hash-chained audit trail ([`ledger::audit`]) and the
//!   outbox of Conductor updates ([`ledger::outbox`]). Every transition is one transaction
//!   ([`writer`], which commits several at once when they arrive together).
//! - [`transition`]: what a submission does to a task and what Conductor is told, decided
//!   once from the contract's [`Outcome`](perago_completion::Outcome).
//! - [`delivery`]: the outbox's delivery thread: each update reaches Conductor after its
//!   commit, survives a crash of the gateway, and waits while Conductor is down.
//! - [`api`]: the HTTP routes, authentication and the JSON errors; [`server`]: the listener
//!   (header and body timeouts), the lease sweeper, start and shutdown ([`Gateway`]).
//! - [`metrics`]: with `--metrics-listen`, the gateway's Prometheus metrics and its liveness
//!   and readiness probes, served from its runtime ([`perago_metrics`] answers).
//! - [`agent_task`]: the agent task's descriptor, so its TaskDef (`outputSchema`: a completion,
//!   a refusal routable by `kind`, follow-ups) is generated like any other task's.

pub mod agent_task;
pub mod api;
pub mod auth;
pub mod config;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;
pub mod delivery;
pub mod ledger;
pub mod log;
pub mod metrics;
pub mod server;
mod slots;
pub mod transition;
pub mod writer;

pub use auth::BearerToken;
pub use config::{GatewayConfig, TaskTypeSlots};
pub use server::{Gateway, GatewayError};
