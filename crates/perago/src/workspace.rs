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
use globset::GlobBuilder;
use std::fmt;
use std::path::{Path, PathBuf};

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

/// A guardrail that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GuardrailViolation {
    /// The guardrail, e.g. `require_glob('raw/**/*.parquet')`.
    pub guardrail: String,
    /// The files that matched (at most the first 20, sorted).
    pub matched: Vec<String>,
    /// How many files matched.
    pub matched_count: u64,
    /// How many were required.
    pub min_count: u64,
    /// Why the directory could not be read, when it could not.
    pub error: Option<String>,
}

impl GuardrailViolation {
    /// `require_glob('raw/**/*.parquet') matched 0 files; min_count=1`.
    pub fn describe(&self) -> String {
        match &self.error {
            Some(error) => format!("{} could not read the workspace: {error}", self.guardrail),
            None => format!(
                "{} matched {} file{}; min_count={}",
                self.guardrail,
                self.matched_count,
                if self.matched_count == 1 { "" } else { "s" },
                self.min_count
            ),
        }
    }
}

/// Checks `guardrail` against the directory `root`.
pub fn check_guardrail(guardrail: &Guardrail, root: &Path) -> Result<(), GuardrailViolation> {
    match guardrail {
        Guardrail::RequireGlob { pattern, min_count } => {
            let mut violation = GuardrailViolation {
                guardrail: guardrail.to_string(),
                matched: Vec::new(),
                matched_count: 0,
                min_count: *min_count,
                error: None,
            };
            match glob_matches(pattern, root) {
                Ok(files) => {
                    if files.len() as u64 >= *min_count {
                        return Ok(());
                    }
                    violation.matched_count = files.len() as u64;
                    violation.matched = files.into_iter().take(20).collect();
                }
                Err(error) => violation.error = Some(error),
            }
            Err(violation)
        }
    }
}

/// The files under `root` whose `/`-separated relative path matches `pattern`, sorted.
pub fn glob_matches(pattern: &str, root: &Path) -> Result<Vec<String>, String> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())?
        .compile_matcher();
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| e.to_string())?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let relative: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let relative = relative.join("/");
        if glob.is_match(&relative) {
            files.push(relative);
        }
    }
    Ok(files)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn require_glob_counts_files_across_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("raw/2024/01")).unwrap();
        std::fs::write(root.join("raw/a.parquet"), "").unwrap();
        std::fs::write(root.join("raw/2024/01/b.parquet"), "").unwrap();
        std::fs::write(root.join("raw/2024/01/c.csv"), "").unwrap();
        std::fs::create_dir_all(root.join("raw/d.parquet")).unwrap(); // a directory: not counted
        assert_eq!(
            glob_matches("raw/**/*.parquet", root).unwrap(),
            ["raw/2024/01/b.parquet", "raw/a.parquet"]
        );
        // `*` stays within a segment.
        assert_eq!(
            glob_matches("raw/*.parquet", root).unwrap(),
            ["raw/a.parquet"]
        );
        let two = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 2,
        };
        assert!(check_guardrail(&two, root).is_ok());
        let three = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 3,
        };
        let v = check_guardrail(&three, root).unwrap_err();
        assert_eq!(
            v.describe(),
            "require_glob('raw/**/*.parquet') matched 2 files; min_count=3"
        );
    }

    #[test]
    fn a_missing_root_is_reported() {
        let g = Guardrail::RequireGlob {
            pattern: "*",
            min_count: 1,
        };
        let v = check_guardrail(&g, Path::new("/nonexistent/perago/dir")).unwrap_err();
        assert!(v.error.is_some(), "{v:?}");
    }
}
