//! What a workspace task declares about its workspace, in its `#[perago::task(workspace(...))]`
//! attribute. Worker-side only: never part of the input/output contract or the TaskDef.

use std::fmt;

/// What a workspace task declares about its workspace. Worker-side only: never part of the
/// input/output contract or the TaskDef.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceSpec {
    /// The part of the repository the task works on (`""`: all of it). The local workspace
    /// directory holds this prefix: handler paths and guardrail globs are relative to it.
    pub prefix: &'static str,
    /// Read-only (`&Workspace`) or read-write (`&mut Workspace`).
    pub access: Access,
    /// Checked before the handler runs; a failure is `FAILED_WITH_TERMINAL_ERROR`.
    pub pre: &'static [Guardrail],
    /// Checked after the result is valid; a failure is `FAILED`.
    pub post: &'static [Guardrail],
    /// Limits of one publication (read-write tasks; enforced by the storage layer).
    pub publish_budget: Option<PublishBudget>,
}

/// A workspace task's access mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The task only reads; its completion keeps the input `ref`.
    ReadOnly,
    /// The task may write; a publication replaces `ref` with the published commit.
    ReadWrite,
}

impl Access {
    /// `read_only` or `read_write`, as written in the attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::ReadWrite => "read_write",
        }
    }
}

/// A check of the local workspace directory, before or after the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guardrail {
    /// At least `min_count` files match `pattern`, a glob relative to the workspace root
    /// (`*` stays within one path segment, `**` crosses them).
    RequireGlob {
        /// The glob.
        pattern: &'static str,
        /// How many files must match (≥ 1).
        min_count: u64,
    },
}

/// `require_glob('raw/**/*.parquet')`: how reasons name a guardrail.
impl fmt::Display for Guardrail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Guardrail::RequireGlob { pattern, .. } => write!(f, "require_glob('{pattern}')"),
        }
    }
}

/// The most one publication of a read-write task may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishBudget {
    /// Files added, changed or removed.
    pub max_files: Option<u64>,
    /// Bytes uploaded.
    pub max_bytes: Option<u64>,
}
