//! The Conductor-compatible server over HTTP, one module per area: the metadata API
//! (`docs/src/reference/conductor.md` §1, §3), the schema registry (§2.5), the task worker API (§4), the decider's retries
//! (§4.3) and fault injection. Beside it, `tests/lakefs.rs` does the same for the lakeFS one.

mod faults;
mod metadata;
mod retries;
mod schema;
mod support;
mod tasks;
