//! The data model (`docs/src/reference/lakefs.md` §4): repositories, commits with whole-tree snapshots,
//! branches with a staging area, tags, and object bodies shared by content.
//! Everything lives behind one lock in [`Shared`]; object bodies are
//! `Bytes`, so answers clone a reference under the lock and send the bytes
//! after releasing it.

use super::ident::{self, CommitFields, Encoder};
use super::{LakeFsError, LakeFsHandle, LakeFsRequest, Target};
use crate::faults::Faults;
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// An object body, shared by every entry with the same content.
#[derive(Debug)]
pub(crate) struct Blob {
    pub(crate) data: Bytes,
}

/// A stored object value (§4.2).
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) physical_address: String,
    pub(crate) size: u64,
    /// Hex MD5 of the content.
    pub(crate) checksum: String,
    /// Unix seconds.
    pub(crate) mtime: i64,
    pub(crate) content_type: String,
    pub(crate) metadata: BTreeMap<String, String>,
    /// [`ident::entry_identity`]: equal identities are "the same" value.
    pub(crate) identity: [u8; 32],
    pub(crate) blob: Arc<Blob>,
}

/// A committed tree: path → value, in byte order.
pub(crate) type Tree = BTreeMap<String, Arc<Entry>>;

/// A branch's staging area: path → value, or `None` for a tombstone.
pub(crate) type Staging = BTreeMap<String, Option<Arc<Entry>>>;

/// Whether two optional values are the same (equal identities, or both absent).
pub(crate) fn same(a: Option<&Arc<Entry>>, b: Option<&Arc<Entry>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.identity == b.identity,
        _ => false,
    }
}

/// A commit and a snapshot of its tree.
#[derive(Debug)]
pub(crate) struct Commit {
    pub(crate) id: String,
    pub(crate) parents: Vec<String>,
    pub(crate) committer: String,
    pub(crate) message: String,
    pub(crate) creation_date: i64,
    pub(crate) meta_range_id: String,
    pub(crate) metadata: BTreeMap<String, String>,
    pub(crate) generation: i64,
    pub(crate) tree: Arc<Tree>,
    /// [`tree_hash`] of `tree`: equal hashes are equal trees (by identity).
    pub(crate) tree_hash: [u8; 32],
}

/// What a new commit is made of; [`Commit::new`] computes its id.
#[derive(Debug)]
pub(crate) struct NewCommit {
    pub(crate) parents: Vec<String>,
    pub(crate) committer: String,
    pub(crate) message: String,
    pub(crate) creation_date: i64,
    pub(crate) metadata: BTreeMap<String, String>,
    pub(crate) generation: i64,
    pub(crate) tree: Arc<Tree>,
    /// `None` computes it from `tree`.
    pub(crate) tree_hash: Option<[u8; 32]>,
}

impl Commit {
    /// The commit with the id §4.3 gives it; `meta_range_id` is the tree hash.
    pub(crate) fn new(new: NewCommit) -> Commit {
        let tree_hash = new.tree_hash.unwrap_or_else(|| tree_hash(&new.tree));
        let meta_range_id = ident::hex(&tree_hash);
        Commit::with_meta_range(new, tree_hash, meta_range_id)
    }

    fn with_meta_range(new: NewCommit, tree_hash: [u8; 32], meta_range_id: String) -> Commit {
        let id = ident::commit_id(&CommitFields {
            committer: &new.committer,
            message: &new.message,
            meta_range_id: &meta_range_id,
            creation_date: new.creation_date,
            metadata: &new.metadata,
            parents: &new.parents,
        });
        Commit {
            id,
            parents: new.parents,
            committer: new.committer,
            message: new.message,
            creation_date: new.creation_date,
            meta_range_id,
            metadata: new.metadata,
            generation: new.generation,
            tree: new.tree,
            tree_hash,
        }
    }
}

/// A deterministic hash of a tree's paths and identities (this server's
/// `meta_range_id`; §4.3 allows any).
pub(crate) fn tree_hash(tree: &Tree) -> [u8; 32] {
    let mut e = Encoder::default();
    e.int(tree.len() as u64);
    for (path, entry) in tree {
        e.string(path).bytes(&entry.identity);
    }
    e.finish()
}

/// A branch: its head commit, staging area and `hidden` flag (§4.1).
#[derive(Debug)]
pub(crate) struct Branch {
    pub(crate) head: String,
    pub(crate) staging: Staging,
    pub(crate) hidden: bool,
}

/// A repository.
#[derive(Debug)]
pub(crate) struct Repository {
    pub(crate) id: String,
    pub(crate) creation_date: i64,
    pub(crate) default_branch: String,
    pub(crate) storage_namespace: String,
    pub(crate) commits: BTreeMap<String, Arc<Commit>>,
    pub(crate) branches: BTreeMap<String, Branch>,
    /// Tag → commit id.
    pub(crate) tags: BTreeMap<String, String>,
}

impl Repository {
    /// A repository with its first commit (§4.1) and its default branch.
    pub(crate) fn new(
        id: &str,
        storage_namespace: &str,
        default_branch: &str,
        now: i64,
    ) -> Repository {
        let tree = Arc::new(Tree::new());
        let first = Commit::with_meta_range(
            NewCommit {
                parents: Vec::new(),
                committer: String::new(),
                message: "Repository created".into(),
                creation_date: now,
                metadata: BTreeMap::new(),
                generation: 1,
                tree: Arc::clone(&tree),
                tree_hash: None,
            },
            tree_hash(&tree),
            String::new(),
        );
        let head = first.id.clone();
        let mut commits = BTreeMap::new();
        commits.insert(head.clone(), Arc::new(first));
        let mut branches = BTreeMap::new();
        branches.insert(
            default_branch.to_owned(),
            Branch {
                head,
                staging: Staging::new(),
                hidden: false,
            },
        );
        Repository {
            id: id.to_owned(),
            creation_date: now,
            default_branch: default_branch.to_owned(),
            storage_namespace: storage_namespace.to_owned(),
            commits,
            branches,
            tags: BTreeMap::new(),
        }
    }

    pub(crate) fn branch(&self, name: &str) -> Result<&Branch, LakeFsError> {
        self.branches
            .get(name)
            .ok_or_else(|| LakeFsError::new(404, "branch not found"))
    }

    pub(crate) fn branch_mut(&mut self, name: &str) -> Result<&mut Branch, LakeFsError> {
        self.branches
            .get_mut(name)
            .ok_or_else(|| LakeFsError::new(404, "branch not found"))
    }

    /// A commit that must exist (heads, parents and tags always do).
    pub(crate) fn commit(&self, id: &str) -> Arc<Commit> {
        Arc::clone(
            self.commits
                .get(id)
                .expect("heads, parents and tags name stored commits"),
        )
    }

    /// The head commit of an existing branch.
    pub(crate) fn head_of(&self, branch: &Branch) -> Arc<Commit> {
        self.commit(&branch.head)
    }

    /// Whether the branch has staged changes that change some path's
    /// identity against its head (a non-empty diffBranch).
    pub(crate) fn is_dirty(&self, branch: &Branch) -> bool {
        let head = self.head_of(branch);
        branch
            .staging
            .iter()
            .any(|(path, value)| !same(value.as_ref(), head.tree.get(path)))
    }

    /// Commits the staged changes of `branch` (§4.4), all under the lock.
    pub(crate) fn commit_branch(
        &mut self,
        branch_name: &str,
        request: CommitRequest,
    ) -> Result<Arc<Commit>, LakeFsError> {
        let branch = self.branch(branch_name)?;
        let head = self.head_of(branch);
        let mut changes = 0usize;
        let tree = if branch.staging.is_empty() {
            Arc::clone(&head.tree)
        } else {
            let mut tree = Tree::clone(&head.tree);
            for (path, value) in &branch.staging {
                match value {
                    // Identical content keeps the committed value (§4.2).
                    Some(entry) if same(Some(entry), tree.get(path)) => {}
                    Some(entry) => {
                        tree.insert(path.clone(), Arc::clone(entry));
                        changes += 1;
                    }
                    None => changes += usize::from(tree.remove(path).is_some()),
                }
            }
            Arc::new(tree)
        };
        if changes == 0 && !request.allow_empty {
            return Err(LakeFsError::new(400, "commit: no changes"));
        }
        let tree_hash = if changes == 0 {
            Some(head.tree_hash)
        } else {
            None
        };
        let commit = Arc::new(Commit::new(NewCommit {
            parents: vec![head.id.clone()],
            committer: request.committer,
            message: request.message,
            creation_date: request.creation_date,
            metadata: request.metadata,
            generation: head.generation + 1,
            tree,
            tree_hash,
        }));
        self.commits.insert(commit.id.clone(), Arc::clone(&commit));
        let branch = self.branch_mut(branch_name)?;
        branch.head = commit.id.clone();
        branch.staging.clear();
        Ok(commit)
    }
}

/// A commit's caller-given fields.
#[derive(Debug)]
pub(crate) struct CommitRequest {
    pub(crate) committer: String,
    pub(crate) message: String,
    pub(crate) metadata: BTreeMap<String, String>,
    pub(crate) creation_date: i64,
    pub(crate) allow_empty: bool,
}

/// A hook run by the next merge into a branch, after the merge is computed
/// and before the destination's head moves.
pub(crate) type MergeHook = Box<dyn FnOnce(&LakeFsHandle) + Send>;

/// Everything the server knows.
pub(crate) struct State {
    pub(crate) repositories: BTreeMap<String, Repository>,
    /// Bodies by (MD5, size); entries hold the strong references.
    blobs: HashMap<([u8; 16], u64), Weak<Blob>>,
    blobs_at_last_prune: usize,
    pub(crate) requests: Vec<LakeFsRequest>,
    /// How many recorded requests were cleared, so in-flight ones still find
    /// their entry when they set their status.
    pub(crate) requests_cleared: usize,
    pub(crate) faults: Faults<Target>,
    /// (repository, branch) → hook for the next merge into it.
    pub(crate) merge_hooks: Vec<((String, String), MergeHook)>,
    /// Source of physical addresses and request ids.
    sequence: u64,
    generation: u64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("repositories", &self.repositories.len())
            .field("requests", &self.requests.len())
            .finish_non_exhaustive()
    }
}

impl State {
    fn new() -> State {
        State {
            repositories: BTreeMap::new(),
            blobs: HashMap::new(),
            blobs_at_last_prune: 0,
            requests: Vec::new(),
            requests_cleared: 0,
            faults: Faults::default(),
            merge_hooks: Vec::new(),
            sequence: 0,
            generation: 0,
        }
    }

    /// Marks a change, so waiters re-check their conditions.
    pub(crate) fn touch(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// A fresh number (physical addresses, request ids).
    pub(crate) fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// The repository `id` after validating the id: 400 or 404 (§1.6, §3.1).
    pub(crate) fn repository(&self, id: &str) -> Result<&Repository, LakeFsError> {
        check_repository_id(id)?;
        self.repositories
            .get(id)
            .ok_or_else(|| LakeFsError::new(404, "repository not found"))
    }

    pub(crate) fn repository_mut(&mut self, id: &str) -> Result<&mut Repository, LakeFsError> {
        check_repository_id(id)?;
        self.repositories
            .get_mut(id)
            .ok_or_else(|| LakeFsError::new(404, "repository not found"))
    }

    /// Creates a repository with its first commit and default branch.
    pub(crate) fn create_repository(
        &mut self,
        id: &str,
        storage_namespace: &str,
        default_branch: &str,
    ) -> Result<&Repository, LakeFsError> {
        check_repository_id(id)?;
        check_branch_id(default_branch, "default_branch")?;
        if self.repositories.contains_key(id) {
            return Err(LakeFsError::new(
                409,
                "repository already exists: not unique",
            ));
        }
        let repository = Repository::new(id, storage_namespace, default_branch, now());
        self.touch();
        Ok(self.repositories.entry(id.to_owned()).or_insert(repository))
    }

    /// The shared body for `data`, whose MD5 is `md5`.
    pub(crate) fn blob(&mut self, md5: [u8; 16], data: Bytes) -> Arc<Blob> {
        let key = (md5, data.len() as u64);
        if let Some(blob) = self.blobs.get(&key).and_then(Weak::upgrade) {
            return blob;
        }
        let blob = Arc::new(Blob { data });
        self.blobs.insert(key, Arc::downgrade(&blob));
        if self.blobs.len() >= 2 * self.blobs_at_last_prune.max(512) {
            self.blobs.retain(|_, weak| weak.strong_count() > 0);
            self.blobs_at_last_prune = self.blobs.len();
        }
        blob
    }

    /// A new value for an upload to `repository` (which must exist).
    pub(crate) fn new_entry(&mut self, repository: &str, upload: Upload) -> Arc<Entry> {
        let sequence = self.next_sequence();
        let namespace = self
            .repositories
            .get(repository)
            .map(|r| r.storage_namespace.trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let checksum = ident::hex(&upload.md5);
        let size = upload.data.len() as u64;
        let identity =
            ident::entry_identity(size, &checksum, &upload.metadata, &upload.content_type);
        let blob = self.blob(upload.md5, upload.data);
        Arc::new(Entry {
            physical_address: format!("{namespace}/data/gperago/{sequence:020x}"),
            size,
            checksum,
            mtime: now(),
            content_type: upload.content_type,
            metadata: upload.metadata,
            identity,
            blob,
        })
    }
}

/// An uploaded object before it is stored.
#[derive(Debug)]
pub(crate) struct Upload {
    pub(crate) data: Bytes,
    pub(crate) md5: [u8; 16],
    pub(crate) content_type: String,
    pub(crate) metadata: BTreeMap<String, String>,
}

/// `^[a-z0-9][a-z0-9-]{2,62}$` (§1.6).
pub(crate) fn check_repository_id(id: &str) -> Result<(), LakeFsError> {
    let b = id.as_bytes();
    let ok = (3..=63).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if ok {
        Ok(())
    } else {
        Err(LakeFsError::new(
            400,
            "argument repository: repository id: invalid value: validation error",
        ))
    }
}

/// `^\w[-\w]*$` (§1.6): ASCII letters, digits, `_` and `-`, not starting with `-`.
pub(crate) fn is_branch_id(id: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = id.as_bytes();
    !b.is_empty() && word(b[0]) && b[1..].iter().all(|&c| word(c) || c == b'-')
}

/// 400 for an invalid branch id, naming the argument.
pub(crate) fn check_branch_id(id: &str, argument: &str) -> Result<(), LakeFsError> {
    if is_branch_id(id) {
        Ok(())
    } else {
        Err(LakeFsError::new(
            400,
            format!(
                "argument {argument}: invalid value: validation error: branch id must consist of letters, digits, underscores and dashes, and cannot start with a dash"
            ),
        ))
    }
}

/// An object path: 1…1024 bytes (§1.6).
pub(crate) fn check_path(path: &str) -> Result<(), LakeFsError> {
    if path.is_empty() {
        Err(LakeFsError::new(
            400,
            "missing path: required value: validation error",
        ))
    } else if path.len() > 1024 {
        Err(LakeFsError::new(
            400,
            "argument path: invalid value: validation error",
        ))
    } else {
        Ok(())
    }
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The server's fixed configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) access_key_id: String,
    pub(crate) secret_access_key: String,
    pub(crate) committer: String,
    pub(crate) max_upload_bytes: u64,
}

/// The state plus its wake-up channel, shared by the HTTP side and the test side.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: Config,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    pub(crate) fn new(config: Config) -> Shared {
        Shared {
            config,
            state: Mutex::new(State::new()),
            changed: Condvar::new(),
        }
    }

    /// A panic in one test thread must not poison the server for the others.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the state and wakes every waiter if it changed.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self.lock();
        let before = state.generation;
        let result = f(&mut state);
        let changed = state.generation != before;
        drop(state);
        if changed {
            self.changed.notify_all();
        }
        result
    }

    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Blocks until the generation differs from `seen` or `deadline` passes.
    pub(crate) fn wait_change(&self, seen: u64, deadline: Instant) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            if state.generation != seen || now >= deadline {
                return;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_spec_patterns() {
        for ok in ["abc", "a-b", "0ab", &"a".repeat(63)] {
            assert!(check_repository_id(ok).is_ok(), "{ok}");
        }
        for bad in ["ab", "-ab", "Abc", "a_b", &"a".repeat(64), "a.b"] {
            assert!(check_repository_id(bad).is_err(), "{bad}");
        }
        for ok in ["main", "_x", "a-b_c", "9"] {
            assert!(is_branch_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a/b", "a.b", "main@", "a b", "é"] {
            assert!(!is_branch_id(bad), "{bad}");
        }
    }
}
