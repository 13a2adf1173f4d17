//! Publishing what a read-write handler changed, behind two fences.
//!
//! In order: no change is a no-op (the output keeps the input `ref`); the publish budget; the
//! **attempt fence** (this attempt still owns its Conductor task); the changes uploaded to a
//! staging branch made from the input commit, with the **publish fence**'s sentinel; a commit
//! carrying the attempt's metadata; the attempt fence again; the merge into the target branch
//! (when its answer is lost, the branch's history tells whether it landed); the merge commit's
//! first parent checked. The staging branch is deleted at the end, whatever
//! happened. Until the merge, the target branch is untouched: a crash anywhere before it
//! leaves nothing but a staging branch.
//!
//! # The publish fence
//! Two attempts that publish from one input commit (a retry racing a zombie, two workflows on
//! one song) must never both land, and a publication must not land on a branch that moved
//! since its input commit. lakeFS has no compare-and-swap on a branch head, and two merges
//! into one branch both land unless their content conflicts. So every publication rewrites
//! one sentinel object, [`FENCE_PATH`], with content unique to the attempt: any two
//! publications from the same base then change that path differently, and the second merge is
//! a conflict (lakeFS answers 409 and writes nothing), as is a publication from a base the
//! branch has since moved past through another publication. After the merge, the merge
//! commit's first parent must be the input commit: otherwise a writer outside the fence moved
//! the branch, and the publication is reported as failed though it landed. The local store
//! follows the same rules, its heads moved by a compare-and-swap.

use crate::checkout::{Changes, Checkout};
use crate::spec::PublishBudget;
use crate::store::{CommitId, Merge, Metadata, Store, StoreError};

/// The sentinel object every publication rewrites (see the module doc).
pub const FENCE_PATH: &str = ".perago/publish-fence";

/// How many objects are uploaded at once.
pub const PARALLEL_UPLOADS: usize = 8;

/// Who publishes: recorded in the commit's metadata and the sentinel, and naming the staging
/// branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    /// The task type.
    pub task_type: String,
    /// The Conductor task id (unique per attempt).
    pub task_id: String,
    /// The workflow instance id.
    pub workflow_id: String,
    /// The attempt (Conductor's `retryCount`).
    pub attempt: u32,
    /// The worker.
    pub worker_id: String,
}

impl Publisher {
    /// The commit metadata of a publication.
    pub fn metadata(&self) -> Metadata {
        [
            ("perago.task_type", self.task_type.clone()),
            ("perago.task_id", self.task_id.clone()),
            ("perago.workflow_id", self.workflow_id.clone()),
            ("perago.attempt", self.attempt.to_string()),
            ("perago.worker_id", self.worker_id.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// `perago-<task id>-<attempt>`, with every character a lakeFS branch name does not allow
    /// (`^\w[-\w]*$`) replaced by `_`.
    pub fn staging_branch(&self) -> String {
        safe_name(&format!("perago-{}-{}", self.task_id, self.attempt))
    }
}

/// `text` with every character but ASCII letters, digits, `-` and `_` replaced by `_`: a valid
/// lakeFS branch name (when it starts with a letter or digit) and a safe file name.
pub fn safe_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A publication that did not land.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The changes exceed the task's publish budget; nothing was written.
    #[error("publish budget exceeded: {detail}; nothing published")]
    Budget {
        /// `1200 files changed; max_files=1000`.
        detail: String,
    },
    /// The handler left something that is not a regular file; nothing was written.
    #[error("cannot publish {0}: only regular files can be published; nothing published")]
    Unsupported(String),
    /// This attempt no longer owns its task; nothing was merged.
    #[error("attempt fence: {0}; nothing merged")]
    AttemptFence(String),
    /// Another publication from the same base landed first, or the branch moved.
    #[error("publish fence: {0}")]
    PublishFence(String),
    /// The store failed.
    #[error("publication failed: {0}")]
    Store(#[from] StoreError),
}

/// A publication that landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// Nothing changed: the output keeps the input commit.
    NoChange,
    /// The merge commit, the target branch's new head.
    Merged(CommitId),
}

/// One publication.
#[derive(Debug)]
pub struct Publication<'a> {
    /// The store.
    pub store: &'a dyn Store,
    /// The checkout the handler worked in.
    pub checkout: &'a Checkout,
    /// What it changed.
    pub changes: &'a Changes,
    /// The branch to publish into.
    pub branch: &'a str,
    /// Who publishes.
    pub publisher: &'a Publisher,
    /// The task's publish budget.
    pub budget: Option<PublishBudget>,
}

impl Publication<'_> {
    /// Publishes; `fence` says whether this attempt still owns its task (`Err(why)` if not).
    pub fn run(&self, fence: &dyn Fn() -> Result<(), String>) -> Result<Published, PublishError> {
        if self.changes.is_empty() {
            return Ok(Published::NoChange);
        }
        if let Some(path) = self.changes.unsupported.first() {
            return Err(PublishError::Unsupported(path.clone()));
        }
        self.check_budget()?;
        fence().map_err(PublishError::AttemptFence)?;
        let store = self.store;
        let repository = self.checkout.repository();
        let base = &self.checkout.commit().id;
        let staging = self.publisher.staging_branch();
        match store.create_branch(repository, &staging, base) {
            Err(StoreError::AlreadyExists(_)) => {
                // Left by an earlier run of this very attempt that crashed: it is ours.
                store.delete_branch(repository, &staging)?;
                store.create_branch(repository, &staging, base)?;
            }
            other => other?,
        }
        let published = self.publish_through(&staging, base, fence);
        // The staging branch goes whatever happened; its commits stay in the repository.
        let cleaned = store.delete_branch(repository, &staging);
        let published = published?;
        cleaned?;
        Ok(published)
    }

    fn check_budget(&self) -> Result<(), PublishError> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let (files, bytes) = (self.changes.files(), self.changes.bytes());
        if let Some(max) = budget.max_files.filter(|max| files > *max) {
            return Err(PublishError::Budget {
                detail: format!("{files} files changed; max_files={max}"),
            });
        }
        if let Some(max) = budget.max_bytes.filter(|max| bytes > *max) {
            return Err(PublishError::Budget {
                detail: format!("{bytes} bytes to upload; max_bytes={max}"),
            });
        }
        Ok(())
    }

    fn publish_through(
        &self,
        staging: &str,
        base: &CommitId,
        fence: &dyn Fn() -> Result<(), String>,
    ) -> Result<Published, PublishError> {
        let store = self.store;
        let repository = self.checkout.repository();
        self.upload_all(staging)?;
        for path in &self.changes.removed {
            store.delete_object(repository, staging, &self.checkout.object_path(path))?;
        }
        self.write_sentinel(staging, base)?;
        let metadata = self.publisher.metadata();
        let message = format!(
            "{} {} (attempt {})",
            self.publisher.task_type, self.publisher.task_id, self.publisher.attempt
        );
        let Some(staged) = store.commit(repository, staging, &message, &metadata)? else {
            // The sentinel alone changes the tree; no change means the store lost the writes.
            return Err(PublishError::Store(StoreError::Unavailable(format!(
                "the commit of staging branch {staging} found no changes after the upload"
            ))));
        };
        fence().map_err(PublishError::AttemptFence)?;
        let merge = match store.merge(repository, staging, self.branch, &message, &metadata) {
            Err(StoreError::Unavailable(why)) => {
                // The answer was lost; the merge may have landed. The branch's history says.
                match self.find_merge_of(&staged.id)? {
                    Some(id) => Merge::Merged(id),
                    None => return Err(StoreError::Unavailable(why).into()),
                }
            }
            other => other?,
        };
        let merged = match merge {
            Merge::Merged(id) => id,
            Merge::Conflict => {
                return Err(PublishError::PublishFence(format!(
                    "branch {} has moved since input commit {} (another publication landed \
                     first); nothing merged",
                    self.branch,
                    base.short()
                )));
            }
            Merge::NoChanges => {
                return Err(PublishError::Store(StoreError::Unavailable(format!(
                    "merging staging branch {staging} into {} found no changes",
                    self.branch
                ))));
            }
        };
        let commit = store.get_commit(repository, merged.as_str())?;
        match commit.parents.first() {
            Some(parent) if parent == base => Ok(Published::Merged(merged)),
            parent => Err(PublishError::PublishFence(format!(
                "branch {} moved from input commit {} to {} outside the fence before the merge; \
                 merge commit {} landed on it",
                self.branch,
                base.short(),
                parent.map(CommitId::short).unwrap_or("(none)"),
                merged
            ))),
        }
    }

    /// The merge commit of `staged` on the target branch, among its latest commits.
    fn find_merge_of(&self, staged: &CommitId) -> Result<Option<CommitId>, StoreError> {
        const LOOK_BACK: usize = 100;
        let log = self
            .store
            .log(self.checkout.repository(), self.branch, LOOK_BACK)?;
        Ok(log
            .into_iter()
            .find(|c| c.parents.get(1) == Some(staged))
            .map(|c| c.id))
    }

    /// The sentinel: unique to this attempt, so two publications from one base conflict.
    fn write_sentinel(&self, staging: &str, base: &CommitId) -> Result<(), StoreError> {
        let p = self.publisher;
        let content = serde_json::json!({
            "base": base,
            "task_type": p.task_type,
            "task_id": p.task_id,
            "workflow_id": p.workflow_id,
            "attempt": p.attempt,
            "worker_id": p.worker_id,
            // Two runs of one attempt (a zombie of the same task) must differ too.
            "nonce": nonce(),
        });
        let file = self.checkout.dir().with_extension("publish-fence");
        std::fs::write(&file, content.to_string())
            .map_err(|e| StoreError::io(format!("cannot write {}", file.display()), e))?;
        let uploaded = self
            .store
            .upload(self.checkout.repository(), staging, FENCE_PATH, &file);
        let _ = std::fs::remove_file(&file);
        uploaded.map(drop)
    }

    /// Uploads the files added or changed, in parallel.
    fn upload_all(&self, staging: &str) -> Result<(), StoreError> {
        let files: Vec<(String, std::path::PathBuf)> = self
            .changes
            .added
            .iter()
            .chain(&self.changes.changed)
            .map(|(path, _)| {
                (
                    self.checkout.object_path(path),
                    self.checkout.dir().join(path),
                )
            })
            .collect();
        self.store.upload_all(
            self.checkout.repository(),
            staging,
            &files,
            PARALLEL_UPLOADS,
            &|_| {},
        )
    }
}

/// A value no other publication has: process, time and a counter.
fn nonce() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{nanos}-{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_branch_names_are_valid_lakefs_branch_ids() {
        let p = Publisher {
            task_type: "t".into(),
            task_id: "7f3c/a.b c".into(),
            workflow_id: "w".into(),
            attempt: 2,
            worker_id: "host".into(),
        };
        assert_eq!(p.staging_branch(), "perago-7f3c_a_b_c-2");
        assert_eq!(p.metadata()["perago.attempt"], "2");
    }
}
