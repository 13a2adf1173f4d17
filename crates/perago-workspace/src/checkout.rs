//! Materialising a task's prefix of an immutable commit into a fresh directory, and telling,
//! after the handler ran, what it changed there.
//!
//! The directory is the prefix's root: object `features/a/x.csv` of prefix `features/` is the
//! file `a/x.csv`. Downloads run in parallel, each streamed to its file and verified against
//! the object's size and checksum. The directory belongs to the [`Checkout`] and is removed
//! when it is dropped, whatever happened in between.
//!
//! Changes are found as git finds them, without git's race: every downloaded file gets the
//! commit's creation time as its modification time, so any write by the handler moves it. A
//! file whose size and time are as downloaded is unchanged; one whose size is equal but whose
//! time moved is hashed and compared with the store's checksum, so rewriting the same bytes is
//! no change.

use crate::store::{Checksum, Commit, ObjectInfo, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Why a checkout could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// `ref` names no commit of the repository, or the repository does not exist.
    #[error("{0}")]
    NotFound(String),
    /// `ref` names something else than that commit (a branch, an abbreviated id).
    #[error(
        "workspace ref {reference:?} of repository {repository} is not an immutable commit id \
         (it resolves to commit {resolved}); give the full 64-hex commit id"
    )]
    NotACommit {
        /// The repository.
        repository: String,
        /// The `ref` given.
        reference: String,
        /// What it resolves to today.
        resolved: String,
    },
    /// An object's path cannot be a file under the directory (`..`, an empty segment, a path
    /// that is also a directory of another object).
    #[error("object {path:?} of commit {commit} cannot be materialised: {why}")]
    UnsafePath {
        /// The object's path.
        path: String,
        /// The commit.
        commit: String,
        /// What is wrong.
        why: &'static str,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was downloaded of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    size: u64,
    checksum: String,
    modified: SystemTime,
}

/// A materialised prefix of a commit, in its own directory (removed on drop).
#[derive(Debug)]
pub struct Checkout {
    repository: String,
    commit: Commit,
    prefix: String,
    dir: PathBuf,
    checksum: Checksum,
    /// By path relative to the prefix.
    files: BTreeMap<String, Entry>,
    bytes: u64,
    /// Whether the directory outlives the checkout ([`Checkout::keep`]).
    kept: bool,
}

/// What a handler changed in its checkout, by path relative to the prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// New files, with their sizes.
    pub added: Vec<(String, u64)>,
    /// Files whose content differs, with their new sizes.
    pub changed: Vec<(String, u64)>,
    /// Files no longer there.
    pub removed: Vec<String>,
    /// Entries that are neither regular files nor directories (symlinks, sockets): they cannot
    /// be published.
    pub unsupported: Vec<String>,
}

impl Changes {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.unsupported.is_empty()
    }

    /// Files added, changed or removed.
    pub fn files(&self) -> u64 {
        (self.added.len() + self.changed.len() + self.removed.len()) as u64
    }

    /// Bytes to upload: the sizes of the files added or changed.
    pub fn bytes(&self) -> u64 {
        self.added.iter().chain(&self.changed).map(|(_, s)| s).sum()
    }

    /// `2 added, 1 changed, 1 removed (out/a.csv, out/b.csv, …)`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.added.len(), "added"),
            (self.changed.len(), "changed"),
            (self.removed.len(), "removed"),
            (self.unsupported.len(), "not regular files"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        const SHOWN: usize = 3;
        let paths: Vec<&str> = self
            .added
            .iter()
            .chain(&self.changed)
            .map(|(p, _)| p.as_str())
            .chain(self.removed.iter().map(String::as_str))
            .chain(self.unsupported.iter().map(String::as_str))
            .collect();
        let mut shown = paths[..paths.len().min(SHOWN)].join(", ");
        if paths.len() > SHOWN {
            shown.push_str(", …");
        }
        format!("{} ({shown})", parts.join(", "))
    }
}

/// How many objects are downloaded at once by default.
pub const DEFAULT_PARALLEL_DOWNLOADS: usize = 8;

/// Materialises `prefix` of commit `reference` of `repository` into `dir`, a directory that
/// must not exist yet (it is created; on failure it is removed again).
///
/// `reference` must be the commit's full id: a workspace's input is an immutable commit, and a
/// branch name or an abbreviated id would make the attempt depend on when it runs.
pub fn materialise(
    store: &dyn Store,
    repository: &str,
    reference: &str,
    prefix: &str,
    dir: &Path,
    parallel: usize,
) -> Result<Checkout, CheckoutError> {
    materialise_reporting(
        store,
        repository,
        reference,
        prefix,
        dir,
        parallel,
        &crate::store::NoProgress,
    )
}

/// [`materialise`], telling `progress` the objects and bytes to download, then each object
/// once downloaded.
pub fn materialise_reporting(
    store: &dyn Store,
    repository: &str,
    reference: &str,
    prefix: &str,
    dir: &Path,
    parallel: usize,
    progress: &dyn crate::store::Progress,
) -> Result<Checkout, CheckoutError> {
    let commit = store
        .get_commit(repository, reference)
        .map_err(|e| match e {
            StoreError::NotFound(_) => CheckoutError::NotFound(format!(
                "commit {reference} not found in repository {repository} ({})",
                store.describe()
            )),
            StoreError::RepositoryNotFound(_) => CheckoutError::NotFound(format!(
                "repository {repository} not found ({})",
                store.describe()
            )),
            e => CheckoutError::Store(e),
        })?;
    if commit.id.as_str() != reference {
        return Err(CheckoutError::NotACommit {
            repository: repository.to_owned(),
            reference: reference.to_owned(),
            resolved: commit.id.to_string(),
        });
    }
    let objects = store.list_objects(repository, &commit.id, prefix)?;
    // Created before the checkout exists: a directory that was there already (the error)
    // must not be removed by its drop.
    std::fs::create_dir_all(dir.parent().unwrap_or(Path::new(".")))
        .and_then(|()| std::fs::create_dir(dir))
        .map_err(|e| StoreError::io(format!("cannot create {}", dir.display()), e))?;
    let mut checkout = Checkout {
        repository: repository.to_owned(),
        commit,
        prefix: prefix.to_owned(),
        dir: dir.to_owned(),
        checksum: store.checksum(),
        files: BTreeMap::new(),
        bytes: 0,
        kept: false,
    };
    // From here on, dropping `checkout` removes `dir`.
    let relative: Vec<String> = objects
        .iter()
        .map(|o| relative_path(&o.path, prefix, &checkout.commit))
        .collect::<Result<_, _>>()?;
    check_no_file_is_a_directory(&relative, &checkout.commit)?;
    for path in &relative {
        if let Some((parent, _)) = path.rsplit_once('/') {
            let parent = dir.join(parent);
            std::fs::create_dir_all(&parent)
                .map_err(|e| StoreError::io(format!("cannot create {}", parent.display()), e))?;
        }
    }
    progress.start(objects.len() as u64, objects.iter().map(|o| o.size).sum());
    download_all(
        store,
        &checkout,
        &objects,
        &relative,
        parallel.max(1),
        progress,
    )?;
    let modified = checkout.stamp();
    for (object, path) in objects.iter().zip(relative) {
        checkout.bytes += object.size;
        checkout.files.insert(
            path,
            Entry {
                size: object.size,
                checksum: object.checksum.clone(),
                modified,
            },
        );
    }
    Ok(checkout)
}

/// `object` without `prefix`, when it is a safe relative path of files and directories.
fn relative_path(object: &str, prefix: &str, commit: &Commit) -> Result<String, CheckoutError> {
    let unsafe_path = |why| CheckoutError::UnsafePath {
        path: object.to_owned(),
        commit: commit.id.to_string(),
        why,
    };
    let relative = object
        .strip_prefix(prefix)
        .ok_or_else(|| unsafe_path("the store listed it outside the prefix"))?;
    if relative.is_empty() {
        return Err(unsafe_path(
            "it is the prefix itself, so it has no file name",
        ));
    }
    for segment in relative.split('/') {
        match segment {
            "" => return Err(unsafe_path("it has an empty path segment")),
            "." | ".." => return Err(unsafe_path("it has a `.` or `..` segment")),
            s if s.contains('\\') || s.contains('\0') => {
                return Err(unsafe_path("it has a backslash or NUL in a segment"));
            }
            _ => {}
        }
    }
    Ok(relative.to_owned())
}

/// Refuses a listing where one object's path is a directory of another (`a` and `a/b`).
fn check_no_file_is_a_directory(sorted: &[String], commit: &Commit) -> Result<(), CheckoutError> {
    let files: std::collections::HashSet<&str> = sorted.iter().map(String::as_str).collect();
    for path in sorted {
        let mut at = 0;
        while let Some(slash) = path[at..].find('/') {
            let dir = &path[..at + slash];
            if files.contains(dir) {
                return Err(CheckoutError::UnsafePath {
                    path: dir.to_owned(),
                    commit: commit.id.to_string(),
                    why: "it is a file and, for another object, a directory",
                });
            }
            at += slash + 1;
        }
    }
    Ok(())
}

/// Downloads every object with `parallel` threads, each file stamped with the commit's time.
fn download_all(
    store: &dyn Store,
    checkout: &Checkout,
    objects: &[ObjectInfo],
    relative: &[String],
    parallel: usize,
    progress: &dyn crate::store::Progress,
) -> Result<(), StoreError> {
    let dests: Vec<PathBuf> = relative.iter().map(|r| checkout.dir.join(r)).collect();
    let stamp = checkout.stamp();
    store.download_all(
        &checkout.repository,
        &checkout.commit.id,
        objects,
        &dests,
        parallel,
        &|i| {
            std::fs::File::options()
                .write(true)
                .open(&dests[i])
                .and_then(|f| f.set_modified(stamp))
                .map_err(|e| StoreError::io(format!("cannot stamp {}", dests[i].display()), e))?;
            progress.file(objects[i].size);
            Ok(())
        },
    )
}

impl Checkout {
    /// The modification time every downloaded file gets: the commit's creation time (at least
    /// one second after the epoch, never a time a handler's write could have).
    fn stamp(&self) -> SystemTime {
        let seconds = u64::try_from(self.commit.creation_date).unwrap_or(0).max(1);
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(seconds)
    }

    /// The directory: the prefix's root.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The repository.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The commit materialised.
    pub fn commit(&self) -> &Commit {
        &self.commit
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// How many files were materialised.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Their total size.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What differs between the directory now and the commit's prefix.
    pub fn changes(&self) -> Result<Changes, StoreError> {
        let mut changes = Changes::default();
        let mut seen = std::collections::HashSet::new();
        for entry in walkdir::WalkDir::new(&self.dir)
            .follow_links(false)
            .sort_by_file_name()
            .min_depth(1)
        {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(&self.dir).display().to_string();
                StoreError::io(
                    format!("cannot read {path}"),
                    e.into_io_error()
                        .unwrap_or_else(|| std::io::Error::other("directory loop")),
                )
            })?;
            let kind = entry.file_type();
            if kind.is_dir() {
                continue;
            }
            let relative = crate::store::relative_name(&self.dir, entry.path())?;
            if !kind.is_file() {
                changes.unsupported.push(relative);
                continue;
            }
            let metadata = entry.metadata().map_err(|e| {
                StoreError::io(
                    format!("cannot read {}", entry.path().display()),
                    e.into_io_error()
                        .unwrap_or_else(|| std::io::Error::other("metadata")),
                )
            })?;
            let size = metadata.len();
            match self.files.get(&relative) {
                None => changes.added.push((relative.clone(), size)),
                Some(known) => {
                    seen.insert(relative.clone());
                    let same = known.size == size
                        && (metadata.modified().ok() == Some(known.modified)
                            || self.same_content(entry.path(), &known.checksum)?);
                    if !same {
                        changes.changed.push((relative, size));
                    }
                }
            }
        }
        changes.removed = self
            .files
            .keys()
            .filter(|p| !seen.contains(*p))
            .cloned()
            .collect();
        Ok(changes)
    }

    /// Whether `file` hashes to `checksum` (false when the store's checksum has another form).
    fn same_content(&self, file: &Path, checksum: &str) -> Result<bool, StoreError> {
        if !self.checksum.recognises(checksum) {
            return Ok(false);
        }
        let actual = hash_file(self.checksum, file)?;
        Ok(actual == checksum)
    }

    /// The store path of `relative`, a path under the directory.
    pub fn object_path(&self, relative: &str) -> String {
        format!("{}{relative}", self.prefix)
    }
}

impl Checkout {
    /// Keeps the directory: the checkout is forgotten, its files stay (an export).
    pub fn keep(mut self) -> PathBuf {
        self.kept = true;
        self.dir.clone()
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        // Best effort: an attempt's directory must not outlive it, but failing to remove it
        // (a handler that made a file read-only in a read-only directory) is no reason to
        // lose the task's result.
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The lowercase hex digest of `file`'s content.
pub fn hash_file(algorithm: Checksum, file: &Path) -> Result<String, StoreError> {
    let mut reader = std::fs::File::open(file)
        .map_err(|e| StoreError::io(format!("cannot read {}", file.display()), e))?;
    let mut hasher = Hasher::new(algorithm);
    let mut buf = vec![0; 256 * 1024];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| StoreError::io(format!("cannot read {}", file.display()), e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish())
}

/// A streaming digest of either algorithm.
#[derive(Debug, Clone)]
pub enum Hasher {
    /// SHA-256.
    Sha256(sha2::Sha256),
    /// MD5.
    Md5(md5::Md5),
}

impl Hasher {
    /// A fresh hasher.
    pub fn new(algorithm: Checksum) -> Hasher {
        use sha2::Digest;
        match algorithm {
            Checksum::Sha256 => Hasher::Sha256(sha2::Sha256::new()),
            Checksum::Md5 => Hasher::Md5(md5::Md5::new()),
        }
    }

    /// Hashes `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        use sha2::Digest;
        match self {
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Md5(h) => h.update(bytes),
        }
    }

    /// The lowercase hex digest.
    pub fn finish(self) -> String {
        use sha2::Digest;
        let bytes: Vec<u8> = match self {
            Hasher::Sha256(h) => h.finalize().to_vec(),
            Hasher::Md5(h) => h.finalize().to_vec(),
        };
        let mut hex = String::with_capacity(bytes.len() * 2);
        for b in bytes {
            hex.push_str(&format!("{b:02x}"));
        }
        hex
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit() -> Commit {
        Commit {
            id: crate::CommitId::parse(&"a".repeat(64)).unwrap(),
            parents: vec![],
            message: String::new(),
            metadata: Default::default(),
            creation_date: 0,
        }
    }

    #[test]
    fn object_paths_must_be_safe_relative_paths() {
        let c = commit();
        assert_eq!(relative_path("f/a/b.csv", "f/", &c).unwrap(), "a/b.csv");
        for bad in ["f/../x", "f/a//b", "f/", "f/./a", "g/a", "f/a\\b"] {
            assert!(relative_path(bad, "f/", &c).is_err(), "{bad}");
        }
        let both = ["a".to_owned(), "a/b".to_owned()];
        assert!(check_no_file_is_a_directory(&both, &c).is_err());
        let fine = ["a/b".to_owned(), "ab".to_owned()];
        assert!(check_no_file_is_a_directory(&fine, &c).is_ok());
    }

    #[test]
    fn digests() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(
            hash_file(Checksum::Md5, &f).unwrap(),
            "5d41402abc4b2a76b9719d911017c592"
        );
        assert_eq!(
            hash_file(Checksum::Sha256, &f).unwrap(),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
    }

    #[test]
    fn summaries_name_a_few_paths() {
        let changes = Changes {
            added: vec![("a".into(), 1), ("b".into(), 2)],
            changed: vec![("c".into(), 3)],
            removed: vec!["d".into()],
            unsupported: vec![],
        };
        assert_eq!(changes.files(), 4);
        assert_eq!(changes.bytes(), 6);
        assert_eq!(
            changes.summary(),
            "2 added, 1 changed, 1 removed (a, b, c, …)"
        );
    }
}
