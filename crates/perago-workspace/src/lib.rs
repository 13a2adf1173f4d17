//! perago workspaces. A workspace task works on one immutable commit of a repository: the
//! worker materialises the task's prefix of that commit into a fresh directory, checks the
//! pre guardrails, runs the handler, checks the post guardrails and, for a read-write task,
//! publishes what the handler changed behind two fences, so that the completed output's `ref`
//! is the published commit.
//!
//! - [`store`]: the model both backends share ([`Store`]), lakeFS's;
//! - [`local`]: the embedded local store, the default where no lakeFS is configured;
//! - `lakefs` (feature `lakefs`): the lakeFS REST client;
//! - [`spec`] and [`guardrail`]: what a task declares, and the checks of its directory;
//! - [`checkout`]: materialising a prefix and telling what the handler changed;
//! - [`md5_lanes`]: the MD5s of many files, sixteen side by side (the lakeFS client's checks);
//! - [`publish`]: the fenced publication of those changes;
//! - [`transfer`]: whole trees in and out (`perago workspace import` / `export`).

pub mod checkout;
pub mod guardrail;
#[cfg(feature = "lakefs")]
pub mod lakefs;
pub mod local;
pub mod md5_lanes;
mod parallel;
pub mod publish;
pub mod spec;
pub mod store;
pub mod transfer;

pub use spec::{Access, Guardrail, PublishBudget, WorkspaceSpec};
pub use store::{
    Checksum, Commit, CommitId, Merge, Metadata, NoProgress, ObjectInfo, Progress, Store,
    StoreError,
};
