//! The store model both backends share: repositories of immutable commits, branches whose heads
//! move only by commit and merge, objects by path with size and checksum, a staging area per
//! branch, and a 3-way merge that refuses conflicting paths. It is lakeFS's model (spec: the
//! lakeFS REST API v1), so the embedded local store behaves as lakeFS does, and one conformance
//! suite holds both to it. Importing a directory ([`Store::import_tree`]) has one meaning on
//! every backend: [`import_by_upload`], which a backend may do a faster way.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The result of a store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// User metadata of a commit: sorted, so its encoding is canonical.
pub type Metadata = BTreeMap<String, String>;

/// An immutable commit's id: 64 lowercase hex digits (a SHA-256 over its content).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct CommitId(String);

impl CommitId {
    /// `text` when it is 64 lowercase hex digits.
    pub fn parse(text: &str) -> Option<CommitId> {
        is_commit_id(text).then(|| CommitId(text.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, for messages.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True for 64 lowercase hex digits: the form of every commit id.
pub fn is_commit_id(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// lakeFS's rule for a branch name (`^\w[-\w]*$`: ASCII letters, digits, `_` and `-`, not
/// starting with `-`; no `/`, no `.`), checked by both backends before anything is sent or
/// written, so that a bad name is `Invalid` on either.
pub fn check_branch_name(name: &str) -> Result<()> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = name.as_bytes();
    if bytes.first().is_some_and(|b| word(*b)) && bytes.iter().all(|b| word(*b) || *b == b'-') {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "branch name {name:?}: branch id must consist of letters, digits, underscores and \
             dashes, and cannot start with a dash"
        )))
    }
}

/// A commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commit {
    /// Its id.
    pub id: CommitId,
    /// `[]` for a repository's first commit, `[previous head]` for a commit, `[destination head,
    /// source]` for a merge.
    pub parents: Vec<CommitId>,
    /// The message.
    pub message: String,
    /// User metadata.
    pub metadata: Metadata,
    /// Unix seconds.
    pub creation_date: i64,
}

/// An object of a commit or a branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectInfo {
    /// Its path in the repository (`/`-separated, no leading `/`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The store's checksum of its content (see [`Checksum`]).
    pub checksum: String,
}

/// How a store's checksums are computed, so a download can be verified and an edit distinguished
/// from a rewrite of the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Lowercase hex SHA-256 of the content (the local store).
    Sha256,
    /// Lowercase hex MD5 of the content (lakeFS, for objects uploaded through its API).
    Md5,
}

impl Checksum {
    /// Whether `checksum` has this algorithm's form. A lakeFS object imported by other means
    /// may carry a checksum of another kind: only its size can be verified.
    pub fn recognises(self, checksum: &str) -> bool {
        let len = match self {
            Checksum::Sha256 => 64,
            Checksum::Md5 => 32,
        };
        checksum.len() == len
            && checksum
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }
}

/// What a two-commit diff reports of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Only in the right commit.
    Added,
    /// Only in the left commit.
    Removed,
    /// In both, with different content.
    Changed,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// What happened to it.
    pub kind: ChangeKind,
    /// The path.
    pub path: String,
}

/// How a merge ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The merge commit, now the destination's head. Its parents are `[the destination head it
    /// was applied to, the source]`.
    Merged(CommitId),
    /// A path changed on both sides differently; nothing was written.
    Conflict,
    /// The source brings nothing the destination lacks; nothing was written.
    NoChanges,
}

/// Why a store operation failed. Messages name what is wrong and never carry credentials.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The repository does not exist.
    #[error("repository {0} not found")]
    RepositoryNotFound(String),
    /// A branch, ref, commit or object does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// A branch or repository of that name exists already.
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The store refused the request as invalid (a bad name, a dirty destination…).
    #[error("{0}")]
    Invalid(String),
    /// The credentials were refused.
    #[error("the store refused the credentials: {0}")]
    Unauthorized(String),
    /// Downloaded content does not match the object's size or checksum.
    #[error("{path}: downloaded content does not match: {detail}")]
    Corrupt {
        /// The object.
        path: String,
        /// What differs.
        detail: String,
    },
    /// A local file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The store failed (a 5xx after the retries, a malformed answer, a broken connection).
    #[error("{0}")]
    Unavailable(String),
}

impl StoreError {
    /// An I/O error while doing `context`.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> StoreError {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }
}

/// A store of repositories: lakeFS ([`crate::lakefs`]) or the embedded local store
/// ([`crate::local`]). Blocking, and shared by threads: a materialisation downloads objects in
/// parallel through one `&dyn Store`.
///
/// Operations follow lakeFS's semantics (see each method); where a local store could do more
/// (a compare-and-swap on a branch head), it does not, so that what passes on one backend
/// passes on the other.
pub trait Store: Send + Sync + fmt::Debug {
    /// `lakeFS at http://host:8000` or `local store at /path`: for messages (never a secret).
    fn describe(&self) -> String;

    /// How this store's object checksums are computed.
    fn checksum(&self) -> Checksum;

    /// The commit `reference` names in `repository`: a full commit id, or a branch (its
    /// committed head). `NotFound` when it names nothing.
    fn get_commit(&self, repository: &str, reference: &str) -> Result<Commit>;

    /// The commits reachable from `reference`, newest first (by creation date, then id), at
    /// most `limit`.
    fn log(&self, repository: &str, reference: &str, limit: usize) -> Result<Vec<Commit>>;

    /// The branches and their head commits, by name.
    fn list_branches(&self, repository: &str) -> Result<Vec<(String, CommitId)>>;

    /// Every object of commit `commit` whose path starts with `prefix`, in byte order of path.
    fn list_objects(
        &self,
        repository: &str,
        commit: &CommitId,
        prefix: &str,
    ) -> Result<Vec<ObjectInfo>>;

    /// Writes `object` of `commit` to the file `dest` (created or truncated), streaming, and
    /// verifies its size and, when [`Checksum::recognises`] it, its checksum.
    fn download(
        &self,
        repository: &str,
        commit: &CommitId,
        object: &ObjectInfo,
        dest: &Path,
    ) -> Result<()>;

    /// Downloads `objects` of `commit`, object `i` to the file `dests[i]`, up to `parallel` at
    /// a time, each verified as [`download`](Self::download) verifies it before this returns
    /// `Ok`; `written(i)` runs (on the downloading thread) once object `i`'s file is written.
    /// The first failure stops the work and is returned; a file whose content failed its check
    /// is removed. The default downloads each with [`download`](Self::download); the lakeFS
    /// client checks the MD5s afterwards, sixteen at a time ([`crate::md5_lanes`]).
    fn download_all(
        &self,
        repository: &str,
        commit: &CommitId,
        objects: &[ObjectInfo],
        dests: &[PathBuf],
        parallel: usize,
        written: &(dyn Fn(usize) -> Result<()> + Sync),
    ) -> Result<()> {
        crate::parallel::try_for_each(objects, parallel, |i, object| {
            self.download(repository, commit, object, &dests[i])?;
            written(i)
        })
    }

    /// Creates branch `name` at commit `source`. `AlreadyExists` when the name is taken (an
    /// atomic create-if-absent).
    fn create_branch(&self, repository: &str, name: &str, source: &CommitId) -> Result<()>;

    /// Deletes branch `name`, discarding its staged changes (its commits stay).
    fn delete_branch(&self, repository: &str, name: &str) -> Result<()>;

    /// Stages the content of file `source` at `path` on `branch`.
    fn upload(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
        source: &Path,
    ) -> Result<ObjectInfo>;

    /// Stages file `files[i].1` at path `files[i].0` on `branch` for every `i`, up to
    /// `parallel` at a time, each checked as [`upload`](Self::upload) checks it before this
    /// returns `Ok`; `stored(size)` runs once a file is stored. The first failure stops the
    /// work and is returned. The default uploads each with [`upload`](Self::upload); the
    /// lakeFS client hashes the files sixteen at a time ([`crate::md5_lanes`]) before it
    /// sends them.
    fn upload_all(
        &self,
        repository: &str,
        branch: &str,
        files: &[(String, PathBuf)],
        parallel: usize,
        stored: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        crate::parallel::try_for_each(files, parallel, |_, (path, source)| {
            let info = self.upload(repository, branch, path, source)?;
            stored(info.size);
            Ok(())
        })
    }

    /// Stages the removal of `path` on `branch` (nothing happens when it does not exist).
    fn delete_object(&self, repository: &str, branch: &str, path: &str) -> Result<()>;

    /// Makes `prefix` of `branch` exactly the regular files under directory `dir`, each at
    /// `prefix` followed by its `/`-separated path relative to `dir` (empty directories are
    /// not kept), and commits with `message` and `metadata`: objects outside `prefix` stay,
    /// those under it that are not in `dir` are removed. `None` when that changes no path.
    /// `Invalid`, before anything is stored, when `dir` holds a symbolic link, a special file
    /// or a name that is not UTF-8 (naming the first); `Io` when `dir` cannot be read. The
    /// repository and the branch must exist.
    ///
    /// The default ([`import_by_upload`]) uploads the files in parallel, stages the removals
    /// and commits, so staged changes the branch had are committed with them. A backend with a faster way overrides it with the same result: the local store
    /// copies the files into its objects on every core, makes them durable together and writes
    /// the commit itself; it refuses a branch with staged changes (`Invalid`).
    fn import_tree(
        &self,
        repository: &str,
        branch: &str,
        dir: &Path,
        prefix: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Option<Commit>> {
        self.import_tree_reporting(
            repository,
            branch,
            dir,
            prefix,
            message,
            metadata,
            &NoProgress,
        )
    }

    /// [`import_tree`](Self::import_tree), telling `progress` the files and bytes to store,
    /// then each file once stored (from several threads). A backend overrides this one.
    #[allow(clippy::too_many_arguments)]
    fn import_tree_reporting(
        &self,
        repository: &str,
        branch: &str,
        dir: &Path,
        prefix: &str,
        message: &str,
        metadata: &Metadata,
        progress: &dyn Progress,
    ) -> Result<Option<Commit>> {
        import_by_upload(
            self, repository, branch, dir, prefix, message, metadata, progress,
        )
    }

    /// Commits `branch`'s staged changes: a new commit whose parent is the branch head, which
    /// becomes the new head. `None` when the staged changes change no path.
    fn commit(
        &self,
        repository: &str,
        branch: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Option<Commit>>;

    /// Merges the committed head of branch `source` into branch `destination` (whose head it
    /// is when the merge applies): a 3-way merge against their best common ancestor, always a
    /// new merge commit, never a fast-forward. A path changed on both sides differently is a
    /// [`Merge::Conflict`] and nothing is written. `Invalid` when the destination has staged
    /// changes.
    fn merge(
        &self,
        repository: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Merge>;

    /// The paths under `prefix` that differ between commits `left` and `right`, in path order.
    fn diff(
        &self,
        repository: &str,
        left: &CommitId,
        right: &CommitId,
        prefix: &str,
    ) -> Result<Vec<Change>>;
}

/// What a long transfer tells as it goes (`perago workspace import|export` draws a progress
/// bar with it). Called from the transfer's threads, so it must be `Sync`.
pub trait Progress: Sync {
    /// The transfer will move `files` files of `bytes` bytes in all.
    fn start(&self, files: u64, bytes: u64) {
        let _ = (files, bytes);
    }

    /// One file of `bytes` bytes was moved.
    fn file(&self, bytes: u64) {
        let _ = bytes;
    }
}

/// Tells nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// Tells `progress` the files and their total size.
pub(crate) fn start_progress(dir: &Path, files: &[String], progress: &dyn Progress) {
    let bytes = files
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum();
    progress.start(files.len() as u64, bytes);
}

/// How many files an import ([`import_by_upload`]) or an export moves at once.
pub const PARALLEL_TRANSFERS: usize = 8;

/// [`Store::import_tree`] through the store's own operations, for any backend (its default):
/// uploads the files ([`PARALLEL_TRANSFERS`] at a time, each told to `progress`), stages the
/// removal of the objects under `prefix` that are not in `dir`, and commits.
#[allow(clippy::too_many_arguments)]
pub fn import_by_upload<S: Store + ?Sized>(
    store: &S,
    repository: &str,
    branch: &str,
    dir: &Path,
    prefix: &str,
    message: &str,
    metadata: &Metadata,
    progress: &dyn Progress,
) -> Result<Option<Commit>> {
    let files = regular_files(dir)?;
    let head = store.get_commit(repository, branch)?;
    let existing = store.list_objects(repository, &head.id, prefix)?;
    start_progress(dir, &files, progress);
    let uploads: Vec<(String, PathBuf)> = files
        .iter()
        .map(|relative| (format!("{prefix}{relative}"), dir.join(relative)))
        .collect();
    store.upload_all(repository, branch, &uploads, PARALLEL_TRANSFERS, &|size| {
        progress.file(size);
    })?;
    let present: std::collections::HashSet<String> =
        files.iter().map(|f| format!("{prefix}{f}")).collect();
    for object in existing.iter().filter(|o| !present.contains(&o.path)) {
        store.delete_object(repository, branch, &object.path)?;
    }
    store.commit(repository, branch, message, metadata)
}

/// The `/`-separated paths of the regular files under `dir`, relative to `dir`, in byte
/// order. `Invalid` for the first symbolic link or special file, or a name that is not UTF-8
/// (no object path can hold it); `Io` when `dir` or a directory under it cannot be read.
pub(crate) fn regular_files(dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).display().to_string();
            let io = e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("directory loop"));
            StoreError::io(format!("cannot read {path}"), io)
        })?;
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            return Err(StoreError::Invalid(format!(
                "{} is not a regular file (symbolic links and special files cannot be imported)",
                entry.path().display()
            )));
        }
        files.push(relative_name(dir, entry.path())?);
    }
    files.sort_unstable();
    Ok(files)
}

/// The `/`-separated path of `path` under `root`; a name that is not UTF-8 cannot be an
/// object path.
pub(crate) fn relative_name(root: &Path, path: &Path) -> Result<String> {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Option<Vec<&str>> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect();
    parts.map(|p| p.join("/")).ok_or_else(|| {
        StoreError::Invalid(format!(
            "{} has a name that is not UTF-8, which no object path can hold",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ids_are_64_lowercase_hex() {
        let id = "a".repeat(64);
        assert_eq!(CommitId::parse(&id).unwrap().as_str(), id);
        assert!(CommitId::parse(&"A".repeat(64)).is_none());
        assert!(CommitId::parse(&"a".repeat(63)).is_none());
        assert!(CommitId::parse("main").is_none());
        assert!(Checksum::Md5.recognises("d41d8cd98f00b204e9800998ecf8427e"));
        assert!(!Checksum::Md5.recognises("\"d41d8cd98f00b204e9800998ecf8427e\""));
        assert!(!Checksum::Sha256.recognises("d41d8cd98f00b204e9800998ecf8427e"));
    }
}
