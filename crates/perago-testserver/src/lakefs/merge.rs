//! The 3-way merge (`docs/src/reference/lakefs.md` §3.16, its per-path table) and the diffs built on
//! the same comparisons (§3.14 two-dot and three-dot, §3.15 uncommitted).

use super::refs::View;
use super::state::{Entry, Staging, Tree, same};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

/// `Merge.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Absent or `""`: a conflict fails the merge.
    Default,
    DestWins,
    SourceWins,
}

impl Strategy {
    /// `None` for an unknown name.
    pub(crate) fn parse(name: &str) -> Option<Strategy> {
        match name {
            "" => Some(Strategy::Default),
            "dest-wins" => Some(Strategy::DestWins),
            "source-wins" => Some(Strategy::SourceWins),
            _ => None,
        }
    }

    /// The `.lakefs.merge.strategy` metadata value.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Strategy::Default => "default",
            Strategy::DestWins => "dest-wins",
            Strategy::SourceWins => "source-wins",
        }
    }
}

/// A merge found a path changed differently on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict;

/// Every path of `base` and `source` (paths only in the destination keep
/// their value whatever happens: table rows 2 and 7).
fn base_and_source_paths<'a>(base: &'a Tree, source: &'a Tree) -> BTreeSet<&'a str> {
    base.keys()
        .chain(source.keys())
        .map(String::as_str)
        .collect()
}

/// The merged tree per the table of §3.16: where the source did not change
/// a path the destination's value stays, where only the source changed it
/// the source's value is taken, the same change on both sides is no
/// conflict, and different changes are a conflict the strategy resolves.
pub(crate) fn merge_trees(
    base: &Tree,
    source: &Tree,
    dest: &Tree,
    strategy: Strategy,
) -> Result<Tree, Conflict> {
    let mut merged = dest.clone();
    for path in base_and_source_paths(base, source) {
        let (b, s, d) = (base.get(path), source.get(path), dest.get(path));
        let take_source = if same(s, b) || same(s, d) {
            false
        } else if same(d, b) {
            true
        } else {
            match strategy {
                Strategy::Default => return Err(Conflict),
                Strategy::DestWins => false,
                Strategy::SourceWins => true,
            }
        };
        if take_source {
            match s {
                Some(entry) => merged.insert(path.to_owned(), Arc::clone(entry)),
                None => merged.remove(path),
            };
        }
    }
    Ok(merged)
}

/// `Diff.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffKind {
    Added,
    Removed,
    Changed,
    Conflict,
}

impl DiffKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            DiffKind::Added => "added",
            DiffKind::Removed => "removed",
            DiffKind::Changed => "changed",
            DiffKind::Conflict => "conflict",
        }
    }
}

/// One object row of a diff.
#[derive(Debug, Clone)]
pub(crate) struct DiffRow {
    pub(crate) path: String,
    pub(crate) kind: DiffKind,
    pub(crate) size: u64,
    /// The right side's value (absent for removals).
    pub(crate) right: Option<Arc<Entry>>,
}

fn row(path: &str, left: Option<&Arc<Entry>>, right: Option<&Arc<Entry>>) -> Option<DiffRow> {
    let (kind, size) = match (left, right) {
        (None, None) => return None,
        (Some(_), Some(_)) if same(left, right) => return None,
        (None, Some(r)) => (DiffKind::Added, r.size),
        (Some(l), None) => (DiffKind::Removed, l.size),
        (Some(_), Some(r)) => (DiffKind::Changed, r.size),
    };
    Some(DiffRow {
        path: path.to_owned(),
        kind,
        size,
        right: right.cloned(),
    })
}

/// Two-dot: `left` against `right` directly, by identity (§3.14).
pub(crate) fn two_dot(left: View<'_>, right: View<'_>) -> Vec<DiffRow> {
    let mut rows = Vec::new();
    let mut l = left.range(std::ops::Bound::Unbounded).peekable();
    let mut r = right.range(std::ops::Bound::Unbounded).peekable();
    loop {
        let order = match (l.peek(), r.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((lp, _)), Some((rp, _))) => lp.cmp(rp),
        };
        let found = match order {
            Ordering::Less => l.next().and_then(|(p, e)| row(p, Some(e), None)),
            Ordering::Greater => r.next().and_then(|(p, e)| row(p, None, Some(e))),
            Ordering::Equal => match (l.next(), r.next()) {
                (Some((p, le)), Some((_, re))) => row(p, Some(le), Some(re)),
                _ => None,
            },
        };
        rows.extend(found);
    }
    rows
}

/// Three-dot: what merging `source` (the right ref) into `dest` (the left)
/// would apply since `base`; paths changed differently on both sides are
/// `conflict` rows, changes made only on the destination are left out.
pub(crate) fn three_dot(base: &Tree, source: &Tree, dest: &Tree) -> Vec<DiffRow> {
    let mut rows = Vec::new();
    for path in base_and_source_paths(base, source) {
        let (b, s, d) = (base.get(path), source.get(path), dest.get(path));
        if same(s, b) || same(s, d) {
            continue;
        }
        let found = if same(d, b) {
            row(path, b, s)
        } else {
            Some(DiffRow {
                path: path.to_owned(),
                kind: DiffKind::Conflict,
                size: s.or(d).map_or(0, |e| e.size),
                right: s.cloned(),
            })
        };
        rows.extend(found);
    }
    rows
}

/// diffBranch: the staged changes against the head (§3.15). Re-staged
/// identical content is no change; deleting a never-committed path does
/// not show; removals have size 0.
pub(crate) fn uncommitted(head: &Tree, staging: &Staging) -> Vec<DiffRow> {
    staging
        .iter()
        .filter_map(|(path, staged)| {
            let mut found = row(path, head.get(path), staged.as_ref())?;
            if found.kind == DiffKind::Removed {
                found.size = 0;
            }
            Some(found)
        })
        .collect()
}
