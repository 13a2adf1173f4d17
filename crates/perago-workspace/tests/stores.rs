//! The store model's conformance suite, run against both backends, then the local store's own
//! tests.
//!
//! [`conformance`] holds the checks that concern the [`Store`] trait only: each takes a
//! `&dyn Store` and a way to create a repository, and runs against the local store and against
//! the lakeFS client talking to the lakeFS test server (`conformance_local`,
//! `conformance_lakefs`). Below it, the local store's own tests: import (its fast way, held to
//! the generic one) and export, the on-disk layout, corruption, crashes, and compare-and-swap
//! across processes.

use perago_testserver::lakefs::LakeFsServer;
use perago_workspace::checkout::CheckoutError;
use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
use perago_workspace::local::LocalStore;
use perago_workspace::store::{
    Change, ChangeKind, Commit, CommitId, Merge, Metadata, ObjectInfo, Store, StoreError,
    import_by_upload,
};
use perago_workspace::transfer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};

// ===== the conformance suite (trait only) =====

/// Creates a repository of the given name with default branch `main` and returns its first
/// commit.
type MakeRepo<'a> = &'a dyn Fn(&str) -> Commit;

/// One conformance check.
type Check = fn(&dyn Store, MakeRepo<'_>);

/// Every conformance check, by name.
const CHECKS: &[(&str, Check)] = &[
    ("first_commit", first_commit),
    ("references", references),
    ("upload_commit_download", upload_commit_download),
    ("no_change_commits", no_change_commits),
    ("delete_objects", delete_objects),
    ("branches", branches),
    ("diff_two_dot", diff_two_dot),
    ("merge_basics", merge_basics),
    ("merge_table", merge_table),
    ("log_order", log_order),
    ("concurrent_merges_same_path", concurrent_merges_same_path),
    (
        "concurrent_merges_different_paths",
        concurrent_merges_different_paths,
    ),
    ("concurrent_commits", concurrent_commits),
    ("concurrent_branch_creation", concurrent_branch_creation),
];

/// Runs every conformance check against `store`.
#[allow(dead_code)]
pub fn conformance(store: &dyn Store, make_repo: MakeRepo<'_>) {
    for (name, check) in CHECKS {
        eprintln!("conformance: {name}");
        check(store, make_repo);
    }
}

/// A repository name unique to this process and call: `<tag>-<pid>-<n>`.
fn unique(tag: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh repository: its name and first commit.
fn fresh(make_repo: MakeRepo<'_>, tag: &str) -> (String, Commit) {
    let name = unique(tag);
    let first = make_repo(&name);
    (name, first)
}

/// Stages `content` at `path` on `branch`.
fn put(store: &dyn Store, repo: &str, branch: &str, path: &str, content: &[u8]) -> ObjectInfo {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("content");
    std::fs::write(&file, content).unwrap();
    let info = store.upload(repo, branch, path, &file).unwrap();
    assert_eq!(info.path, path);
    assert_eq!(info.size, content.len() as u64);
    info
}

fn commit(store: &dyn Store, repo: &str, branch: &str, message: &str) -> Commit {
    store
        .commit(repo, branch, message, &Metadata::new())
        .unwrap()
        .unwrap_or_else(|| panic!("{message}: no changes"))
}

/// The content of commit `id`: path → bytes, downloaded and verified.
fn contents(store: &dyn Store, repo: &str, id: &CommitId) -> BTreeMap<String, Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("object");
    store
        .list_objects(repo, id, "")
        .unwrap()
        .into_iter()
        .map(|object| {
            assert!(store.checksum().recognises(&object.checksum), "{object:?}");
            store.download(repo, id, &object, &dest).unwrap();
            (object.path, std::fs::read(&dest).unwrap())
        })
        .collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
        .collect()
}

fn head(store: &dyn Store, repo: &str, branch: &str) -> Commit {
    store.get_commit(repo, branch).unwrap()
}

fn first_commit(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "first");
    assert!(first.parents.is_empty());
    assert_eq!(first.message, "Repository created");
    assert!(first.metadata.is_empty());
    assert_eq!(head(store, &repo, "main"), first);
    assert_eq!(store.get_commit(&repo, first.id.as_str()).unwrap(), first);
    assert_eq!(
        store.log(&repo, "main", 10).unwrap(),
        std::slice::from_ref(&first)
    );
    assert_eq!(
        store.list_branches(&repo).unwrap(),
        [("main".to_owned(), first.id.clone())]
    );
    assert!(store.list_objects(&repo, &first.id, "").unwrap().is_empty());
}

fn references(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "refs");
    let missing = "0".repeat(64);
    for reference in ["nope", missing.as_str()] {
        assert!(
            matches!(
                store.get_commit(&repo, reference),
                Err(StoreError::NotFound(_))
            ),
            "{reference}"
        );
        assert!(matches!(
            store.log(&repo, reference, 10),
            Err(StoreError::NotFound(_))
        ));
    }
    let gone = unique("gone");
    assert!(matches!(
        store.get_commit(&gone, "main"),
        Err(StoreError::RepositoryNotFound(_))
    ));
    assert!(matches!(
        store.list_branches(&gone),
        Err(StoreError::RepositoryNotFound(_))
    ));
    assert!(matches!(
        store.list_objects(&repo, &CommitId::parse(&missing).unwrap(), ""),
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(store.get_commit(&repo, first.id.as_str()).unwrap(), first);
}

fn upload_commit_download(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "updown");
    put(store, &repo, "main", "b/c.txt", b"c");
    put(store, &repo, "main", "a.txt", b"a");
    put(store, &repo, "main", "b/d.bin", &[0u8, 255, 10, 13]);
    put(store, &repo, "main", "e", b"");
    // Staged writes do not move the committed head.
    assert_eq!(head(store, &repo, "main"), first);
    let metadata = Metadata::from([("task".to_owned(), "t1".to_owned())]);
    let made = store
        .commit(&repo, "main", "outputs", &metadata)
        .unwrap()
        .unwrap();
    assert_eq!(made.parents, std::slice::from_ref(&first.id));
    assert_eq!(made.message, "outputs");
    assert_eq!(made.metadata, metadata);
    assert_eq!(head(store, &repo, "main"), made);
    assert_eq!(
        contents(store, &repo, &made.id),
        BTreeMap::from([
            ("a.txt".to_owned(), b"a".to_vec()),
            ("b/c.txt".to_owned(), b"c".to_vec()),
            ("b/d.bin".to_owned(), vec![0, 255, 10, 13]),
            ("e".to_owned(), Vec::new()),
        ])
    );
    let under: Vec<_> = store
        .list_objects(&repo, &made.id, "b/")
        .unwrap()
        .into_iter()
        .map(|o| (o.path, o.size))
        .collect();
    assert_eq!(
        under,
        [("b/c.txt".to_owned(), 1), ("b/d.bin".to_owned(), 4)]
    );
    // The first commit still reads as it was.
    assert!(store.list_objects(&repo, &first.id, "").unwrap().is_empty());
    // An object that is not in the commit.
    let dir = tempfile::tempdir().unwrap();
    let ghost = ObjectInfo {
        path: "ghost".into(),
        size: 1,
        checksum: String::new(),
    };
    assert!(matches!(
        store.download(&repo, &made.id, &ghost, &dir.path().join("g")),
        Err(StoreError::NotFound(_))
    ));
}

fn no_change_commits(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, _) = fresh(make_repo, "nochange");
    let none = |store: &dyn Store| {
        store
            .commit(&repo, "main", "nothing", &Metadata::new())
            .unwrap()
    };
    assert_eq!(none(store), None);
    put(store, &repo, "main", "x", b"1");
    let c1 = commit(store, &repo, "main", "x");
    // Identical content staged again is not a change.
    put(store, &repo, "main", "x", b"1");
    assert_eq!(none(store), None);
    // Nor is removing a path that does not exist, nor a write undone before the commit.
    store.delete_object(&repo, "main", "absent").unwrap();
    put(store, &repo, "main", "y", b"2");
    store.delete_object(&repo, "main", "y").unwrap();
    put(store, &repo, "main", "x", b"3");
    put(store, &repo, "main", "x", b"1");
    assert_eq!(none(store), None);
    assert_eq!(head(store, &repo, "main"), c1);
}

fn delete_objects(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, _) = fresh(make_repo, "delete");
    put(store, &repo, "main", "keep", b"k");
    put(store, &repo, "main", "drop", b"d");
    let c1 = commit(store, &repo, "main", "two");
    store.delete_object(&repo, "main", "drop").unwrap();
    let c2 = commit(store, &repo, "main", "one");
    assert_eq!(c2.parents, std::slice::from_ref(&c1.id));
    assert_eq!(contents(store, &repo, &c2.id), map(&[("keep", "k")]));
    assert_eq!(
        contents(store, &repo, &c1.id),
        map(&[("drop", "d"), ("keep", "k")])
    );
}

fn branches(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "branches");
    store.create_branch(&repo, "feature-1", &first.id).unwrap();
    assert!(matches!(
        store.create_branch(&repo, "feature-1", &first.id),
        Err(StoreError::AlreadyExists(_))
    ));
    for bad in ["a.b", "a/b", "-x", "", "main@", "sp ace"] {
        assert!(
            matches!(
                store.create_branch(&repo, bad, &first.id),
                Err(StoreError::Invalid(_))
            ),
            "{bad:?}"
        );
    }
    let missing = CommitId::parse(&"0".repeat(64)).unwrap();
    assert!(matches!(
        store.create_branch(&repo, "orphan", &missing),
        Err(StoreError::NotFound(_))
    ));
    // Work on a branch stays there.
    put(store, &repo, "feature-1", "f", b"f");
    let on_feature = commit(store, &repo, "feature-1", "f");
    assert_eq!(head(store, &repo, "main"), first);
    assert_eq!(
        store.list_branches(&repo).unwrap(),
        [
            ("feature-1".to_owned(), on_feature.id.clone()),
            ("main".to_owned(), first.id.clone())
        ]
    );
    // A branch from a branch's head starts clean.
    put(store, &repo, "feature-1", "staged", b"s");
    store
        .create_branch(&repo, "feature-2", &on_feature.id)
        .unwrap();
    assert_eq!(
        store
            .commit(&repo, "feature-2", "nothing", &Metadata::new())
            .unwrap(),
        None
    );
    // Deleting discards the staged changes and keeps the commits.
    store.delete_branch(&repo, "feature-1").unwrap();
    assert!(matches!(
        store.get_commit(&repo, "feature-1"),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.delete_branch(&repo, "feature-1"),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.commit(&repo, "feature-1", "m", &Metadata::new()),
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(
        store.get_commit(&repo, on_feature.id.as_str()).unwrap(),
        on_feature
    );
    store.create_branch(&repo, "feature-1", &first.id).unwrap();
    assert_eq!(
        store
            .commit(&repo, "feature-1", "nothing", &Metadata::new())
            .unwrap(),
        None,
        "a recreated branch does not see the old staged changes"
    );
}

fn diff_two_dot(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "diff");
    put(store, &repo, "main", "d/same", b"s");
    put(store, &repo, "main", "d/changed", b"1");
    put(store, &repo, "main", "d/removed", b"r");
    put(store, &repo, "main", "other", b"o");
    let left = commit(store, &repo, "main", "left");
    put(store, &repo, "main", "d/changed", b"2");
    put(store, &repo, "main", "d/added", b"a");
    store.delete_object(&repo, "main", "d/removed").unwrap();
    store.delete_object(&repo, "main", "other").unwrap();
    let right = commit(store, &repo, "main", "right");
    let change = |kind, path: &str| Change {
        kind,
        path: path.to_owned(),
    };
    assert_eq!(
        store.diff(&repo, &left.id, &right.id, "d/").unwrap(),
        [
            change(ChangeKind::Added, "d/added"),
            change(ChangeKind::Changed, "d/changed"),
            change(ChangeKind::Removed, "d/removed"),
        ]
    );
    assert_eq!(store.diff(&repo, &left.id, &right.id, "").unwrap().len(), 4);
    assert_eq!(
        store.diff(&repo, &right.id, &left.id, "o").unwrap(),
        [change(ChangeKind::Added, "other")]
    );
    assert!(
        store
            .diff(&repo, &left.id, &left.id, "")
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.diff(&repo, &first.id, &left.id, "").unwrap().len(), 4);
}

fn merge_basics(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "merge");
    let none = Metadata::new();
    store.create_branch(&repo, "work", &first.id).unwrap();
    // Nothing to merge.
    assert_eq!(
        store.merge(&repo, "work", "main", "m", &none).unwrap(),
        Merge::NoChanges
    );
    put(store, &repo, "work", "w", b"w");
    // Staged changes of the source are ignored.
    assert_eq!(
        store.merge(&repo, "work", "main", "m", &none).unwrap(),
        Merge::NoChanges
    );
    let source = commit(store, &repo, "work", "w");
    // A dirty destination refuses.
    put(store, &repo, "main", "m", b"m");
    match store.merge(&repo, "work", "main", "m", &none) {
        Err(StoreError::Invalid(message)) => assert!(message.contains("dirty"), "{message}"),
        other => panic!("{other:?}"),
    }
    let destination = commit(store, &repo, "main", "m");
    // A clean merge: a new commit with parents [destination head, source head].
    let metadata = Metadata::from([("attempt".to_owned(), "1".to_owned())]);
    let Merge::Merged(id) = store
        .merge(&repo, "work", "main", "merge work", &metadata)
        .unwrap()
    else {
        panic!("not merged")
    };
    let merged = head(store, &repo, "main");
    assert_eq!(merged.id, id);
    assert_eq!(merged.parents, [destination.id.clone(), source.id.clone()]);
    assert_eq!(merged.message, "merge work");
    assert_eq!(
        merged.metadata.get("attempt").map(String::as_str),
        Some("1")
    );
    assert_eq!(contents(store, &repo, &id), map(&[("m", "m"), ("w", "w")]));
    // Merged already.
    assert_eq!(
        store.merge(&repo, "work", "main", "again", &none).unwrap(),
        Merge::NoChanges
    );
    // Never a fast-forward: main into a branch that main descends from.
    store.create_branch(&repo, "behind", &source.id).unwrap();
    let Merge::Merged(forward) = store.merge(&repo, "main", "behind", "ff", &none).unwrap() else {
        panic!("not merged")
    };
    assert_ne!(forward, merged.id);
    assert_eq!(
        head(store, &repo, "behind").parents,
        [source.id.clone(), merged.id.clone()]
    );
    // A source given as a commit id; a missing source or destination.
    put(store, &repo, "work", "w2", b"w2");
    let second = commit(store, &repo, "work", "w2");
    assert!(matches!(
        store.merge(&repo, second.id.as_str(), "main", "by id", &none),
        Ok(Merge::Merged(_))
    ));
    assert!(matches!(
        store.merge(&repo, "nope", "main", "m", &none),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.merge(&repo, "work", "nope", "m", &none),
        Err(StoreError::NotFound(_))
    ));
}

/// The rows of lakeFS's 3-way table, end to end: the rows that merge in one merge, then each
/// conflicting row alone, which writes nothing.
fn merge_table(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, _) = fresh(make_repo, "table");
    let none = Metadata::new();
    for row in 5..=14 {
        put(store, &repo, "main", &format!("r{row}"), b"Z");
    }
    let base = commit(store, &repo, "main", "base");
    // (row, source: Some(content) or None for a removal, destination: likewise); rows 5 leave
    // both sides alone, rows 1-4 start absent.
    type Side = Option<Option<&'static str>>;
    let rows: [(u32, Side, Side); 14] = [
        (1, Some(Some("X")), None),
        (2, None, Some(Some("Y"))),
        (3, Some(Some("X")), Some(Some("X"))),
        (4, Some(Some("X")), Some(Some("Y"))),
        (5, None, None),
        (6, Some(Some("X")), None),
        (7, None, Some(Some("Y"))),
        (8, Some(Some("X")), Some(Some("X"))),
        (9, Some(Some("X")), Some(Some("Y"))),
        (10, Some(None), None),
        (11, None, Some(None)),
        (12, Some(None), Some(None)),
        (13, Some(None), Some(Some("Y"))),
        (14, Some(Some("X")), Some(None)),
    ];
    let conflicting = [4, 9, 13, 14];
    let apply = |branch: &str, path: &str, side: Side| match side {
        Some(Some(content)) => {
            put(store, &repo, branch, path, content.as_bytes());
        }
        Some(None) => store.delete_object(&repo, branch, path).unwrap(),
        None => {}
    };
    store.create_branch(&repo, "src", &base.id).unwrap();
    store.create_branch(&repo, "dst", &base.id).unwrap();
    for (row, source, destination) in rows {
        if !conflicting.contains(&row) {
            apply("src", &format!("r{row}"), source);
            apply("dst", &format!("r{row}"), destination);
        }
    }
    commit(store, &repo, "src", "source side");
    commit(store, &repo, "dst", "destination side");
    let Merge::Merged(id) = store.merge(&repo, "src", "dst", "rows", &none).unwrap() else {
        panic!("the non-conflicting rows conflict")
    };
    let expected = map(&[
        ("r1", "X"),
        ("r2", "Y"),
        ("r3", "X"),
        ("r5", "Z"),
        ("r6", "X"),
        ("r7", "Y"),
        ("r8", "X"),
        ("r9", "Z"),
        ("r13", "Z"),
        ("r14", "Z"),
    ]);
    // Rows 4, 9, 13 and 14 are left alone here: r4 absent, the others Z.
    assert_eq!(
        contents(store, &repo, &id),
        expected,
        "rows 1-3, 5-8, 10-12"
    );
    for row in conflicting {
        let (source, destination) = (format!("s{row}"), format!("d{row}"));
        store.create_branch(&repo, &source, &base.id).unwrap();
        store.create_branch(&repo, &destination, &base.id).unwrap();
        let (_, s, d) = rows[row as usize - 1];
        apply(&source, &format!("r{row}"), s);
        apply(&destination, &format!("r{row}"), d);
        commit(store, &repo, &source, "source side");
        let before = commit(store, &repo, &destination, "destination side");
        assert_eq!(
            store
                .merge(&repo, &source, &destination, "conflict", &none)
                .unwrap(),
            Merge::Conflict,
            "row {row}"
        );
        assert_eq!(head(store, &repo, &destination), before, "row {row}");
    }
}

fn log_order(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "log");
    store.create_branch(&repo, "side", &first.id).unwrap();
    let mut made = vec![first.clone()];
    for i in 0..3 {
        put(store, &repo, "main", &format!("m{i}"), b"m");
        made.push(commit(store, &repo, "main", "main"));
        put(store, &repo, "side", &format!("s{i}"), b"s");
        made.push(commit(store, &repo, "side", "side"));
    }
    let Merge::Merged(_) = store
        .merge(&repo, "side", "main", "join", &Metadata::new())
        .unwrap()
    else {
        panic!("not merged")
    };
    made.push(head(store, &repo, "main"));
    let log = store.log(&repo, "main", 100).unwrap();
    assert_eq!(log.len(), made.len(), "each commit once");
    // A walk from the head by (creation date, id), newest first: lakeFS's order. Commits of
    // one second come in id order among those reached so far, so only the dates are sorted
    // overall.
    assert_eq!(log[0], head(store, &repo, "main"));
    for pair in log.windows(2) {
        assert!(
            pair[0].creation_date >= pair[1].creation_date,
            "newest first"
        );
    }
    let mut expected: Vec<_> = made.iter().map(|c| c.id.clone()).collect();
    let mut got: Vec<_> = log.iter().map(|c| c.id.clone()).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert_eq!(store.log(&repo, "main", 3).unwrap(), log[..3]);
    assert_eq!(store.log(&repo, "side", 100).unwrap().len(), 4);
}

/// Two merges from the same base that change one path differently: exactly one lands.
fn concurrent_merges_same_path(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "racesame");
    for (branch, content) in [("a", "from a"), ("b", "from b")] {
        store.create_branch(&repo, branch, &first.id).unwrap();
        put(store, &repo, branch, "shared", content.as_bytes());
        commit(store, &repo, branch, branch);
    }
    let barrier = Barrier::new(2);
    let results: Vec<Merge> = std::thread::scope(|scope| {
        let handles: Vec<_> = ["a", "b"]
            .map(|branch| {
                let (barrier, repo) = (&barrier, &repo);
                scope.spawn(move || {
                    barrier.wait();
                    store
                        .merge(repo, branch, "main", branch, &Metadata::new())
                        .unwrap()
                })
            })
            .into_iter()
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let landed: Vec<_> = results
        .iter()
        .filter(|r| matches!(r, Merge::Merged(_)))
        .collect();
    assert_eq!(landed.len(), 1, "{results:?}");
    assert!(results.contains(&Merge::Conflict), "{results:?}");
    let main = head(store, &repo, "main");
    assert_eq!(landed[0], &Merge::Merged(main.id.clone()));
    assert_eq!(main.parents[0], first.id);
}

/// Merges from the same base that change different paths: all land, one on top of another.
fn concurrent_merges_different_paths(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "racediff");
    let branches: Vec<String> = (0..6).map(|i| format!("w{i}")).collect();
    for branch in &branches {
        store.create_branch(&repo, branch, &first.id).unwrap();
        put(
            store,
            &repo,
            branch,
            &format!("out/{branch}"),
            branch.as_bytes(),
        );
        commit(store, &repo, branch, branch);
    }
    let barrier = Barrier::new(branches.len());
    let results: Vec<Merge> = std::thread::scope(|scope| {
        let handles: Vec<_> = branches
            .iter()
            .map(|branch| {
                let (barrier, repo) = (&barrier, &repo);
                scope.spawn(move || {
                    barrier.wait();
                    store
                        .merge(repo, branch, "main", branch, &Metadata::new())
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        results.iter().all(|r| matches!(r, Merge::Merged(_))),
        "{results:?}"
    );
    let main = head(store, &repo, "main");
    let expected: BTreeMap<_, _> = branches
        .iter()
        .map(|b| (format!("out/{b}"), b.as_bytes().to_vec()))
        .collect();
    assert_eq!(contents(store, &repo, &main.id), expected);
    // Every merge is in main's history, each applied to the head before it.
    let log = store.log(&repo, "main", 1000).unwrap();
    assert_eq!(log.len(), 1 + 2 * branches.len());
    let merges: Vec<_> = log.iter().filter(|c| c.parents.len() == 2).collect();
    assert_eq!(merges.len(), branches.len());
}

/// Threads that stage and commit on one branch: every staged path ends up committed, exactly
/// once each, and every head seen is a readable commit.
fn concurrent_commits(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, _) = fresh(make_repo, "racecommit");
    const THREADS: usize = 4;
    const ROUNDS: usize = 5;
    let done = AtomicBool::new(false);
    let heads = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) || reads == 0 {
                let main = head(store, &repo, "main");
                store.list_objects(&repo, &main.id, "").unwrap();
                reads += 1;
            }
        });
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (repo, heads) = (&repo, &heads);
                scope.spawn(move || {
                    for round in 0..ROUNDS {
                        put(store, repo, "main", &format!("t{t}/{round}"), b"x");
                        if let Some(made) = store
                            .commit(repo, "main", "round", &Metadata::new())
                            .unwrap()
                        {
                            heads.lock().unwrap().push(made);
                        }
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap();
    });
    let main = head(store, &repo, "main");
    let paths: Vec<_> = store
        .list_objects(&repo, &main.id, "")
        .unwrap()
        .into_iter()
        .map(|o| o.path)
        .collect();
    assert_eq!(paths.len(), THREADS * ROUNDS, "{paths:?}");
    // The commits form one chain: each made commit is in main's log.
    let log: Vec<_> = store
        .log(&repo, "main", 1000)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let heads = heads.into_inner().unwrap();
    assert_eq!(log.len(), heads.len() + 1);
    for made in heads {
        assert!(log.contains(&made.id));
    }
}

/// Threads that create one branch name at once: exactly one succeeds.
fn concurrent_branch_creation(store: &dyn Store, make_repo: MakeRepo<'_>) {
    let (repo, first) = fresh(make_repo, "racebranch");
    let barrier = Barrier::new(4);
    let created = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                barrier.wait();
                match store.create_branch(&repo, "only", &first.id) {
                    Ok(()) => {
                        created.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(StoreError::AlreadyExists(_)) => {}
                    Err(e) => panic!("{e}"),
                }
            });
        }
    });
    assert_eq!(created.into_inner(), 1);
}

// ===== the local store =====

fn local() -> (tempfile::TempDir, LocalStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::open(dir.path().join("store")).unwrap();
    (dir, store)
}

fn make_repo(store: &LocalStore) -> impl Fn(&str) -> Commit + '_ {
    move |name| store.create_repository(name, "main").unwrap()
}

/// The lakeFS client against a fresh lakeFS test server.
fn lakefs() -> (LakeFsServer, LakeFs) {
    let server = LakeFsServer::start();
    let settings = LakeFsSettings::new(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )
    .unwrap();
    let client = LakeFs::new(settings).unwrap();
    (server, client)
}

fn make_lakefs_repo<'a>(
    server: &'a LakeFsServer,
    client: &'a LakeFs,
) -> impl Fn(&str) -> Commit + 'a {
    move |name| {
        let first = server.create_repository(name, "main").unwrap();
        client.get_commit(name, &first).unwrap()
    }
}

macro_rules! conformance_tests {
    ($($check:ident),* $(,)?) => {
        mod conformance_local {
            $(
                #[test]
                fn $check() {
                    let (_dir, store) = super::local();
                    super::$check(&store, &super::make_repo(&store));
                }
            )*
        }
        mod conformance_lakefs {
            $(
                #[test]
                fn $check() {
                    let (server, client) = super::lakefs();
                    super::$check(&client, &super::make_lakefs_repo(&server, &client));
                }
            )*
        }
    };
}

conformance_tests!(
    first_commit,
    references,
    upload_commit_download,
    no_change_commits,
    delete_objects,
    branches,
    diff_two_dot,
    merge_basics,
    merge_table,
    log_order,
    concurrent_merges_same_path,
    concurrent_merges_different_paths,
    concurrent_commits,
    concurrent_branch_creation,
);

#[test]
fn every_check_runs_against_both_stores() {
    assert_eq!(CHECKS.len(), 14, "a check missing from conformance_tests!");
}

/// Every branch head of every repository is a readable commit whose objects all download
/// and verify.
fn assert_consistent(store: &LocalStore) {
    for repo in store.repositories().unwrap() {
        for (branch, id) in store.list_branches(&repo).unwrap() {
            let log = store.log(&repo, &branch, usize::MAX).unwrap();
            assert_eq!(log[0].id, id);
            assert_eq!(log.iter().filter(|c| c.parents.is_empty()).count(), 1);
            contents(store, &repo, &id);
        }
    }
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let path = e.path().strip_prefix(dir).unwrap();
            (
                path.to_str().unwrap().to_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn write_tree(dir: &Path, pairs: &[(&str, &str)]) {
    for (path, content) in pairs {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, content).unwrap();
    }
}

fn object_files(store: &LocalStore) -> Vec<PathBuf> {
    walkdir::WalkDir::new(store.root().join("objects"))
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn repositories_are_created_once_and_listed() {
    let (_dir, store) = local();
    assert!(store.repositories().unwrap().is_empty());
    let first = store.create_repository("songs", "trunk").unwrap();
    assert!(matches!(
        store.create_repository("songs", "main"),
        Err(StoreError::AlreadyExists(_))
    ));
    store.create_repository("abc", "main").unwrap();
    assert_eq!(store.repositories().unwrap(), ["abc", "songs"]);
    assert_eq!(store.get_commit("songs", "trunk").unwrap(), first);
    for bad in ["ab", "Songs", "-songs", "so/ngs", "..."] {
        assert!(
            matches!(
                store.create_repository(bad, "main"),
                Err(StoreError::Invalid(_))
            ),
            "{bad}"
        );
        assert!(matches!(
            store.get_commit(bad, "main"),
            Err(StoreError::Invalid(_))
        ));
    }
    assert!(matches!(
        store.create_repository("good", "a.b"),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.delete_branch("songs", "trunk"),
        Err(StoreError::Invalid(_))
    ));
    // Concurrent creations: one wins.
    let created = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| match store.create_repository("raced", "main") {
                Ok(_) => {
                    created.fetch_add(1, Ordering::Relaxed);
                }
                Err(StoreError::AlreadyExists(_)) => {}
                Err(e) => panic!("{e}"),
            });
        }
    });
    assert_eq!(created.into_inner(), 1);
    assert_eq!(
        store.describe(),
        format!("local store at {}", store.root().display())
    );
}

#[test]
fn objects_are_content_addressed_and_stored_once() {
    let (_dir, store) = local();
    store.create_repository("dedup", "main").unwrap();
    let a = put(&store, "dedup", "main", "a", b"same bytes");
    let b = put(&store, "dedup", "main", "b", b"same bytes");
    assert_eq!(a.checksum, b.checksum);
    // sha256("same bytes")
    let file = store
        .root()
        .join("objects")
        .join(&a.checksum[..2])
        .join(&a.checksum);
    assert_eq!(std::fs::read(&file).unwrap(), b"same bytes");
    assert_eq!(object_files(&store), [file]);
    assert!(
        std::fs::read_dir(store.root().join("tmp"))
            .unwrap()
            .next()
            .is_none(),
        "no temporary file left"
    );
    commit(&store, "dedup", "main", "two paths, one object");
}

#[test]
fn bad_input_is_refused_not_panicked_on() {
    let (_dir, store) = local();
    let first = store.create_repository("bad", "main").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        store.upload("bad", "main", "", &file),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.upload("bad", "main", &"p".repeat(1025), &file),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.upload("bad", "nope", "p", &file),
        Err(StoreError::NotFound(_))
    ));
    match store.upload("bad", "main", "p", &dir.path().join("missing")) {
        Err(StoreError::Io { context, .. }) => assert!(context.contains("missing"), "{context}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        store.upload("bad", "../x", "p", &file),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.get_commit("bad", "../../etc"),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.create_branch("bad", &first.id.to_string(), &first.id),
        Err(StoreError::AlreadyExists(_))
    ));
    assert!(matches!(
        store.merge("bad", "main", "main@", "m", &Metadata::new()),
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(
        store
            .merge("bad", "main", "main", "self", &Metadata::new())
            .unwrap(),
        Merge::NoChanges
    );
}

#[test]
fn a_corrupted_object_is_reported_on_download() {
    let (_dir, store) = local();
    store.create_repository("corrupt", "main").unwrap();
    let info = put(&store, "corrupt", "main", "data", b"original content");
    put(&store, "corrupt", "main", "gone", b"to be lost");
    let made = commit(&store, "corrupt", "main", "c");
    let objects = store.list_objects("corrupt", &made.id, "").unwrap();
    let object_file = |checksum: &str| {
        store
            .root()
            .join("objects")
            .join(&checksum[..2])
            .join(checksum)
    };
    std::fs::write(object_file(&info.checksum), b"0riginal content").unwrap();
    std::fs::remove_file(object_file(&objects[1].checksum)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("out");
    for object in &objects {
        match store.download("corrupt", &made.id, object, &dest) {
            Err(e @ StoreError::Corrupt { .. }) => {
                assert!(e.to_string().contains(&object.path), "{e}")
            }
            other => panic!("{object:?}: {other:?}"),
        }
    }
    // A caller's stale expectation of the object is also reported.
    let mut stale = objects[0].clone();
    std::fs::write(object_file(&info.checksum), b"original content").unwrap();
    store.download("corrupt", &made.id, &stale, &dest).unwrap();
    stale.size += 1;
    assert!(matches!(
        store.download("corrupt", &made.id, &stale, &dest),
        Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn import_and_export_round_trip() {
    let (dir, store) = local();
    let source = dir.path().join("source");
    write_tree(
        &source,
        &[
            ("a.txt", "a"),
            ("deep/er/b.bin", "b"),
            ("deep/c", "c"),
            ("empty", ""),
            ("dup1", "same"),
            ("dup2", "same"),
        ],
    );
    std::fs::create_dir_all(source.join("empty-dir")).unwrap();
    let metadata = Metadata::from([("by".to_owned(), "test".to_owned())]);
    // Neither the repository nor the branch is created on the way.
    assert!(matches!(
        transfer::import(&store, "imported", "data", &source, "", "m", &metadata),
        Err(StoreError::RepositoryNotFound(_))
    ));
    store.create_repository("imported", "data").unwrap();
    let first = transfer::import(
        &store, "imported", "data", &source, "", "import 1", &metadata,
    )
    .unwrap()
    .unwrap();
    assert_eq!(first.message, "import 1");
    assert_eq!(first.metadata, metadata);
    assert_eq!(store.get_commit("imported", "data").unwrap(), first);
    assert_eq!(
        store.list_objects("imported", &first.id, "").unwrap().len(),
        6
    );
    assert_eq!(
        object_files(&store).len(),
        5,
        "dup1 and dup2 share one object"
    );
    // Nothing changed: nothing committed.
    assert_eq!(
        store
            .import_tree("imported", "data", &source, "", "again", &metadata)
            .unwrap(),
        None
    );
    // Export writes the files back, relative to the prefix.
    let out = dir.path().join("out");
    let (exported, count) = transfer::export(&store, "imported", "data", "", &out).unwrap();
    assert_eq!((exported.id, count), (first.id.clone(), 6));
    assert_eq!(files(&out), files(&source));
    let part = dir.path().join("part");
    assert_eq!(
        transfer::export(&store, "imported", "data", "deep/", &part)
            .unwrap()
            .1,
        2
    );
    assert_eq!(files(&part).keys().collect::<Vec<_>>(), ["c", "er/b.bin"]);
    // An export never writes into a directory that exists.
    assert!(transfer::export(&store, "imported", "data", "", &out).is_err());
    // The branch's tree becomes exactly the directory: removals and changes.
    std::fs::remove_file(source.join("deep/c")).unwrap();
    std::fs::write(source.join("a.txt"), "A").unwrap();
    let second = store
        .import_tree(
            "imported",
            "data",
            &source,
            "",
            "import 2",
            &Metadata::new(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(second.parents, std::slice::from_ref(&first.id));
    let changes: Vec<_> = store
        .diff("imported", &first.id, &second.id, "")
        .unwrap()
        .into_iter()
        .map(|c| (c.kind, c.path))
        .collect();
    assert_eq!(
        changes,
        [
            (ChangeKind::Changed, "a.txt".to_owned()),
            (ChangeKind::Removed, "deep/c".to_owned())
        ]
    );
    // Another branch: an old export imported onto it brings the old tree back.
    let old = dir.path().join("old");
    transfer::export(&store, "imported", first.id.as_str(), "", &old).unwrap();
    assert!(matches!(
        store.import_tree("imported", "other", &old, "", "m", &metadata),
        Err(StoreError::NotFound(_))
    ));
    store
        .create_branch("imported", "other", &second.id)
        .unwrap();
    let other = store
        .import_tree("imported", "other", &old, "", "m", &metadata)
        .unwrap()
        .unwrap();
    assert_eq!(other.parents, std::slice::from_ref(&second.id));
    assert!(
        store
            .diff("imported", &first.id, &other.id, "")
            .unwrap()
            .is_empty()
    );
    // A dirty branch refuses an import.
    put(&store, "imported", "data", "staged", b"s");
    assert!(matches!(
        store.import_tree("imported", "data", &source, "", "m", &metadata),
        Err(StoreError::Invalid(_))
    ));
    // Missing directories and references.
    assert!(matches!(
        store.import_tree(
            "imported",
            "other",
            &dir.path().join("nope"),
            "",
            "m",
            &metadata
        ),
        Err(StoreError::Io { .. })
    ));
    assert!(matches!(
        transfer::export(&store, "imported", "nope", "", &dir.path().join("nope")),
        Err(CheckoutError::Store(StoreError::NotFound(_)))
    ));
}

/// The objects of `branch`'s head: path, size and checksum.
fn objects(store: &dyn Store, repo: &str, branch: &str) -> Vec<ObjectInfo> {
    let head = store.get_commit(repo, branch).unwrap();
    store.list_objects(repo, &head.id, "").unwrap()
}

/// Directory `path`, created.
fn created(path: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&path).unwrap();
    path
}

#[test]
fn an_import_at_a_prefix_is_the_same_as_uploading_file_by_file() {
    // Each step imports a directory at a prefix twice: into repository `fast` with the local
    // store's own import, into `slow` with the generic one (upload, delete, commit). The two
    // must agree on the outcome and on every object after it.
    let (dir, store) = local();
    for repo in ["fast", "slow"] {
        store.create_repository(repo, "main").unwrap();
        for (path, content) in [
            ("features/old", "old"),
            ("features/keep", "k"),
            ("features0/sibling", "s"),
            ("featuresz", "z"),
            ("other/x", "x"),
        ] {
            put(&store, repo, "main", path, content.as_bytes());
        }
        commit(&store, repo, "main", "seed");
    }
    let source = dir.path().join("source");
    write_tree(
        &source,
        &[("keep", "k"), ("new/a.csv", "a"), ("new/b.csv", "b")],
    );
    let empty = created(dir.path().join("empty"));
    let steps: [(&Path, &str); 7] = [
        (&source, "features/"),
        (&source, "features/"), // unchanged
        (&source, "deep/er/"),  // a prefix with no objects yet
        (&source, "features"),  // no slash: `featureskeep`, and `features/…` goes
        (&empty, "deep/"),      // an empty directory removes what is under the prefix
        (&empty, "nothing/"),   // … and where there is nothing, changes nothing
        (&source, ""),          // the whole branch
    ];
    for (i, (from, prefix)) in steps.into_iter().enumerate() {
        let message = format!("step {i}");
        let fast = store
            .import_tree("fast", "main", from, prefix, &message, &Metadata::new())
            .unwrap();
        let slow = import_by_upload(
            &store,
            "slow",
            "main",
            from,
            prefix,
            &message,
            &Metadata::new(),
            &perago_workspace::NoProgress,
        )
        .unwrap();
        assert_eq!(fast.is_some(), slow.is_some(), "step {i} ({prefix:?})");
        if let Some(fast) = fast {
            assert_eq!(fast.message, message);
            assert_eq!(fast.parents.len(), 1);
        }
        assert_eq!(
            objects(&store, "fast", "main"),
            objects(&store, "slow", "main"),
            "step {i} ({prefix:?})"
        );
    }
    assert_eq!(
        objects(&store, "fast", "main")
            .into_iter()
            .map(|o| o.path)
            .collect::<Vec<_>>(),
        ["keep", "new/a.csv", "new/b.csv"]
    );
    // The middle of it, by hand: after step 3 the objects outside `features` were kept.
    let log = store.log("fast", "main", 10).unwrap();
    let step3 = log.iter().find(|c| c.message == "step 3").unwrap();
    let paths: Vec<String> = store
        .list_objects("fast", &step3.id, "")
        .unwrap()
        .into_iter()
        .map(|o| o.path)
        .collect();
    assert_eq!(
        paths,
        [
            "deep/er/keep",
            "deep/er/new/a.csv",
            "deep/er/new/b.csv",
            "featureskeep",
            "featuresnew/a.csv",
            "featuresnew/b.csv",
            "other/x"
        ]
    );
    // Both refuse the same things the same way.
    for repo in ["fast", "slow"] {
        let import = |repo: &str, branch: &str, from: &Path| {
            if repo == "fast" {
                store.import_tree(repo, branch, from, "p/", "m", &Metadata::new())
            } else {
                import_by_upload(
                    &store,
                    repo,
                    branch,
                    from,
                    "p/",
                    "m",
                    &Metadata::new(),
                    &perago_workspace::NoProgress,
                )
            }
        };
        assert!(matches!(
            import(repo, "nope", &source),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            import("no-such-repo", "main", &source),
            Err(StoreError::RepositoryNotFound(_))
        ));
        assert!(matches!(
            import(repo, "main", &dir.path().join("missing")),
            Err(StoreError::Io { .. })
        ));
    }
}

#[test]
fn a_large_import_round_trips_and_leaves_no_temporary_file() {
    // More new objects than the import syncs one by one (Linux: one syncfs instead).
    let (dir, store) = local();
    let source = dir.path().join("source");
    let pairs: Vec<(String, String)> = (0..150)
        .map(|i| (format!("d{}/f{i}", i % 7), format!("content {i}").repeat(i)))
        .collect();
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    write_tree(&source, &refs);
    store.create_repository("large", "main").unwrap();
    store
        .import_tree("large", "main", &source, "in/", "many", &Metadata::new())
        .unwrap()
        .unwrap();
    assert_eq!(object_files(&store).len(), 150);
    let out = dir.path().join("out");
    let (_, count) = transfer::export(&store, "large", "main", "in/", &out).unwrap();
    assert_eq!(count, 150);
    assert_eq!(files(&out), files(&source));
    assert!(
        std::fs::read_dir(store.root().join("tmp"))
            .unwrap()
            .next()
            .is_none()
    );
    assert_consistent(&store);
}

#[cfg(unix)]
#[test]
fn import_refuses_what_is_not_a_file_and_export_refuses_unsafe_paths() {
    use std::os::unix::ffi::OsStrExt;
    let (dir, store) = local();
    store.create_repository("links", "main").unwrap();
    let head = store.get_commit("links", "main").unwrap();
    let refused = |what: &str, make: &dyn Fn(&Path)| {
        let source = created(dir.path().join(what));
        write_tree(&source, &[("a", "a")]);
        make(&source);
        match store.import_tree("links", "main", &source, "", "m", &Metadata::new()) {
            Err(StoreError::Invalid(message)) => assert!(message.contains(what), "{message}"),
            other => panic!("{what}: {other:?}"),
        }
        assert!(object_files(&store).is_empty(), "{what}: nothing stored");
        assert_eq!(store.get_commit("links", "main").unwrap(), head);
    };
    refused("link", &|source| {
        std::os::unix::fs::symlink(source.join("a"), source.join("link")).unwrap()
    });
    refused("socket", &|source| {
        std::os::unix::net::UnixListener::bind(source.join("socket")).unwrap();
    });
    refused("latin1", &|source| {
        let name = std::ffi::OsStr::from_bytes(b"latin1-\xe9t\xe9");
        std::fs::write(source.join(name), "x").unwrap();
    });

    store.create_repository("unsafe", "main").unwrap();
    let out = dir.path().join("out");
    for path in ["../escape", "a//b", "/abs", "./x"] {
        put(&store, "unsafe", "main", path, b"x");
        commit(&store, "unsafe", "main", path);
        assert!(
            matches!(
                transfer::export(&store, "unsafe", "main", "", &out),
                Err(CheckoutError::UnsafePath { .. })
            ),
            "{path}"
        );
        assert!(!out.exists(), "{path}: a failed export leaves nothing");
        store.delete_object("unsafe", "main", path).unwrap();
        commit(&store, "unsafe", "main", path);
    }
    assert!(!dir.path().join("escape").exists());
}

#[test]
fn debris_of_a_crash_does_not_corrupt_the_store() {
    let (dir, store) = local();
    let root = store.root().to_owned();
    store.create_repository("crash", "main").unwrap();
    put(&store, "crash", "main", "before", b"b");
    let before = commit(&store, "crash", "main", "before");
    put(&store, "crash", "main", "staged", b"s");
    drop(store);
    // As if killed: temporary files (an object, a branch state, a commit, a whole repository)
    // never renamed, and a staging log whose last line is torn.
    std::fs::write(root.join("tmp/999999-0-0.tmp"), b"half an obj").unwrap();
    std::fs::write(root.join("tmp/999999-1-0.tmp"), b"{\"head\":\"00").unwrap();
    std::fs::create_dir_all(root.join("tmp/999999-2-0.repository/branches")).unwrap();
    let staging_dir = root.join("repositories/crash/staging");
    let log = std::fs::read_dir(&staging_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"{\"path\":\"torn\",\"value\":{\"checksum\":\"ab");
    std::fs::write(&log, bytes).unwrap();

    let store = LocalStore::open(&root).unwrap();
    assert_consistent(&store);
    assert_eq!(store.get_commit("crash", "main").unwrap(), before);
    put(&store, "crash", "main", "after", b"a");
    let after = commit(&store, "crash", "main", "after");
    assert_eq!(
        contents(&store, "crash", &after.id),
        map(&[("after", "a"), ("before", "b"), ("staged", "s")])
    );
    assert_eq!(store.repositories().unwrap(), ["crash"]);
    drop(dir);
}

// ===== several processes =====

/// The environment variable that makes [`child`] do work: `<role>:<store dir>:<worker id>`.
const CHILD: &str = "PERAGO_LOCAL_STORE_CHILD";

/// What a `forever` worker prints after its first round (libtest prints `test child ... `
/// before it on the same line).
const READY: &str = "PERAGO-CHILD-READY";

/// How many rounds each worker process does.
const CHILD_ROUNDS: usize = 6;

/// Spawns this test binary running only [`child`], as worker `id` of `role`.
fn spawn_child(role: &str, root: &Path, id: usize) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{role}:{}:{id}", root.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap()
}

/// One worker's rounds on store `root`: stage and commit `p<id>/<round>` on branch `shared`,
/// and merge a commit of `m<id>/<round>` from its own branch into `main`.
fn work(store: &LocalStore, id: usize, rounds: usize, mut each: impl FnMut(usize)) {
    for round in 0..rounds {
        put(store, "procs", "shared", &format!("p{id}/{round}"), b"p");
        store
            .commit("procs", "shared", "round", &Metadata::new())
            .unwrap();
        let branch = format!("w{id}_{round}");
        let main = store.get_commit("procs", "main").unwrap();
        store.create_branch("procs", &branch, &main.id).unwrap();
        put(store, "procs", &branch, &format!("m{id}/{round}"), b"m");
        commit(store, "procs", &branch, "merge me");
        let merged = store
            .merge("procs", &branch, "main", &branch, &Metadata::new())
            .unwrap();
        assert!(matches!(merged, Merge::Merged(_)), "{merged:?}");
        store.delete_branch("procs", &branch).unwrap();
        each(round);
    }
}

/// Not a test of its own: the body of a worker process (see [`spawn_child`]).
#[test]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let mut parts = spec.splitn(3, ':');
    let (role, root, id) = (
        parts.next().unwrap().to_owned(),
        parts.next().unwrap().to_owned(),
        parts.next().unwrap().parse::<usize>().unwrap(),
    );
    let store = LocalStore::open(root).unwrap();
    match role.as_str() {
        "rounds" => work(&store, id, CHILD_ROUNDS, |_| {}),
        // Works until killed, telling the parent after its first round.
        "forever" => work(&store, id, usize::MAX, |round| {
            if round == 0 {
                println!("{READY}");
            }
        }),
        other => panic!("unknown role {other}"),
    }
}

fn procs_store(dir: &Path) -> LocalStore {
    let store = LocalStore::open(dir.join("store")).unwrap();
    let first = store.create_repository("procs", "main").unwrap();
    store.create_branch("procs", "shared", &first.id).unwrap();
    store
}

#[test]
fn compare_and_swap_holds_across_processes_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store = procs_store(dir.path());
    const PROCESSES: usize = 3;
    const THREADS: usize = 2;
    let mut children: Vec<_> = (0..PROCESSES)
        .map(|id| spawn_child("rounds", store.root(), id))
        .collect();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Meanwhile every head read is a readable commit.
        let reader = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                for branch in ["main", "shared"] {
                    let head = store.get_commit("procs", branch).unwrap();
                    store.list_objects("procs", &head.id, "").unwrap();
                }
            }
        });
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let store = &store;
                scope.spawn(move || work(store, PROCESSES + t, CHILD_ROUNDS, |_| {}))
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        for child in &mut children {
            assert!(child.wait().unwrap().success());
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap();
    });
    let workers = PROCESSES + THREADS;
    // No update lost: every committed and every merged path is there.
    let paths = |branch: &str| -> Vec<String> {
        let head = store.get_commit("procs", branch).unwrap();
        store
            .list_objects("procs", &head.id, "")
            .unwrap()
            .into_iter()
            .map(|o| o.path)
            .collect()
    };
    let mut expected_shared = Vec::new();
    let mut expected_main = Vec::new();
    for id in 0..workers {
        for round in 0..CHILD_ROUNDS {
            expected_shared.push(format!("p{id}/{round}"));
            expected_main.push(format!("m{id}/{round}"));
        }
    }
    expected_shared.sort();
    expected_main.sort();
    assert_eq!(paths("shared"), expected_shared);
    assert_eq!(paths("main"), expected_main);
    let merges = store
        .log("procs", "main", usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|c| c.parents.len() == 2)
        .count();
    assert_eq!(merges, workers * CHILD_ROUNDS);
    assert_consistent(&store);
    assert_eq!(store.list_branches("procs").unwrap().len(), 2);
}

#[test]
fn a_process_killed_mid_write_leaves_a_working_store() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let store = procs_store(dir.path());
    for kill in 0..3 {
        let mut child = spawn_child("forever", store.root(), 100 + kill);
        let stdout = child.stdout.take().unwrap();
        let ready = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|line| line.contains(READY));
        assert!(ready, "the worker stopped before its first round");
        // SIGKILL, wherever it is: between or inside writes.
        child.kill().unwrap();
        child.wait().unwrap();
        let reopened = LocalStore::open(store.root()).unwrap();
        assert_consistent(&reopened);
        // The killed worker's branch may be left behind; the store still takes new work.
        work(&reopened, 200 + kill, 1, |_| {});
    }
}
