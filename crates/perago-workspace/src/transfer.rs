//! Moving whole directory trees in and out of a store, on either backend: `perago workspace
//! import` and `export`, and the seeding of test repositories.

use crate::checkout::{self, Checkout, CheckoutError};
use crate::store::{Commit, Metadata, NoProgress, Progress, Store, StoreError};
use std::path::Path;

pub use crate::store::PARALLEL_TRANSFERS;

/// Makes `prefix` of `branch` exactly the regular files under `dir` (added, replaced, and
/// objects no longer there removed), then commits: [`Store::import_tree`], the fast way where
/// the store has one. `None` when nothing changed. Symbolic links and other special files are
/// refused, naming the first.
pub fn import(
    store: &dyn Store,
    repository: &str,
    branch: &str,
    dir: &Path,
    prefix: &str,
    message: &str,
    metadata: &Metadata,
) -> Result<Option<Commit>, StoreError> {
    store.import_tree(repository, branch, dir, prefix, message, metadata)
}

/// [`import`], telling `progress` the files and bytes to store, then each file once stored.
#[allow(clippy::too_many_arguments)]
pub fn import_reporting(
    store: &dyn Store,
    repository: &str,
    branch: &str,
    dir: &Path,
    prefix: &str,
    message: &str,
    metadata: &Metadata,
    progress: &dyn Progress,
) -> Result<Option<Commit>, StoreError> {
    store.import_tree_reporting(repository, branch, dir, prefix, message, metadata, progress)
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
    export_reporting(store, repository, reference, prefix, dir, &NoProgress)
}

/// [`export`], telling `progress` the objects and bytes to write, then each object once
/// written.
pub fn export_reporting(
    store: &dyn Store,
    repository: &str,
    reference: &str,
    prefix: &str,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<(Commit, usize), CheckoutError> {
    let commit = store.get_commit(repository, reference)?;
    let checkout: Checkout = checkout::materialise_reporting(
        store,
        repository,
        commit.id.as_str(),
        prefix,
        dir,
        PARALLEL_TRANSFERS,
        progress,
    )?;
    let files = checkout.file_count();
    checkout.keep();
    Ok((commit, files))
}
