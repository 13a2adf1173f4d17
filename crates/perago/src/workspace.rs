//! The workspace a workspace task works in: the validated `WorkspaceInput`, the directory
//! holding the task's prefix of the input `ref` (materialised fresh for each attempt, see
//! [`crate::runtime`]), and the access mode. For a read-write task, the runtime publishes what
//! the handler wrote there: the publication's commit then replaces `ref` in
//! [`Workspace::output`]. A read-only or no-op completion keeps the input `ref`.

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
    /// The commit a publication produced.
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

    /// Records the commit a publication produced.
    pub(crate) fn set_published(&mut self, commit: String) {
        self.published = Some(commit);
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
