//! lakeFS's JSON bodies (`docs/src/reference/lakefs.md` §2): the fields this client reads or sends. Unknown fields are
//! ignored.

use crate::store::Metadata;
use serde::{Deserialize, Serialize};

/// `Pagination`.
#[derive(Debug, Deserialize)]
pub(super) struct Pagination {
    pub has_more: bool,
    #[serde(default)]
    pub next_offset: String,
}

/// `RefList`, `CommitList`, `ObjectStatsList`, `DiffList`.
#[derive(Debug, Deserialize)]
pub(super) struct Page<T> {
    pub pagination: Pagination,
    pub results: Vec<T>,
}

/// `Ref`: a branch and its head.
#[derive(Debug, Deserialize)]
pub(super) struct Ref {
    pub id: String,
    pub commit_id: String,
}

/// `Commit`.
#[derive(Debug, Deserialize)]
pub(super) struct Commit {
    pub id: String,
    #[serde(default)]
    pub parents: Vec<String>,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub metadata: Option<Metadata>,
    pub creation_date: i64,
}

/// `ObjectStats`.
#[derive(Debug, Deserialize)]
pub(super) struct ObjectStats {
    pub path: String,
    #[serde(default)]
    pub path_type: String,
    #[serde(default)]
    pub checksum: String,
    pub size_bytes: Option<i64>,
}

/// `Diff`.
#[derive(Debug, Deserialize)]
pub(super) struct Diff {
    #[serde(rename = "type")]
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub path_type: String,
}

/// `MergeResult`.
#[derive(Debug, Deserialize)]
pub(super) struct MergeResult {
    #[serde(default)]
    pub reference: String,
}

/// `BranchCreation`.
#[derive(Debug, Serialize)]
pub(super) struct BranchCreation<'a> {
    pub name: &'a str,
    pub source: &'a str,
}

/// `CommitCreation` (never `allow_empty`: spec §6.6), and `Merge` (no strategy, no squash).
#[derive(Debug, Serialize)]
pub(super) struct MessageAndMetadata<'a> {
    pub message: &'a str,
    pub metadata: &'a Metadata,
}
