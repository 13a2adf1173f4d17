//! Moving whole directory trees in and out of a store, on either backend: `perago workspace
//! import` and `export`, and the seeding of test repositories.

use crate::checkout::{self, Checkout, CheckoutError};
use crate::store::{Commit, Metadata, Store, StoreError};
use std::path::Path;

/// How many files move at once.
pub const PARALLEL_TRANSFERS: usize = 8;

/// Makes `prefix` of `branch` exactly the regular files under `dir` (added, replaced, and
/// objects no longer there removed), then commits. `None` when nothing changed. Symbolic
/// links and other special files are refused, naming the first.
pub fn import(
    store: &dyn Store,
    repository: &str,
    branch: &str,
    dir: &Path,
    prefix: &str,
    message: &str,
    metadata: &Metadata,
) -> Result<Option<Commit>, StoreError> {
    let files = regular_files(dir)?;
    let head = store.get_commit(repository, branch)?;
    let existing = store.list_objects(repository, &head.id, prefix)?;
    crate::parallel::try_for_each(&files, PARALLEL_TRANSFERS, |_, relative| {
        store
            .upload(
                repository,
                branch,
                &format!("{prefix}{relative}"),
                &dir.join(relative),
            )
            .map(drop)
    })?;
    let present: std::collections::HashSet<String> =
        files.iter().map(|f| format!("{prefix}{f}")).collect();
    for object in existing.iter().filter(|o| !present.contains(&o.path)) {
        store.delete_object(repository, branch, &object.path)?;
    }
    store.commit(repository, branch, message, metadata)
}

/// Writes `prefix` of commit `reference` (a commit id or a branch) into `dir`, which must not
/// exist yet. Returns the commit and the number of files written.
pub fn export(
    store: &dyn Store,
    repository: &str,
    reference: &str,
    prefix: &str,
    dir: &Path,
) -> Result<(Commit, usize), CheckoutError> {
    let commit = store.get_commit(repository, reference)?;
    let checkout: Checkout = checkout::materialise(
        store,
        repository,
        commit.id.as_str(),
        prefix,
        dir,
        PARALLEL_TRANSFERS,
    )?;
    let files = checkout.file_count();
    checkout.keep();
    Ok((commit, files))
}

/// The `/`-separated paths of the regular files under `dir`, sorted.
fn regular_files(dir: &Path) -> Result<Vec<String>, StoreError> {
    let cannot = |path: &Path, e: std::io::Error| {
        StoreError::io(format!("cannot read {}", path.display()), e)
    };
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
    {
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| dir.into());
            let io = e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("directory loop"));
            cannot(&path, io)
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
        files.push(checkout::relative_name(dir, entry.path())?);
    }
    Ok(files)
}
