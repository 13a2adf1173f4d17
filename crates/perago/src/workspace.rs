//! The workspace a workspace task works in: the validated `WorkspaceInput`, the local directory
//! holding the task's prefix of the input `ref`, and the access mode.
//!
//! Today the local directory is given (`--workspace-dir`, or
//! [`ExecutionContext::workspace_root`](crate::runtime::ExecutionContext::workspace_root)). The
//! storage layer will download `repository@ref` (the task's prefix of it) into a fresh directory
//! per attempt and, for a read-write task, publish what the handler wrote: the publication's
//! commit then replaces `ref` in [`Workspace::output`]. A read-only or no-op completion keeps the
//! input `ref`.

use crate::contracts::workspace_input::WorkspaceInput;
use crate::contracts::workspace_output::{WorkspaceOutput, WorkspaceOutputRefType};
use std::path::{Path, PathBuf};

pub use perago_workspace::guardrail::{GuardrailViolation, check_guardrail, glob_matches};
pub use perago_workspace::{Access, Guardrail, PublishBudget, WorkspaceSpec};

/// A workspace task's view of its workspace.
#[derive(Debug, Clone)]
pub struct Workspace {
    input: WorkspaceInput,
    root: PathBuf,
    access: Access,
    /// The commit a publication produced (set by the storage layer; none yet).
    published: Option<String>,
}

impl Workspace {
    /// A workspace over the local directory `root`.
    pub fn new(input: WorkspaceInput, root: impl Into<PathBuf>, access: Access) -> Workspace {
        Workspace {
            input,
            root: root.into(),
            access,
            published: None,
        }
    }

    /// The validated `workspace` of the task input.
    pub fn input(&self) -> &WorkspaceInput {
        &self.input
    }

    /// The LakeFS repository.
    pub fn repository(&self) -> &str {
        &self.input.repository
    }

    /// The target branch.
    pub fn branch(&self) -> &str {
        &self.input.branch
    }

    /// The immutable input commit of this attempt.
    pub fn input_ref(&self) -> &str {
        &self.input.r#ref
    }

    /// The local directory: the task's prefix of the input `ref`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `relative` under the workspace root.
    pub fn path(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.root.join(relative)
    }

    /// Read-only or read-write.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The `workspace` of a completed output: the input's repository and branch, and the
    /// published commit or, for a read-only or no-op completion, the input `ref`.
    pub fn output(&self) -> WorkspaceOutput {
        WorkspaceOutput {
            repository: self.input.repository.clone(),
            branch: self.input.branch.clone(),
            ref_type: WorkspaceOutputRefType,
            r#ref: self
                .published
                .clone()
                .unwrap_or_else(|| self.input.r#ref.clone()),
        }
    }
}
