//! Servers for tests on `127.0.0.1`, side by side: a Conductor-compatible one
//! ([`conductor`], its [`TestServer`] re-exported here) and a lakeFS-compatible
//! one ([`lakefs`]); and [`process`]: the built binaries run as child
//! processes, the way end-to-end tests start them.
//!
//! Both servers are blocking to drive, so plain `#[test]`s can use them, with
//! their HTTP side (hyper) on a private tokio runtime; both record every
//! request and inject faults aimed at some requests only, with one shared
//! bookkeeping of faults and one accept loop.

pub mod conductor;
mod faults;
pub mod lakefs;
pub mod process;
mod server;
mod url;

pub use conductor::{
    Options, RecordedRequest, RetryDelays, Route, TaskSpec, TaskState, TaskStatus, TestServer,
};
pub use faults::RawReply;
