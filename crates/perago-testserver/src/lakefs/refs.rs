//! Ref expressions (`docs/src/reference/lakefs.md` §1.7), read views (a commit, or a branch with its
//! staging area on top), merge bases and the commit log's walk (§3.17).

use super::state::{Commit, Entry, Repository, Staging, Tree};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, HashSet};
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::Arc;

/// Why a ref did not resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefError {
    /// Malformed: whitespace, a bad modifier, `@`/`$` misused, `^N` past the
    /// parents (400 where the operation maps it).
    Invalid,
    /// No such commit, branch, tag or unique prefix; `~` past the root (404).
    NotFound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    /// `~N`: the N-th first-parent ancestor.
    Tilde(u32),
    /// `^N`: the N-th parent (`^0` is the commit itself).
    Caret(u32),
    /// `@`: a branch's committed head.
    At,
    /// `$`: a branch with its staging area.
    Dollar,
}

/// Splits `<base><modifier>*` (§1.7).
fn parse(reference: &str) -> Result<(&str, Vec<Modifier>), RefError> {
    if reference.is_empty() || reference.chars().any(char::is_whitespace) {
        return Err(RefError::Invalid);
    }
    let split = reference
        .find(['~', '^', '@', '$'])
        .unwrap_or(reference.len());
    let (base, mut rest) = reference.split_at(split);
    if base.is_empty() {
        return Err(RefError::Invalid);
    }
    let mut modifiers = Vec::new();
    while let Some(first) = rest.chars().next() {
        rest = &rest[1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let count = |digits: &str| -> Result<u32, RefError> {
            if digits.is_empty() {
                Ok(1)
            } else {
                digits.parse().map_err(|_| RefError::Invalid)
            }
        };
        let modifier = match first {
            '~' => Modifier::Tilde(count(&rest[..digits])?),
            '^' => Modifier::Caret(count(&rest[..digits])?),
            '@' | '$' if digits == 0 => {
                if first == '@' {
                    Modifier::At
                } else {
                    Modifier::Dollar
                }
            }
            _ => return Err(RefError::Invalid),
        };
        rest = &rest[digits..];
        modifiers.push(modifier);
    }
    let branch_only = modifiers
        .iter()
        .any(|m| matches!(m, Modifier::At | Modifier::Dollar));
    if branch_only && modifiers.len() > 1 {
        return Err(RefError::Invalid);
    }
    Ok((base, modifiers))
}

/// A resolved ref.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The commit it names (for a branch: its head).
    pub(crate) commit: Arc<Commit>,
    /// The branch whose staging area reads see: set for a bare branch name
    /// and for `branch$`, not for `branch@` or a commit expression.
    pub(crate) staged_branch: Option<String>,
    /// Whether the ref carries `$` (rejected where a commit is required).
    pub(crate) dollar: bool,
}

fn is_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Repository {
    /// Resolves a ref expression (§1.7).
    pub(crate) fn resolve(&self, reference: &str) -> Result<Resolved, RefError> {
        let (base, modifiers) = parse(reference)?;
        let (mut commit, branch) = self.resolve_base(base)?;
        match modifiers.as_slice() {
            [] => {
                return Ok(Resolved {
                    commit,
                    staged_branch: branch,
                    dollar: false,
                });
            }
            [Modifier::At | Modifier::Dollar] if branch.is_none() => {
                return Err(RefError::Invalid);
            }
            [Modifier::At] => {
                return Ok(Resolved {
                    commit,
                    staged_branch: None,
                    dollar: false,
                });
            }
            [Modifier::Dollar] => {
                return Ok(Resolved {
                    commit,
                    staged_branch: branch,
                    dollar: true,
                });
            }
            _ => {}
        }
        for modifier in modifiers {
            match modifier {
                Modifier::Tilde(n) => {
                    for _ in 0..n {
                        let parent = commit.parents.first().ok_or(RefError::NotFound)?;
                        commit = self.commit(parent);
                    }
                }
                Modifier::Caret(0) => {}
                Modifier::Caret(n) => {
                    let index = usize::try_from(n - 1).map_err(|_| RefError::Invalid)?;
                    let parent = commit.parents.get(index).ok_or(RefError::Invalid)?;
                    commit = self.commit(parent);
                }
                Modifier::At | Modifier::Dollar => return Err(RefError::Invalid),
            }
        }
        Ok(Resolved {
            commit,
            staged_branch: None,
            dollar: false,
        })
    }

    /// Full commit id, branch, tag, unique hex prefix, in that order.
    fn resolve_base(&self, base: &str) -> Result<(Arc<Commit>, Option<String>), RefError> {
        if base.len() == 64
            && is_hex(base)
            && let Some(commit) = self.commits.get(base)
        {
            return Ok((Arc::clone(commit), None));
        }
        if let Some(branch) = self.branches.get(base) {
            return Ok((self.head_of(branch), Some(base.to_owned())));
        }
        if let Some(id) = self.tags.get(base) {
            return Ok((self.commit(id), None));
        }
        if (1..64).contains(&base.len()) && is_hex(base) {
            let mut matching = self
                .commits
                .range::<str, _>((Bound::Included(base), Bound::Unbounded))
                .take_while(|(id, _)| id.starts_with(base));
            if let (Some((_, commit)), None) = (matching.next(), matching.next()) {
                return Ok((Arc::clone(commit), None));
            }
        }
        Err(RefError::NotFound)
    }

    /// What reads at `resolved` see.
    pub(crate) fn view<'a>(&'a self, resolved: &'a Resolved) -> View<'a> {
        View {
            tree: &resolved.commit.tree,
            staging: resolved
                .staged_branch
                .as_ref()
                .and_then(|b| self.branches.get(b))
                .map(|b| &b.staging),
        }
    }

    /// Every ancestor of `id`, itself included.
    fn ancestors(&self, id: &str) -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut stack = vec![id.to_owned()];
        while let Some(id) = stack.pop() {
            if seen.insert(id.clone()) {
                stack.extend(self.commit(&id).parents.iter().cloned());
            }
        }
        seen
    }

    /// The best common ancestor of `a` and `b`: among their common ancestors
    /// the one of highest generation (no other common ancestor descends from
    /// it), ties broken by creation date then id.
    pub(crate) fn merge_base(&self, a: &str, b: &str) -> Option<Arc<Commit>> {
        let of_a = self.ancestors(a);
        self.ancestors(b)
            .into_iter()
            .filter(|id| of_a.contains(id))
            .map(|id| self.commit(&id))
            .max_by(|x, y| {
                (x.generation, x.creation_date, &x.id).cmp(&(y.generation, y.creation_date, &y.id))
            })
    }

    /// The log from `start` (§3.17): each reachable commit once, by
    /// creation date descending, ties by id descending.
    pub(crate) fn log(&self, start: &Arc<Commit>, first_parent: bool) -> LogWalk<'_> {
        let mut heap = BinaryHeap::new();
        heap.push(LogItem(Arc::clone(start)));
        let mut seen = HashSet::new();
        seen.insert(start.id.clone());
        LogWalk {
            repository: self,
            heap,
            seen,
            first_parent,
        }
    }
}

/// A commit in the log's priority queue.
#[derive(Debug)]
struct LogItem(Arc<Commit>);

impl PartialEq for LogItem {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for LogItem {}

impl PartialOrd for LogItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LogItem {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0.creation_date, &self.0.id).cmp(&(other.0.creation_date, &other.0.id))
    }
}

/// Iterator over the log, see [`Repository::log`].
#[derive(Debug)]
pub(crate) struct LogWalk<'a> {
    repository: &'a Repository,
    heap: BinaryHeap<LogItem>,
    seen: HashSet<String>,
    first_parent: bool,
}

impl Iterator for LogWalk<'_> {
    type Item = Arc<Commit>;

    fn next(&mut self) -> Option<Arc<Commit>> {
        let LogItem(commit) = self.heap.pop()?;
        let parents = if self.first_parent {
            &commit.parents[..commit.parents.len().min(1)]
        } else {
            &commit.parents[..]
        };
        for parent in parents {
            if self.seen.insert(parent.clone()) {
                self.heap.push(LogItem(self.repository.commit(parent)));
            }
        }
        Some(commit)
    }
}

/// What a read sees: a committed tree, with a branch's staging area on top.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) tree: &'a Tree,
    pub(crate) staging: Option<&'a Staging>,
}

impl<'a> View<'a> {
    /// The value at `path`; a tombstone hides the committed value.
    pub(crate) fn get(&self, path: &str) -> Option<&'a Arc<Entry>> {
        match self.staging.and_then(|s| s.get(path)) {
            Some(staged) => staged.as_ref(),
            None => self.tree.get(path),
        }
    }

    /// The visible values from `start` on, in byte order.
    pub(crate) fn range(&self, start: Bound<&str>) -> ViewIter<'a> {
        let empty: &'a Staging = empty_staging();
        ViewIter {
            tree: self
                .tree
                .range::<str, _>((start, Bound::Unbounded))
                .peekable(),
            staging: self
                .staging
                .unwrap_or(empty)
                .range::<str, _>((start, Bound::Unbounded))
                .peekable(),
        }
    }
}

fn empty_staging() -> &'static Staging {
    static EMPTY: std::sync::OnceLock<Staging> = std::sync::OnceLock::new();
    EMPTY.get_or_init(BTreeMap::new)
}

type Range<'a, V> = Peekable<std::collections::btree_map::Range<'a, String, V>>;

/// Merges a tree and a staging area, see [`View::range`].
#[derive(Debug)]
pub(crate) struct ViewIter<'a> {
    tree: Range<'a, Arc<Entry>>,
    staging: Range<'a, Option<Arc<Entry>>>,
}

impl<'a> Iterator for ViewIter<'a> {
    type Item = (&'a str, &'a Arc<Entry>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let order = match (self.tree.peek(), self.staging.peek()) {
                (None, None) => return None,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((t, _)), Some((s, _))) => t.cmp(s),
            };
            if order == Ordering::Less {
                let (path, entry) = self.tree.next()?;
                return Some((path.as_str(), entry));
            }
            if order == Ordering::Equal {
                self.tree.next();
            }
            let (path, staged) = self.staging.next()?;
            if let Some(entry) = staged {
                return Some((path.as_str(), entry));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_modifiers() {
        assert_eq!(parse("main"), Ok(("main", vec![])));
        assert_eq!(
            parse("main~2^2~"),
            Ok((
                "main",
                vec![Modifier::Tilde(2), Modifier::Caret(2), Modifier::Tilde(1)]
            ))
        );
        assert_eq!(parse("main@"), Ok(("main", vec![Modifier::At])));
        assert_eq!(parse("main$"), Ok(("main", vec![Modifier::Dollar])));
        for bad in [
            "", "a b", "~1", "main~x", "main@~1", "main~1@", "main@@", "main@1",
        ] {
            assert_eq!(parse(bad), Err(RefError::Invalid), "{bad:?}");
        }
    }
}
