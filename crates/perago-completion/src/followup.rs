//! Follow-ups from a `scope_exceeded` refusal (`docs/src/reference/completion-contract.md` §8): a pure function of (parent task id,
//! contract version, split index, split text), so a re-delivered refusal derives the same
//! ids and, with creation skipping ids that exist, never duplicates the split.

use super::CONTRACT_VERSION;
use super::payload::Refusal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// The `origin` of every derived follow-up.
pub const FOLLOWUP_ORIGIN: &str = "scope_exceeded_split";

/// Titles longer than this many code points are cut.
pub const TITLE_MAX_CHARS: usize = 80;

/// A follow-up task to create, one per `proposed_split` item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FollowUpSpec {
    /// `fu-` and 12 lowercase hex digits of SHA-256 (see [`followup_id`]).
    pub id: String,
    /// The refused task.
    pub parent_task_id: String,
    /// The item's 0-based index in `proposed_split`.
    pub split_index: usize,
    /// The item, cut to 80 code points (see [`followup_title`]).
    pub title: String,
    /// The whole item, then where it came from and the refusal's detail, so the follow-up
    /// reads on its own.
    pub description: String,
    /// Always [`FOLLOWUP_ORIGIN`].
    pub origin: String,
    /// `worker-completion/v1`.
    pub contract_version: String,
}

/// The follow-ups of a refusal, in split order; other kinds derive none.
pub fn derive_followups(parent_task_id: &str, refusal: &Refusal) -> Vec<FollowUpSpec> {
    let Refusal::ScopeExceeded {
        detail,
        proposed_split,
    } = refusal
    else {
        return Vec::new();
    };
    proposed_split
        .iter()
        .enumerate()
        .map(|(index, item)| FollowUpSpec {
            id: followup_id(parent_task_id, index, item),
            parent_task_id: parent_task_id.to_owned(),
            split_index: index,
            title: followup_title(item),
            description: format!(
                "{item}\n\nSplit {} of {} from task {parent_task_id} after a scope_exceeded refusal: {detail}",
                index + 1,
                proposed_split.len()
            ),
            origin: FOLLOWUP_ORIGIN.to_owned(),
            contract_version: CONTRACT_VERSION.to_owned(),
        })
        .collect()
}

/// `fu-` + the first 12 hex digits of SHA-256 of `<parent>|worker-completion/v1|<index>|<item>`.
/// The index is in the seed, so equal items get distinct ids; the item is not trimmed.
pub fn followup_id(parent_task_id: &str, index: usize, item: &str) -> String {
    let seed = format!("{parent_task_id}|{CONTRACT_VERSION}|{index}|{item}");
    let digest = Sha256::digest(seed.as_bytes());
    let mut id = String::from("fu-");
    for byte in digest.iter().take(6) {
        // Writing to a String cannot fail.
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// The item itself when at most 80 code points, else its first 77 and `...`.
pub fn followup_title(item: &str) -> String {
    if item.chars().count() <= TITLE_MAX_CHARS {
        return item.to_owned();
    }
    let mut title: String = item.chars().take(TITLE_MAX_CHARS - 3).collect();
    title.push_str("...");
    title
}
