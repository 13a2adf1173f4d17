//! The embedded local store: lakeFS's model ([`crate::store`]) in a directory, for a machine
//! without lakeFS. Several processes may share one store directory.
//!
//! # On-disk layout
//!
//! ```text
//! <root>/
//!   store.json                        {"version":1}
//!   objects/<aa>/<sha256>             object content, named by its SHA-256 (aa = its first 2
//!                                     hex digits); shared by every repository, written once
//!   tmp/                              temporary files, renamed into place when complete
//!   repositories/<repository>/
//!     repository.json                 {"creation_date":…,"default_branch":"main","version":1}
//!     commits/<aa>/<commit id>        a commit: canonical JSON (sorted keys, no whitespace)
//!                                     {"creation_date","generation","message","metadata",
//!                                     "parents","tree","version"}; its id is the SHA-256 of
//!                                     those bytes
//!     trees/<aa>/<sha256>             a commit's content: canonical JSON
//!                                     {"<path>":{"checksum":"<sha256>","size":n},…} in byte order
//!                                     of path, named by its SHA-256
//!     branches/<branch>               {"head":"<commit id>","staging":"<token>"}
//!     staging/<token>                 the branch's staging area: an append-only log of JSON
//!                                     lines {"path":…,"value":{"checksum","size"}|null}
//!                                     (null: a staged removal); the newest line of a path wins
//!     locks/<branch>                  the branch's lock file (never removed)
//! ```
//!
//! Objects, trees and commits are content-addressed and immutable: each is written to a
//! temporary file under `tmp/`, fsynced, renamed to its final name, and its directory fsynced,
//! so a crash never leaves a torn file under a final name (at worst an orphaned temporary file,
//! which nothing reads). Everything a file names is durable before the file is. An import
//! ([`Store::import_tree`]) reads each file once (hashing while copying to a temporary file, on
//! every core), then makes its new objects durable together: on Linux, from 64 objects on, one
//! syncfs(2) before the renames and one after, instead of an fsync per object and per directory
//! (a syncfs also flushes what other programs wrote to that filesystem).
//!
//! # Branch heads: a compare-and-swap
//!
//! A branch's state (head commit and staging token) changes only while its lock file
//! (`locks/<branch>`) is held with an exclusive [`File::lock`] (`flock`), which serialises
//! threads and processes alike and is released by the kernel when a process dies. Under the
//! lock the current state is read, compared with what the caller expects, and the new state
//! written to a temporary file, fsynced, renamed over `branches/<branch>`, and the directory
//! fsynced. Readers take no lock: a rename replaces the state file atomically.
//!
//! - upload and delete append to the staging log under the lock (and fsync it); a line torn by
//!   a crash is never acknowledged and is skipped when the log is read;
//! - commit holds the lock from reading the staging area to moving the head, and starts a fresh
//!   staging log with the new head, in one rename;
//! - merge computes its commit without the lock, then swaps the head if it is still the one it
//!   started from; a merge whose destination moved meanwhile is recomputed against the new head
//!   (lakeFS's retry loop), and its last try holds the lock throughout, so it always ends;
//! - an import ([`Store::import_tree`]) stores its objects without the lock, then holds it
//!   from reading the head to moving it, as a commit does;
//! - creating a branch writes its state only if absent, under its lock; creating a repository
//!   renames a complete directory into place.

mod fsio;
mod model;

use crate::parallel;
use crate::store::{
    Change, Checksum, Commit, CommitId, Merge, Metadata, ObjectInfo, Result, Store, StoreError,
    is_commit_id,
};
use fsio::{Temp, Tracked};
use model::{BranchState, CommitRecord, Entry, FORMAT_VERSION, RepositoryRecord, Staged, Tree};
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The message of a repository's first commit (lakeFS's).
pub const REPOSITORY_CREATED: &str = "Repository created";

/// The metadata key lakeFS adds to every merge commit, with the strategy (`default` here).
pub const MERGE_STRATEGY_KEY: &str = ".lakefs.merge.strategy";

/// How many times a merge computes its commit without holding the destination's lock before
/// its last try, which holds it.
const OPTIMISTIC_MERGE_TRIES: usize = 10;

/// Threads waiting on fsyncs: an fsync waits on the disk, not on a core, and the filesystem
/// commits concurrent fsyncs together, so more threads than cores keep the disk busy.
const SYNC_THREADS: usize = 16;

/// From this many new objects on, an import makes them durable with one syncfs(2) (Linux)
/// before renaming them, and another after, instead of an fsync per object and per directory.
#[cfg(target_os = "linux")]
const SYNCFS_FROM: usize = 64;

/// At most this many commits are cached (they are immutable).
const COMMIT_CACHE: usize = 65_536;

/// At most this many trees are cached.
const TREE_CACHE: usize = 16;

/// The embedded local store (see the [module documentation](self) for its layout and its
/// compare-and-swap). Shared by threads; several processes may open the same directory.
pub struct LocalStore {
    root: PathBuf,
    tmp: PathBuf,
    commits: Mutex<HashMap<(String, String), Arc<CommitRecord>>>,
    trees: Mutex<HashMap<String, Arc<Tree>>>,
}

impl std::fmt::Debug for LocalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalStore")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// What a branch update does with the state it read under the lock.
enum Action {
    /// Nothing.
    Keep,
    /// Replace the state (removing the old staging log afterwards when the token changed).
    Set(BranchState),
}

/// Proof that a branch's lock is held (the lock file, unlocked when dropped).
struct BranchLock(#[allow(dead_code)] File);

impl LocalStore {
    /// Opens the store in directory `root`, creating it when missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<LocalStore> {
        let root: PathBuf = root.into();
        fsio::create_dir_durably(&root)?;
        let marker = root.join("store.json");
        match fsio::read_optional(&marker)? {
            Some(bytes) => {
                let version = serde_json::from_slice::<serde_json::Value>(&bytes)
                    .ok()
                    .and_then(|v| v.get("version").and_then(|v| v.as_u64()));
                if version != Some(u64::from(FORMAT_VERSION)) {
                    return Err(StoreError::Invalid(format!(
                        "{} is not a local store of version {FORMAT_VERSION}",
                        marker.display()
                    )));
                }
            }
            None => {
                fsio::create_dir_durably(&root.join("tmp"))?;
                let bytes = format!("{{\"version\":{FORMAT_VERSION}}}");
                fsio::write_atomic(&root.join("tmp"), &marker, bytes.as_bytes())?;
            }
        }
        for dir in ["objects", "tmp", "repositories"] {
            fsio::create_dir_durably(&root.join(dir))?;
        }
        // The 256 object directories, made once, so that writing an object never creates one.
        let objects = root.join("objects");
        if !objects.join("ff").is_dir() {
            for byte in 0..=255u8 {
                let dir = objects.join(model::hex(&[byte]));
                match fs::create_dir(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        return Err(StoreError::io(format!("creating {}", dir.display()), e));
                    }
                }
            }
            fsio::sync_dir(&objects)?;
        }
        Ok(LocalStore {
            tmp: root.join("tmp"),
            root,
            commits: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates repository `name` with branch `default_branch` at a first commit like lakeFS's
    /// (message [`REPOSITORY_CREATED`], no parents, no metadata, no objects), and returns that
    /// commit. `AlreadyExists` when the repository exists.
    pub fn create_repository(&self, name: &str, default_branch: &str) -> Result<Commit> {
        check_repository_name(name)?;
        check_branch_name(default_branch)?;
        let dest = self.repository_dir(name);
        if dest.join("repository.json").exists() {
            return Err(StoreError::AlreadyExists(format!("repository {name}")));
        }
        // Build the whole repository under tmp/, then rename it into place: of two concurrent
        // creations one rename wins, and the other finds a non-empty directory.
        let staging = fsio::temp_path(&self.tmp).with_extension("repository");
        let built = self.build_repository(&staging, default_branch);
        let result = built.and_then(|commit| {
            match fs::rename(&staging, &dest) {
                Ok(()) => {}
                Err(e) if dest.join("repository.json").exists() || is_not_empty(&e) => {
                    return Err(StoreError::AlreadyExists(format!("repository {name}")));
                }
                Err(e) => {
                    return Err(StoreError::io(
                        format!("renaming {} to {}", staging.display(), dest.display()),
                        e,
                    ));
                }
            }
            fsio::sync_dir(fsio::parent(&dest))?;
            Ok(commit)
        });
        if result.is_err() {
            let _ = fs::remove_dir_all(&staging);
        }
        result
    }

    fn build_repository(&self, dir: &Path, default_branch: &str) -> Result<Commit> {
        let now = now();
        let record = RepositoryRecord {
            creation_date: now,
            default_branch: default_branch.to_owned(),
            version: FORMAT_VERSION,
        };
        let tree = model::canonical(&Tree::new());
        let tree_hash = model::sha256_hex(&tree);
        let first = CommitRecord {
            creation_date: now,
            generation: 1,
            message: REPOSITORY_CREATED.to_owned(),
            metadata: Metadata::new(),
            parents: Vec::new(),
            tree: tree_hash.clone(),
            version: FORMAT_VERSION,
        };
        let (bytes, id) = first.encode();
        let state = BranchState {
            head: id.clone(),
            staging: new_token(),
        };
        fsio::write_atomic(
            &self.tmp,
            &content_path(&dir.join("trees"), &tree_hash),
            &tree,
        )?;
        fsio::write_atomic(&self.tmp, &content_path(&dir.join("commits"), &id), &bytes)?;
        fsio::write_atomic(
            &self.tmp,
            &dir.join("branches").join(default_branch),
            &model::canonical(&state),
        )?;
        fsio::write_atomic(
            &self.tmp,
            &dir.join("repository.json"),
            &model::canonical(&record),
        )?;
        to_commit(&id, &first)
    }

    /// The repositories, by name.
    pub fn repositories(&self) -> Result<Vec<String>> {
        let dir = self.root.join("repositories");
        let mut names = Vec::new();
        for entry in read_dir(&dir)? {
            let name = entry.file_name();
            if let Some(name) = name.to_str()
                && model::is_repository_name(name)
                && entry.path().join("repository.json").exists()
            {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    // ----- paths

    fn repository_dir(&self, repository: &str) -> PathBuf {
        self.root.join("repositories").join(repository)
    }

    fn object_path(&self, checksum: &str) -> PathBuf {
        content_path(&self.root.join("objects"), checksum)
    }

    fn branch_path(&self, repository: &str, branch: &str) -> PathBuf {
        self.repository_dir(repository)
            .join("branches")
            .join(branch)
    }

    fn staging_path(&self, repository: &str, token: &str) -> PathBuf {
        self.repository_dir(repository).join("staging").join(token)
    }

    // ----- reading

    /// `RepositoryNotFound` unless the repository exists; `Invalid` for a bad name.
    fn check_repository(&self, repository: &str) -> Result<()> {
        check_repository_name(repository)?;
        if self
            .repository_dir(repository)
            .join("repository.json")
            .exists()
        {
            Ok(())
        } else {
            Err(StoreError::RepositoryNotFound(repository.to_owned()))
        }
    }

    fn repository_record(&self, repository: &str) -> Result<RepositoryRecord> {
        let path = self.repository_dir(repository).join("repository.json");
        let bytes = fsio::read_optional(&path)?
            .ok_or_else(|| StoreError::RepositoryNotFound(repository.to_owned()))?;
        parse(&path, &bytes)
    }

    fn read_branch(&self, repository: &str, branch: &str) -> Result<Option<BranchState>> {
        let path = self.branch_path(repository, branch);
        match fsio::read_optional(&path)? {
            None => Ok(None),
            Some(bytes) => {
                let state: BranchState = parse(&path, &bytes)?;
                if !is_commit_id(&state.head) {
                    return Err(malformed(&path, "the head is not a commit id"));
                }
                if !is_token(&state.staging) {
                    return Err(malformed(&path, "the staging token is not 32 hex digits"));
                }
                Ok(Some(state))
            }
        }
    }

    /// The commit `id` of `repository`, verified against its id.
    fn read_commit(&self, repository: &str, id: &str) -> Result<Arc<CommitRecord>> {
        let key = (repository.to_owned(), id.to_owned());
        if let Some(record) = lock_cache(&self.commits).get(&key) {
            return Ok(record.clone());
        }
        if !is_commit_id(id) {
            return Err(commit_not_found(repository, id));
        }
        let path = content_path(&self.repository_dir(repository).join("commits"), id);
        let bytes = fsio::read_optional(&path)?.ok_or_else(|| commit_not_found(repository, id))?;
        if model::sha256_hex(&bytes) != id {
            return Err(malformed(&path, "its SHA-256 is not its name"));
        }
        let record: Arc<CommitRecord> = Arc::new(parse(&path, &bytes)?);
        let mut cache = lock_cache(&self.commits);
        if cache.len() >= COMMIT_CACHE {
            cache.clear();
        }
        cache.insert(key, record.clone());
        Ok(record)
    }

    fn read_tree(&self, repository: &str, hash: &str) -> Result<Arc<Tree>> {
        if let Some(tree) = lock_cache(&self.trees).get(hash) {
            return Ok(tree.clone());
        }
        let path = content_path(&self.repository_dir(repository).join("trees"), hash);
        let bytes = fsio::read_optional(&path)?
            .ok_or_else(|| malformed(&path, "the tree file is missing"))?;
        if model::sha256_hex(&bytes) != hash {
            return Err(malformed(&path, "its SHA-256 is not its name"));
        }
        let tree = Arc::new(parse::<Tree>(&path, &bytes)?);
        self.cache_tree(hash, tree.clone());
        Ok(tree)
    }

    fn cache_tree(&self, hash: &str, tree: Arc<Tree>) {
        let mut cache = lock_cache(&self.trees);
        if cache.len() >= TREE_CACHE
            && let Some(old) = cache.keys().next().cloned()
        {
            cache.remove(&old);
        }
        cache.insert(hash.to_owned(), tree);
    }

    fn commit_tree(&self, repository: &str, commit: &CommitId) -> Result<Arc<Tree>> {
        self.check_repository(repository)?;
        let record = self.read_commit(repository, commit.as_str())?;
        self.read_tree(repository, &record.tree)
    }

    /// The staging log `token`: its lines in order. A line that does not parse is the torn
    /// last write of a crashed process (never acknowledged) and is skipped.
    fn read_staged(&self, repository: &str, token: &str) -> Result<Vec<Staged>> {
        let path = self.staging_path(repository, token);
        let Some(bytes) = fsio::read_optional(&path)? else {
            return Ok(Vec::new());
        };
        Ok(bytes
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice::<Staged>(line).ok())
            .collect())
    }

    /// The commit a reference names: a full commit id of the repository, else a branch's head.
    fn resolve(&self, repository: &str, reference: &str) -> Result<String> {
        self.check_repository(repository)?;
        if is_commit_id(reference) {
            match self.read_commit(repository, reference) {
                Ok(_) => return Ok(reference.to_owned()),
                Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        if model::is_branch_name(reference)
            && let Some(state) = self.read_branch(repository, reference)?
        {
            return Ok(state.head);
        }
        Err(StoreError::NotFound(format!(
            "ref {reference} in repository {repository}"
        )))
    }

    // ----- writing

    fn write_tree(&self, repository: &str, tree: &Tree) -> Result<String> {
        let bytes = model::canonical(tree);
        let hash = model::sha256_hex(&bytes);
        let path = content_path(&self.repository_dir(repository).join("trees"), &hash);
        fsio::write_once(&self.tmp, &path, &bytes)?;
        Ok(hash)
    }

    fn write_commit(&self, repository: &str, record: &CommitRecord) -> Result<String> {
        let (bytes, id) = record.encode();
        let path = content_path(&self.repository_dir(repository).join("commits"), &id);
        fsio::write_once(&self.tmp, &path, &bytes)?;
        Ok(id)
    }

    /// Copies file `source` to a temporary file, hashing it on the way (one read), and fsyncs
    /// it when `sync`. Returns its entry and, unless that content is stored already, the
    /// temporary file to rename into `objects/`.
    fn copy_in(
        &self,
        source: &Path,
        buffer: &mut [u8],
        sync: bool,
    ) -> Result<(Entry, Option<Pending>)> {
        let mut input = File::open(source)
            .map_err(|e| StoreError::io(format!("reading {}", source.display()), e))?;
        let (temp, file) = Temp::create(&self.tmp)?;
        let mut output = Tracked {
            inner: file,
            failed: false,
        };
        let (size, checksum) =
            fsio::copy_hashing(&mut input, &mut output, buffer).map_err(|e| {
                if output.failed {
                    StoreError::io(format!("writing {}", temp.path().display()), e)
                } else {
                    StoreError::io(format!("reading {}", source.display()), e)
                }
            })?;
        let entry = Entry { checksum, size };
        let dest = self.object_path(&entry.checksum);
        if fs::metadata(&dest).is_ok_and(|m| m.len() == size) {
            return Ok((entry, None)); // stored already; the temporary file is removed
        }
        if sync {
            output
                .inner
                .sync_all()
                .map_err(|e| StoreError::io(format!("syncing {}", temp.path().display()), e))?;
        }
        Ok((entry, Some(Pending { temp, dest })))
    }

    /// Makes the new objects' content durable, renames each to its name, and makes the renames
    /// durable: an fsync of each file and directory, or (Linux, many objects) one syncfs(2)
    /// before the renames and one after.
    fn store_objects(&self, pending: Vec<Pending>) -> Result<()> {
        #[cfg(target_os = "linux")]
        let bulk = pending.len() >= SYNCFS_FROM;
        #[cfg(not(target_os = "linux"))]
        let bulk = false;
        #[cfg(target_os = "linux")]
        if bulk {
            fsio::sync_filesystem(&self.tmp)?;
        }
        if !bulk {
            parallel::try_for_each(&pending, SYNC_THREADS, |_, p| {
                fsio::sync_file(p.temp.path())
            })?;
        }
        let mut dirs = BTreeSet::new();
        for Pending { temp, dest } in pending {
            temp.persist(&dest)?;
            dirs.insert(fsio::parent(&dest).to_owned());
        }
        #[cfg(target_os = "linux")]
        if bulk {
            return fsio::sync_filesystem(&self.tmp);
        }
        let dirs: Vec<_> = dirs.into_iter().collect();
        parallel::try_for_each(&dirs, SYNC_THREADS, |_, dir| fsio::sync_dir(dir))?;
        Ok(())
    }

    /// Copies object `entry` to `dest`, verifying it against `entry` and `object`.
    fn copy_out(
        &self,
        entry: &Entry,
        object: &ObjectInfo,
        dest: &Path,
        buffer: &mut [u8],
    ) -> Result<()> {
        let source = self.object_path(&entry.checksum);
        let mut input = match File::open(&source) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::Corrupt {
                    path: object.path.clone(),
                    detail: format!("the object file {} is missing", source.display()),
                });
            }
            Err(e) => {
                return Err(StoreError::io(format!("reading {}", source.display()), e));
            }
        };
        let file = File::create(dest)
            .map_err(|e| StoreError::io(format!("creating {}", dest.display()), e))?;
        let mut output = Tracked {
            inner: file,
            failed: false,
        };
        let (size, checksum) =
            fsio::copy_hashing(&mut input, &mut output, buffer).map_err(|e| {
                if output.failed {
                    StoreError::io(format!("writing {}", dest.display()), e)
                } else {
                    StoreError::io(format!("reading {}", source.display()), e)
                }
            })?;
        if size != entry.size || checksum != entry.checksum {
            return Err(StoreError::Corrupt {
                path: object.path.clone(),
                detail: format!(
                    "the object file {} holds {size} bytes with SHA-256 {checksum}, not {} \
                     bytes with SHA-256 {}",
                    source.display(),
                    entry.size,
                    entry.checksum
                ),
            });
        }
        if size != object.size {
            return Err(StoreError::Corrupt {
                path: object.path.clone(),
                detail: format!("{size} bytes, expected {}", object.size),
            });
        }
        if Checksum::Sha256.recognises(&object.checksum) && checksum != object.checksum {
            return Err(StoreError::Corrupt {
                path: object.path.clone(),
                detail: format!("SHA-256 {checksum}, expected {}", object.checksum),
            });
        }
        Ok(())
    }

    /// Appends `change` to staging log `token` and fsyncs it (the branch's lock is held). A log
    /// whose last line was torn by a crash gets a newline first, so the torn line stays alone.
    fn append_staged(&self, repository: &str, token: &str, change: &Staged) -> Result<()> {
        let path = self.staging_path(repository, token);
        let context = |e| StoreError::io(format!("appending to {}", path.display()), e);
        let open = || {
            OpenOptions::new()
                .create(true)
                .append(true)
                .read(true)
                .open(&path)
        };
        let mut file = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fsio::create_dir_durably(fsio::parent(&path))?;
                open()
            }
            other => other,
        }
        .map_err(context)?;
        let len = file.metadata().map_err(context)?.len();
        let mut line = Vec::new();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::End(-1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(context)?;
            if last[0] != b'\n' {
                line.push(b'\n');
            }
        }
        line.extend(model::canonical(change));
        line.push(b'\n');
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .map_err(context)?;
        if len == 0 {
            fsio::sync_dir(fsio::parent(&path))?;
        }
        Ok(())
    }

    // ----- the compare-and-swap

    fn lock_branch(&self, repository: &str, branch: &str) -> Result<BranchLock> {
        let path = self.repository_dir(repository).join("locks").join(branch);
        fsio::lock(&path).map(BranchLock)
    }

    /// Runs `update` under `branch`'s lock with its current state (`None`: no such branch)
    /// and applies the [`Action`] it returns before the lock is released.
    fn update_branch<T>(
        &self,
        repository: &str,
        branch: &str,
        update: impl FnOnce(Option<BranchState>) -> Result<(Action, T)>,
    ) -> Result<T> {
        let lock = self.lock_branch(repository, branch)?;
        self.update_locked(&lock, repository, branch, update)
    }

    /// [`Self::update_branch`] with the lock already held.
    fn update_locked<T>(
        &self,
        _lock: &BranchLock,
        repository: &str,
        branch: &str,
        update: impl FnOnce(Option<BranchState>) -> Result<(Action, T)>,
    ) -> Result<T> {
        let old = self.read_branch(repository, branch)?;
        let old_token = old.as_ref().map(|state| state.staging.clone());
        let (action, value) = update(old)?;
        if let Action::Set(state) = action {
            let path = self.branch_path(repository, branch);
            fsio::write_atomic(&self.tmp, &path, &model::canonical(&state))?;
            if let Some(old_token) = old_token
                && old_token != state.staging
            {
                let _ = fs::remove_file(self.staging_path(repository, &old_token));
            }
        }
        Ok(value)
    }

    /// Under `branch`'s lock, commits the tree `tree(head's tree, staged changes)` onto the
    /// branch's head, which moves to the new commit with a fresh staging area. `None`, and
    /// nothing written, when that tree is the head's.
    fn commit_onto_head(
        &self,
        repository: &str,
        branch: &str,
        message: &str,
        metadata: &Metadata,
        tree: impl FnOnce(&Tree, &[Staged]) -> Result<Tree>,
    ) -> Result<Option<Commit>> {
        self.update_branch(repository, branch, |state| {
            let state = state.ok_or_else(|| branch_not_found(repository, branch))?;
            let head = self.read_commit(repository, &state.head)?;
            let head_tree = self.read_tree(repository, &head.tree)?;
            let new_tree = tree(&head_tree, &self.read_staged(repository, &state.staging)?)?;
            if new_tree == *head_tree {
                return Ok((Action::Keep, None));
            }
            let tree_hash = self.write_tree(repository, &new_tree)?;
            let record = CommitRecord {
                creation_date: now(),
                generation: head.generation + 1,
                message: message.to_owned(),
                metadata: metadata.clone(),
                parents: vec![state.head.clone()],
                tree: tree_hash.clone(),
                version: FORMAT_VERSION,
            };
            let id = self.write_commit(repository, &record)?;
            self.cache_tree(&tree_hash, Arc::new(new_tree));
            let commit = to_commit(&id, &record)?;
            Ok((
                Action::Set(BranchState {
                    head: id,
                    staging: new_token(),
                }),
                Some(commit),
            ))
        })
    }

    /// Whether branch state `state` has staged changes that change a path.
    fn is_dirty(&self, repository: &str, state: &BranchState) -> Result<bool> {
        let staged = self.read_staged(repository, &state.staging)?;
        if staged.is_empty() {
            return Ok(false);
        }
        let head = self.read_commit(repository, &state.head)?;
        let tree = self.read_tree(repository, &head.tree)?;
        Ok(model::is_dirty(&tree, &staged))
    }

    // ----- merge

    /// The merge of commit `source` into destination head `destination`, written as a commit
    /// but not yet a head.
    fn plan_merge(
        &self,
        repository: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Planned> {
        let base = model::merge_base(source, destination, |id| {
            let record = self.read_commit(repository, id)?;
            Ok::<_, StoreError>((record.generation, record.parents.clone()))
        })?
        .ok_or_else(|| {
            StoreError::Unavailable(format!(
                "commits {source} and {destination} of repository {repository} have no \
                 common ancestor"
            ))
        })?;
        let (source_commit, destination_commit, base_commit) = (
            self.read_commit(repository, source)?,
            self.read_commit(repository, destination)?,
            self.read_commit(repository, &base)?,
        );
        if source_commit.tree == base_commit.tree {
            return Ok(Planned::NoChanges);
        }
        let tree_hash = if destination_commit.tree == base_commit.tree {
            source_commit.tree.clone()
        } else {
            let merged = model::merge_trees(
                &*self.read_tree(repository, &base_commit.tree)?,
                &*self.read_tree(repository, &source_commit.tree)?,
                &*self.read_tree(repository, &destination_commit.tree)?,
            );
            match merged {
                Some(tree) => self.write_tree(repository, &tree)?,
                None => return Ok(Planned::Conflict),
            }
        };
        let mut metadata = metadata.clone();
        metadata.insert(MERGE_STRATEGY_KEY.to_owned(), "default".to_owned());
        let record = CommitRecord {
            creation_date: now(),
            generation: source_commit.generation.max(destination_commit.generation) + 1,
            message: message.to_owned(),
            metadata,
            parents: vec![destination.to_owned(), source.to_owned()],
            tree: tree_hash,
            version: FORMAT_VERSION,
        };
        let id = self.write_commit(repository, &record)?;
        Ok(Planned::Commit(id))
    }
}

/// A new object's content in a temporary file, to be renamed to `dest`.
struct Pending {
    temp: Temp,
    dest: PathBuf,
}

/// A merge computed against a destination head.
enum Planned {
    NoChanges,
    Conflict,
    Commit(String),
}

impl Store for LocalStore {
    fn describe(&self) -> String {
        format!("local store at {}", self.root.display())
    }

    fn checksum(&self) -> Checksum {
        Checksum::Sha256
    }

    fn get_commit(&self, repository: &str, reference: &str) -> Result<Commit> {
        let id = self.resolve(repository, reference)?;
        let record = self.read_commit(repository, &id)?;
        to_commit(&id, &record)
    }

    fn log(&self, repository: &str, reference: &str, limit: usize) -> Result<Vec<Commit>> {
        let start = self.resolve(repository, reference)?;
        let mut seen = HashSet::from([start.clone()]);
        let first = self.read_commit(repository, &start)?;
        let mut queue = BinaryHeap::from([(first.creation_date, start)]);
        let mut log = Vec::new();
        while log.len() < limit
            && let Some((_, id)) = queue.pop()
        {
            let record = self.read_commit(repository, &id)?;
            for parent in &record.parents {
                if seen.insert(parent.clone()) {
                    let date = self.read_commit(repository, parent)?.creation_date;
                    queue.push((date, parent.clone()));
                }
            }
            log.push(to_commit(&id, &record)?);
        }
        Ok(log)
    }

    fn list_branches(&self, repository: &str) -> Result<Vec<(String, CommitId)>> {
        self.check_repository(repository)?;
        let dir = self.repository_dir(repository).join("branches");
        let mut branches = Vec::new();
        for entry in read_dir(&dir)? {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if !model::is_branch_name(&name) {
                continue;
            }
            if let Some(state) = self.read_branch(repository, &name)? {
                branches.push((name, commit_id(&state.head)?));
            }
        }
        branches.sort();
        Ok(branches)
    }

    fn list_objects(
        &self,
        repository: &str,
        commit: &CommitId,
        prefix: &str,
    ) -> Result<Vec<ObjectInfo>> {
        let tree = self.commit_tree(repository, commit)?;
        Ok(tree
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(path, _)| path.starts_with(prefix))
            .map(|(path, entry)| ObjectInfo {
                path: path.clone(),
                size: entry.size,
                checksum: entry.checksum.clone(),
            })
            .collect())
    }

    fn download(
        &self,
        repository: &str,
        commit: &CommitId,
        object: &ObjectInfo,
        dest: &Path,
    ) -> Result<()> {
        let tree = self.commit_tree(repository, commit)?;
        let entry = tree.get(&object.path).ok_or_else(|| {
            StoreError::NotFound(format!(
                "object {} in commit {} of repository {repository}",
                object.path,
                commit.short()
            ))
        })?;
        let mut buffer = vec![0; fsio::BUFFER];
        self.copy_out(entry, object, dest, &mut buffer)
    }

    fn create_branch(&self, repository: &str, name: &str, source: &CommitId) -> Result<()> {
        self.check_repository(repository)?;
        check_branch_name(name)?;
        // lakeFS checks the source before the name.
        self.read_commit(repository, source.as_str())?;
        if is_commit_id(name) && self.read_commit(repository, name).is_ok() {
            return Err(StoreError::AlreadyExists(format!(
                "commit {name} in repository {repository}"
            )));
        }
        self.update_branch(repository, name, |state| {
            if state.is_some() {
                return Err(StoreError::AlreadyExists(format!(
                    "branch {name} in repository {repository}"
                )));
            }
            Ok((
                Action::Set(BranchState {
                    head: source.as_str().to_owned(),
                    staging: new_token(),
                }),
                (),
            ))
        })
    }

    fn delete_branch(&self, repository: &str, name: &str) -> Result<()> {
        self.check_repository(repository)?;
        check_branch_name(name)?;
        if self.repository_record(repository)?.default_branch == name {
            return Err(StoreError::Invalid(format!(
                "cannot delete repository default branch {name} of repository {repository}"
            )));
        }
        let _lock = self.lock_branch(repository, name)?;
        let state = self
            .read_branch(repository, name)?
            .ok_or_else(|| branch_not_found(repository, name))?;
        let path = self.branch_path(repository, name);
        fs::remove_file(&path)
            .map_err(|e| StoreError::io(format!("removing {}", path.display()), e))?;
        fsio::sync_dir(fsio::parent(&path))?;
        let _ = fs::remove_file(self.staging_path(repository, &state.staging));
        Ok(())
    }

    fn upload(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
        source: &Path,
    ) -> Result<ObjectInfo> {
        self.check_repository(repository)?;
        check_branch_name(branch)?;
        check_object_path(path)?;
        if self.read_branch(repository, branch)?.is_none() {
            return Err(branch_not_found(repository, branch));
        }
        let mut buffer = vec![0; fsio::BUFFER];
        let (entry, new) = self.copy_in(source, &mut buffer, true)?;
        if let Some(Pending { temp, dest }) = new {
            temp.persist(&dest)?;
            fsio::sync_dir(fsio::parent(&dest))?;
        }
        let change = Staged {
            path: path.to_owned(),
            value: Some(entry.clone()),
        };
        self.update_branch(repository, branch, |state| {
            let state = state.ok_or_else(|| branch_not_found(repository, branch))?;
            self.append_staged(repository, &state.staging, &change)?;
            Ok((Action::Keep, ()))
        })?;
        Ok(ObjectInfo {
            path: path.to_owned(),
            size: entry.size,
            checksum: entry.checksum,
        })
    }

    fn delete_object(&self, repository: &str, branch: &str, path: &str) -> Result<()> {
        self.check_repository(repository)?;
        check_branch_name(branch)?;
        check_object_path(path)?;
        self.update_branch(repository, branch, |state| {
            let state = state.ok_or_else(|| branch_not_found(repository, branch))?;
            let staged = self.read_staged(repository, &state.staging)?;
            let exists = match staged.iter().rev().find(|change| change.path == path) {
                Some(change) => change.value.is_some(),
                None => {
                    let head = self.read_commit(repository, &state.head)?;
                    self.read_tree(repository, &head.tree)?.contains_key(path)
                }
            };
            if exists {
                let change = Staged {
                    path: path.to_owned(),
                    value: None,
                };
                self.append_staged(repository, &state.staging, &change)?;
            }
            Ok((Action::Keep, ()))
        })
    }

    /// The fast way, with [`crate::store::import_by_upload`]'s result: each file is read
    /// once, hashed while it is copied to a temporary file (on every core); the new objects are
    /// made durable together and renamed into `objects/` (see the [module](crate::local));
    /// then, under the branch's lock, the head's tree outside `prefix` and the files under it
    /// become the new tree and commit. The staging area is not used, so a branch with staged
    /// changes is refused (`Invalid`) rather than committed along.
    ///
    /// Missing repositories and branches are not created (lakeFS does not either): see
    /// [`LocalStore::create_repository`] and [`Store::create_branch`].
    fn import_tree_reporting(
        &self,
        repository: &str,
        branch: &str,
        dir: &Path,
        prefix: &str,
        message: &str,
        metadata: &Metadata,
        progress: &dyn crate::store::Progress,
    ) -> Result<Option<Commit>> {
        let files = crate::store::regular_files(dir)?;
        self.check_repository(repository)?;
        check_branch_name(branch)?;
        if self.read_branch(repository, branch)?.is_none() {
            return Err(branch_not_found(repository, branch));
        }
        let paths: Vec<String> = files.iter().map(|f| format!("{prefix}{f}")).collect();
        for path in &paths {
            check_object_path(path)?;
        }

        // Copy and hash on every core; then make the new objects durable and rename them, all
        // before a commit names them.
        crate::store::start_progress(dir, &files, progress);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        let copied = parallel::try_map(
            &files,
            threads,
            || vec![0; fsio::BUFFER],
            |buffer, _, relative| {
                let copied = self.copy_in(&dir.join(relative), buffer, false)?;
                progress.file(copied.0.size);
                Ok(copied)
            },
        )?;
        let mut imported = Tree::new();
        let mut pending = Vec::new();
        for (path, (entry, new)) in paths.into_iter().zip(copied) {
            imported.insert(path, entry);
            pending.extend(new);
        }
        self.store_objects(pending)?;

        self.commit_onto_head(repository, branch, message, metadata, |head, staged| {
            if model::is_dirty(head, staged) {
                return Err(dirty());
            }
            Ok(model::replace_prefix(head, prefix, imported))
        })
    }

    fn commit(
        &self,
        repository: &str,
        branch: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Option<Commit>> {
        self.check_repository(repository)?;
        check_branch_name(branch)?;
        self.commit_onto_head(repository, branch, message, metadata, |head, staged| {
            Ok(model::apply_staged(head, staged))
        })
    }

    fn merge(
        &self,
        repository: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Merge> {
        self.check_repository(repository)?;
        check_branch_name(destination)?;
        for attempt in 0..=OPTIMISTIC_MERGE_TRIES {
            // The last try holds the lock from reading the head to moving it, so it cannot lose.
            let held = if attempt == OPTIMISTIC_MERGE_TRIES {
                Some(self.lock_branch(repository, destination)?)
            } else {
                None
            };
            let state = self
                .read_branch(repository, destination)?
                .ok_or_else(|| branch_not_found(repository, destination))?;
            if self.is_dirty(repository, &state)? {
                return Err(dirty());
            }
            let source_id = self.resolve(repository, source)?;
            let id =
                match self.plan_merge(repository, &source_id, &state.head, message, metadata)? {
                    Planned::NoChanges => return Ok(Merge::NoChanges),
                    Planned::Conflict => return Ok(Merge::Conflict),
                    Planned::Commit(id) => id,
                };
            // The compare-and-swap: the head moves to the merge only if it is still the head
            // the merge was computed against and the branch is still clean.
            let swap = |current: Option<BranchState>| {
                let current = current.ok_or_else(|| branch_not_found(repository, destination))?;
                if current.head != state.head {
                    return Ok((Action::Keep, false));
                }
                if self.is_dirty(repository, &current)? {
                    return Err(dirty());
                }
                Ok((
                    Action::Set(BranchState {
                        head: id.clone(),
                        staging: new_token(),
                    }),
                    true,
                ))
            };
            let swapped = match &held {
                Some(lock) => self.update_locked(lock, repository, destination, swap)?,
                None => self.update_branch(repository, destination, swap)?,
            };
            if swapped {
                return Ok(Merge::Merged(commit_id(&id)?));
            }
        }
        Err(StoreError::Unavailable(format!(
            "merge into branch {destination} of repository {repository}: the head kept moving"
        )))
    }

    fn diff(
        &self,
        repository: &str,
        left: &CommitId,
        right: &CommitId,
        prefix: &str,
    ) -> Result<Vec<Change>> {
        let left = self.commit_tree(repository, left)?;
        let right = self.commit_tree(repository, right)?;
        Ok(model::diff_trees(&left, &right, prefix))
    }
}

// ----- helpers

/// `<dir>/<first 2 hex digits>/<hex>`.
fn content_path(dir: &Path, hex: &str) -> PathBuf {
    dir.join(hex.get(..2).unwrap_or("__")).join(hex)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A fresh staging log name, unique across processes (pid, clock, a counter).
fn new_token() -> String {
    let name = fsio::temp_path(Path::new(""));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{}-{nanos}", name.display());
    model::sha256_hex(seed.as_bytes())[..32].to_owned()
}

/// Whether `text` has the form of [`new_token`]'s: 32 lowercase hex digits.
fn is_token(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn to_commit(id: &str, record: &CommitRecord) -> Result<Commit> {
    Ok(Commit {
        id: commit_id(id)?,
        parents: record
            .parents
            .iter()
            .map(|p| commit_id(p))
            .collect::<Result<_>>()?,
        message: record.message.clone(),
        metadata: record.metadata.clone(),
        creation_date: record.creation_date,
    })
}

fn commit_id(id: &str) -> Result<CommitId> {
    CommitId::parse(id).ok_or_else(|| StoreError::Unavailable(format!("{id:?} is not a commit id")))
}

fn check_repository_name(name: &str) -> Result<()> {
    if model::is_repository_name(name) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "repository name {name:?}: must be 3 to 63 lowercase letters, digits and dashes, \
             not starting with a dash"
        )))
    }
}

fn check_branch_name(name: &str) -> Result<()> {
    if model::is_branch_name(name) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "branch name {name:?}: branch id must consist of letters, digits, underscores and \
             dashes, and cannot start with a dash"
        )))
    }
}

fn check_object_path(path: &str) -> Result<()> {
    if model::is_object_path(path) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "object path {:?}: must be 1 to {} bytes",
            path.chars().take(64).collect::<String>(),
            model::MAX_PATH_LEN
        )))
    }
}

fn branch_not_found(repository: &str, branch: &str) -> StoreError {
    StoreError::NotFound(format!("branch {branch} in repository {repository}"))
}

fn commit_not_found(repository: &str, id: &str) -> StoreError {
    StoreError::NotFound(format!("commit {id} in repository {repository}"))
}

/// lakeFS's message, word for word.
fn dirty() -> StoreError {
    StoreError::Invalid("uncommitted changes (dirty branch)".to_owned())
}

fn malformed(path: &Path, detail: &str) -> StoreError {
    StoreError::Unavailable(format!("{} is corrupt: {detail}", path.display()))
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| malformed(path, &e.to_string()))
}

fn lock_cache<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn is_not_empty(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::AlreadyExists
    )
}

fn read_dir(dir: &Path) -> Result<Vec<fs::DirEntry>> {
    let context = |e| StoreError::io(format!("listing {}", dir.display()), e);
    match fs::read_dir(dir) {
        Ok(entries) => entries.collect::<io::Result<Vec<_>>>().map_err(context),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(context(e)),
    }
}
