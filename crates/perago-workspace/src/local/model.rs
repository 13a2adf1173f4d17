//! The local store's records and the pure parts of its model: names, canonical encodings, commit
//! ids, trees, staging, the two-dot diff, the 3-way merge table and the merge base.

use crate::store::{Change, ChangeKind, Metadata};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// The version of the commit, tree and branch records.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The longest object path, in bytes (lakeFS's limit).
pub(crate) const MAX_PATH_LEN: usize = 1024;

/// The longest branch name: a branch is a file name.
pub(crate) const MAX_BRANCH_LEN: usize = 255;

/// An object's value, and its identity: two values are the same object when both fields are
/// equal. Fields in alphabetical order, so that the encoding is canonical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// Lowercase hex SHA-256 of the content, which is also the object file's name.
    pub checksum: String,
    /// The size in bytes.
    pub size: u64,
}

/// The content of a commit: path → value, in byte order of path.
pub(crate) type Tree = BTreeMap<String, Entry>;

/// A commit as stored. Fields in alphabetical order: its JSON encoding (no whitespace) is
/// canonical, and the commit id is the SHA-256 of that encoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitRecord {
    /// Unix seconds.
    pub creation_date: i64,
    /// 1 for a first commit, else 1 + the largest generation of its parents.
    pub generation: u64,
    /// The message.
    pub message: String,
    /// User metadata (sorted).
    pub metadata: Metadata,
    /// Parent commit ids.
    pub parents: Vec<String>,
    /// The SHA-256 of the canonical encoding of its [`Tree`] (the tree file's name).
    pub tree: String,
    /// [`FORMAT_VERSION`].
    pub version: u32,
}

impl CommitRecord {
    /// The canonical encoding and the commit id (its SHA-256).
    pub(crate) fn encode(&self) -> (Vec<u8>, String) {
        let bytes = canonical(self);
        let id = sha256_hex(&bytes);
        (bytes, id)
    }
}

/// A branch: its head commit and the name of its staging log. Replaced as a whole, by rename.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BranchState {
    /// The head commit id.
    pub head: String,
    /// The staging log's name under `staging/` (a fresh one after every commit, merge or
    /// import, so a head and its staging area change together).
    pub staging: String,
}

/// One line of a staging log: `path` staged with a value, or removed (`value: null`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Staged {
    /// The path.
    pub path: String,
    /// The staged value, `None` for a removal (a tombstone).
    pub value: Option<Entry>,
}

/// `repository.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RepositoryRecord {
    /// Unix seconds.
    pub creation_date: i64,
    /// The branch created with the repository.
    pub default_branch: String,
    /// [`FORMAT_VERSION`].
    pub version: u32,
}

/// The JSON of `value` without whitespace. Every record has its fields in alphabetical order
/// and its maps sorted, so this encoding is canonical.
pub(crate) fn canonical<T: Serialize>(value: &T) -> Vec<u8> {
    // Serialising these records (strings, integers, sorted maps) cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 15)] as char);
    }
    text
}

/// lakeFS's repository id rule: `^[a-z0-9][a-z0-9-]{2,62}$`.
pub(crate) fn is_repository_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && matches!(bytes[0], b'a'..=b'z' | b'0'..=b'9')
        && bytes
            .iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
}

/// lakeFS's branch id rule: `^\w[-\w]*$` with ASCII `\w` (no `/`, no `.`), at most
/// [`MAX_BRANCH_LEN`] bytes.
pub(crate) fn is_branch_name(name: &str) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_BRANCH_LEN
        && word(&bytes[0])
        && bytes.iter().all(|b| word(b) || *b == b'-')
}

/// An object path lakeFS accepts: 1 to 1024 bytes.
pub(crate) fn is_object_path(path: &str) -> bool {
    !path.is_empty() && path.len() <= MAX_PATH_LEN
}

/// `tree` with the staged changes applied in order (the newest write of a path wins, a
/// tombstone removes it).
pub(crate) fn apply_staged(tree: &Tree, staged: &[Staged]) -> Tree {
    let mut result = tree.clone();
    for change in staged {
        match &change.value {
            Some(entry) => {
                result.insert(change.path.clone(), entry.clone());
            }
            None => {
                result.remove(&change.path);
            }
        }
    }
    result
}

/// Whether the staged changes change any path's identity against `tree` (lakeFS's "dirty").
pub(crate) fn is_dirty(tree: &Tree, staged: &[Staged]) -> bool {
    let mut last: HashMap<&str, Option<&Entry>> = HashMap::new();
    for change in staged {
        last.insert(&change.path, change.value.as_ref());
    }
    last.into_iter()
        .any(|(path, value)| tree.get(path) != value)
}

/// The paths starting with `prefix` whose value differs between `left` and `right`, in path
/// order (lakeFS's two-dot diff).
pub(crate) fn diff_trees(left: &Tree, right: &Tree, prefix: &str) -> Vec<Change> {
    let paths: std::collections::BTreeSet<&String> =
        under(left, prefix).chain(under(right, prefix)).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let kind = match (left.get(path), right.get(path)) {
                (Some(_), None) => ChangeKind::Removed,
                (None, Some(_)) => ChangeKind::Added,
                (Some(l), Some(r)) if l != r => ChangeKind::Changed,
                _ => return None,
            };
            Some(Change {
                kind,
                path: path.clone(),
            })
        })
        .collect()
}

/// The paths of `tree` that start with `prefix`, in byte order.
pub(crate) fn under<'t>(tree: &'t Tree, prefix: &'t str) -> impl Iterator<Item = &'t String> {
    tree.range::<str, _>((
        std::ops::Bound::Included(prefix),
        std::ops::Bound::Unbounded,
    ))
    .take_while(move |(path, _)| path.starts_with(prefix))
    .map(|(path, _)| path)
}

/// The result of one path of a 3-way merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// The path's merged value (`None`: absent).
    Value(Option<Entry>),
    /// Both sides changed it differently.
    Conflict,
}

/// lakeFS's 3-way table without a strategy, for one path: `base`, `source`, `destination`
/// values (`None`: absent). A side that kept the base value takes the other side's; equal
/// changes on both sides agree; different changes conflict.
pub(crate) fn merge_path(
    base: Option<&Entry>,
    source: Option<&Entry>,
    destination: Option<&Entry>,
) -> Resolution {
    if source == base {
        Resolution::Value(destination.cloned())
    } else if destination == base || source == destination {
        Resolution::Value(source.cloned())
    } else {
        Resolution::Conflict
    }
}

/// The 3-way merge of whole trees; `None` on the first conflicting path.
pub(crate) fn merge_trees(base: &Tree, source: &Tree, destination: &Tree) -> Option<Tree> {
    let mut merged = Tree::new();
    let paths: std::collections::BTreeSet<&String> = base
        .keys()
        .chain(source.keys())
        .chain(destination.keys())
        .collect();
    for path in paths {
        match merge_path(base.get(path), source.get(path), destination.get(path)) {
            Resolution::Value(Some(entry)) => {
                merged.insert(path.clone(), entry);
            }
            Resolution::Value(None) => {}
            Resolution::Conflict => return None,
        }
    }
    Some(merged)
}

/// The best common ancestor of commits `a` and `b` (git merge-base semantics): a common
/// ancestor that no other common ancestor descends from; of several such (a criss-cross), the
/// one with the largest generation, then the largest id. `load` gives a commit's generation and
/// parents.
///
/// Commits are visited in decreasing generation (a parent's generation is always smaller than
/// its child's), so a commit's marks are final when it is visited: a commit reached from both
/// sides is a candidate unless it is reached from an earlier candidate.
pub(crate) fn merge_base<E>(
    a: &str,
    b: &str,
    mut load: impl FnMut(&str) -> Result<(u64, Vec<String>), E>,
) -> Result<Option<String>, E> {
    const FROM_A: u8 = 1;
    const FROM_B: u8 = 2;
    const STALE: u8 = 4;
    let mut marks: HashMap<String, u8> = HashMap::new();
    let mut queue: BinaryHeap<(u64, String)> = BinaryHeap::new();
    for (id, mark) in [(a, FROM_A), (b, FROM_B)] {
        let (generation, _) = load(id)?;
        *marks.entry(id.to_owned()).or_default() |= mark;
        queue.push((generation, id.to_owned()));
    }
    let mut best: Option<(u64, String)> = None;
    while let Some((generation, id)) = queue.pop() {
        if queue.peek().is_some_and(|(_, next)| *next == id) {
            continue; // a duplicate entry: the last one is handled
        }
        let mut mark = marks.get(&id).copied().unwrap_or(0);
        if mark & (FROM_A | FROM_B) == FROM_A | FROM_B && mark & STALE == 0 {
            if best
                .as_ref()
                .is_none_or(|b| (generation, &id) > (b.0, &b.1))
            {
                best = Some((generation, id.clone()));
            }
            mark |= STALE;
        }
        let (_, parents) = load(&id)?;
        for parent in parents {
            let old = marks.get(&parent).copied().unwrap_or(0);
            let new = old | mark;
            if new != old {
                marks.insert(parent.clone(), new);
                let (parent_generation, _) = load(&parent)?;
                queue.push((parent_generation, parent));
            }
        }
        // Done when every commit still queued descends from a candidate.
        if queue
            .iter()
            .all(|(_, queued)| marks.get(queued).is_some_and(|m| m & STALE != 0))
        {
            break;
        }
    }
    Ok(best.map(|(_, id)| id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Option<Entry> {
        Some(Entry {
            checksum: sha256_hex(name.as_bytes()),
            size: name.len() as u64,
        })
    }

    #[test]
    fn the_3_way_table_without_strategy() {
        let (x, y, z) = (entry("X"), entry("Y"), entry("Z"));
        let none = None;
        let v = |e: &Option<Entry>| Resolution::Value(e.clone());
        // (row, base, source, destination, expected)
        let rows = [
            (1, &none, &x, &none, v(&x)),
            (2, &none, &none, &y, v(&y)),
            (3, &none, &x, &x, v(&x)),
            (4, &none, &x, &y, Resolution::Conflict),
            (5, &z, &z, &z, v(&z)),
            (6, &z, &x, &z, v(&x)),
            (7, &z, &z, &y, v(&y)),
            (8, &z, &x, &x, v(&x)),
            (9, &z, &x, &y, Resolution::Conflict),
            (10, &z, &none, &z, v(&none)),
            (11, &z, &z, &none, v(&none)),
            (12, &z, &none, &none, v(&none)),
            (13, &z, &none, &y, Resolution::Conflict),
            (14, &z, &x, &none, Resolution::Conflict),
        ];
        for (row, base, source, destination, expected) in rows {
            assert_eq!(
                merge_path(base.as_ref(), source.as_ref(), destination.as_ref()),
                expected,
                "row {row}"
            );
        }
    }

    #[test]
    fn identity_is_size_and_checksum() {
        let a = entry("X");
        let mut b = a.clone();
        assert_eq!(
            merge_path(None, a.as_ref(), b.as_ref()),
            Resolution::Value(a.clone())
        );
        if let Some(b) = b.as_mut() {
            b.size += 1;
        }
        assert_eq!(
            merge_path(None, a.as_ref(), b.as_ref()),
            Resolution::Conflict
        );
    }

    #[test]
    fn whole_tree_merge_keeps_both_sides_and_stops_at_a_conflict() {
        let tree = |pairs: &[(&str, &str)]| -> Tree {
            pairs
                .iter()
                .filter_map(|(p, v)| entry(v).map(|e| (p.to_string(), e)))
                .collect()
        };
        let base = tree(&[("a", "1"), ("b", "1"), ("c", "1")]);
        let source = tree(&[("a", "2"), ("b", "1"), ("d", "1")]);
        let destination = tree(&[("a", "1"), ("e", "1")]);
        assert_eq!(
            merge_trees(&base, &source, &destination),
            Some(tree(&[("a", "2"), ("d", "1"), ("e", "1")]))
        );
        let destination = tree(&[("a", "3")]);
        assert_eq!(merge_trees(&base, &source, &destination), None);
    }

    fn record(date: i64, message: &str, parents: &[&str]) -> CommitRecord {
        CommitRecord {
            creation_date: date,
            generation: 1,
            message: message.into(),
            metadata: Metadata::from([("k".into(), "v".into()), ("a".into(), "b".into())]),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            tree: sha256_hex(b"{}"),
            version: FORMAT_VERSION,
        }
    }

    #[test]
    fn commit_ids_are_deterministic_and_canonical() {
        let (bytes, id) = record(1_700_000_000, "m", &[]).encode();
        assert_eq!(record(1_700_000_000, "m", &[]).encode().1, id);
        assert!(crate::store::is_commit_id(&id));
        assert_eq!(id, sha256_hex(&bytes));
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            format!(
                "{{\"creation_date\":1700000000,\"generation\":1,\"message\":\"m\",\
                 \"metadata\":{{\"a\":\"b\",\"k\":\"v\"}},\"parents\":[],\"tree\":\"{}\",\
                 \"version\":1}}",
                sha256_hex(b"{}")
            )
        );
        assert_ne!(record(1_700_000_001, "m", &[]).encode().1, id);
        assert_ne!(record(1_700_000_000, "n", &[]).encode().1, id);
        assert_ne!(record(1_700_000_000, "m", &[&id]).encode().1, id);
    }

    #[test]
    fn staging_applies_in_order_and_identical_content_is_not_dirty() {
        let tree: Tree = [("a".to_string(), entry("1").unwrap())].into();
        let staged = |path: &str, v: Option<Entry>| Staged {
            path: path.into(),
            value: v,
        };
        assert!(!is_dirty(&tree, &[staged("a", entry("1"))]));
        assert!(!is_dirty(&tree, &[staged("zz", None)]));
        assert!(!is_dirty(
            &tree,
            &[staged("a", entry("2")), staged("a", entry("1"))]
        ));
        assert!(is_dirty(&tree, &[staged("a", None)]));
        assert!(is_dirty(&tree, &[staged("b", entry("1"))]));
        let applied = apply_staged(&tree, &[staged("b", entry("2")), staged("a", None)]);
        assert_eq!(applied.keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn diff_is_two_dot_in_path_order_under_the_prefix() {
        let tree = |pairs: &[(&str, &str)]| -> Tree {
            pairs
                .iter()
                .filter_map(|(p, v)| entry(v).map(|e| (p.to_string(), e)))
                .collect()
        };
        let left = tree(&[("a/1", "x"), ("a/2", "x"), ("a/3", "x"), ("b", "x")]);
        let right = tree(&[("a/0", "x"), ("a/2", "y"), ("a/3", "x"), ("c", "x")]);
        let changes = diff_trees(&left, &right, "a/");
        let got: Vec<_> = changes.iter().map(|c| (c.kind, c.path.as_str())).collect();
        assert_eq!(
            got,
            [
                (ChangeKind::Added, "a/0"),
                (ChangeKind::Removed, "a/1"),
                (ChangeKind::Changed, "a/2")
            ]
        );
        assert_eq!(diff_trees(&left, &right, "").len(), 5);
    }

    #[test]
    fn names() {
        assert!(is_repository_name("abc"));
        assert!(is_repository_name("a-9"));
        assert!(!is_repository_name("ab"));
        assert!(!is_repository_name("-ab"));
        assert!(!is_repository_name("Abc"));
        assert!(!is_repository_name(&"a".repeat(64)));
        assert!(is_branch_name("main"));
        assert!(is_branch_name("_x-Y9"));
        assert!(!is_branch_name("-x"));
        assert!(!is_branch_name("a.b"));
        assert!(!is_branch_name("a/b"));
        assert!(!is_branch_name("main@"));
        assert!(!is_branch_name(""));
        assert!(!is_branch_name("é"));
    }

    /// A DAG given as child → parents; generations computed.
    fn graph(edges: &[(&str, &[&str])]) -> HashMap<String, (u64, Vec<String>)> {
        let mut graph: HashMap<String, (u64, Vec<String>)> = HashMap::new();
        for (id, parents) in edges {
            let generation = parents.iter().map(|p| graph[*p].0).max().unwrap_or(0) + 1;
            graph.insert(
                id.to_string(),
                (generation, parents.iter().map(|p| p.to_string()).collect()),
            );
        }
        graph
    }

    fn base(graph: &HashMap<String, (u64, Vec<String>)>, a: &str, b: &str) -> Option<String> {
        merge_base(a, b, |id| {
            graph.get(id).cloned().ok_or_else(|| id.to_string())
        })
        .unwrap()
    }

    #[test]
    fn merge_base_follows_git() {
        // r - a - b - m      (m merges c into main)
        //      \- c -/ \- d
        let g = graph(&[
            ("r", &[]),
            ("a", &["r"]),
            ("b", &["a"]),
            ("c", &["a"]),
            ("m", &["b", "c"]),
            ("d", &["c"]),
            ("e", &["d"]),
        ]);
        assert_eq!(base(&g, "b", "c").as_deref(), Some("a"));
        assert_eq!(base(&g, "m", "e").as_deref(), Some("c"));
        assert_eq!(base(&g, "m", "c").as_deref(), Some("c"));
        assert_eq!(base(&g, "e", "e").as_deref(), Some("e"));
        assert_eq!(base(&g, "r", "e").as_deref(), Some("r"));
        // A criss-cross: x and y both merge p and q; the bases of x and y are p and q, neither
        // an ancestor of the other; the larger (generation, id) wins.
        let g = graph(&[
            ("r", &[]),
            ("p", &["r"]),
            ("q", &["r"]),
            ("x", &["p", "q"]),
            ("y", &["q", "p"]),
        ]);
        assert_eq!(base(&g, "x", "y").as_deref(), Some("q"));
        // A long first-parent chain on one side does not hide a nearer base on the other.
        let g = graph(&[
            ("r", &[]),
            ("a", &["r"]),
            ("b", &["a"]),
            ("c", &["b"]),
            ("s", &["r"]),
            ("t", &["s", "c"]),
        ]);
        assert_eq!(base(&g, "t", "c").as_deref(), Some("c"));
        assert_eq!(base(&g, "t", "b").as_deref(), Some("b"));
        assert_eq!(base(&g, "s", "c").as_deref(), Some("r"));
    }
}
