//! The lakeFS client end to end against perago-testserver's lakeFS-compatible server: the whole
//! [`Store`] surface on one repository, pagination past 1000, the merge outcomes, the error
//! mapping, and faults the server injects (5xx, dropped connections, a wrong key).
#![cfg(feature = "lakefs")]

use perago_testserver::lakefs::{LakeFsServer, Operation};
use perago_workspace::lakefs::{LakeFs, LakeFsSettings, RetryPolicy};
use perago_workspace::store::{Change, ChangeKind};
use perago_workspace::{CommitId, Merge, Metadata, ObjectInfo, Store, StoreError};
use std::time::Duration;

const REPO: &str = "song-000123";

fn client(server: &LakeFsServer) -> LakeFs {
    let settings = LakeFsSettings::new(
        &server.api_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )
    .unwrap();
    LakeFs::new(settings).unwrap().with_retry(RetryPolicy {
        max_attempts: 4,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    })
}

fn id(text: &str) -> CommitId {
    CommitId::parse(text).unwrap()
}

/// An error free of the server's secret.
#[track_caller]
fn clean(server: &LakeFsServer, e: StoreError) -> StoreError {
    for text in [e.to_string(), format!("{e:?}")] {
        assert!(!text.contains(server.secret_access_key()), "{text}");
        assert!(!text.contains(&server.authorization()[6..]), "{text}");
    }
    e
}

/// A repository whose `main` holds `inputs` in one commit after the first.
fn repository(server: &LakeFsServer, inputs: &[(&str, &[u8])]) -> CommitId {
    server.create_repository(REPO, "main").unwrap();
    for (path, content) in inputs {
        server
            .put_object(REPO, "main", path, content.to_vec())
            .unwrap();
    }
    id(&server.commit(REPO, "main", "inputs").unwrap().id)
}

#[test]
fn read_a_commit_download_it_and_publish_by_merge() {
    let server = LakeFsServer::start();
    let inputs: [(&str, &[u8]); 4] = [
        ("in/a+b c.json", b"{\"k\":1}"),
        ("in/ünï/x.txt", b"hello"),
        ("in/empty", b""),
        ("other/z", b"zz"),
    ];
    let c = repository(&server, &inputs);
    let lakefs = client(&server);
    assert_eq!(
        lakefs.describe(),
        format!("lakeFS at {}", server.base_url())
    );
    lakefs.check_repository(REPO).unwrap();

    // Reading.
    let head = lakefs.get_commit(REPO, "main").unwrap();
    assert_eq!(head.id, c);
    assert_eq!(head.message, "inputs");
    assert_eq!(lakefs.get_commit(REPO, c.as_str()).unwrap(), head);
    let log = lakefs.log(REPO, "main", 10).unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0], head);
    assert_eq!(log[1].message, "Repository created");
    assert_eq!(head.parents, [log[1].id.clone()]);
    assert_eq!(lakefs.log(REPO, "main~1", 10).unwrap(), log[1..]);
    assert_eq!(
        lakefs.list_branches(REPO).unwrap(),
        [("main".to_owned(), c.clone())]
    );
    let objects = lakefs.list_objects(REPO, &c, "in/").unwrap();
    let mut expected: Vec<&str> = inputs[..3].iter().map(|(p, _)| *p).collect();
    expected.sort();
    assert!(objects.iter().map(|o| o.path.as_str()).eq(expected));
    let dir = tempfile::tempdir().unwrap();
    for object in &objects {
        let content = inputs.iter().find(|(p, _)| *p == object.path).unwrap().1;
        assert_eq!(object.size, content.len() as u64);
        assert!(lakefs.checksum().recognises(&object.checksum), "{object:?}");
        let dest = dir.path().join(object.path.replace('/', "_"));
        lakefs.download(REPO, &c, object, &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), content, "{}", object.path);
    }

    // Staging, committing.
    lakefs.create_branch(REPO, "ws-7f3c", &c).unwrap();
    let source = dir.path().join("out.json");
    std::fs::write(&source, b"{\"out\":true}").unwrap();
    let uploaded = lakefs
        .upload(REPO, "ws-7f3c", "out/a+b.json", &source)
        .unwrap();
    assert_eq!(uploaded.path, "out/a+b.json");
    assert_eq!(uploaded.size, 12);
    lakefs.delete_object(REPO, "ws-7f3c", "in/empty").unwrap();
    lakefs
        .delete_object(REPO, "ws-7f3c", "never/there")
        .unwrap();
    let metadata = Metadata::from([("attempt".to_owned(), "3".to_owned())]);
    let s = lakefs
        .commit(REPO, "ws-7f3c", "task output", &metadata)
        .unwrap()
        .unwrap();
    assert_eq!(s.parents, std::slice::from_ref(&c));
    assert_eq!(s.metadata, metadata);
    assert_eq!(
        lakefs.commit(REPO, "ws-7f3c", "again", &metadata).unwrap(),
        None
    );
    assert_eq!(
        lakefs.diff(REPO, &c, &s.id, "").unwrap(),
        [
            Change {
                kind: ChangeKind::Removed,
                path: "in/empty".into()
            },
            Change {
                kind: ChangeKind::Added,
                path: "out/a+b.json".into()
            },
        ]
    );
    assert_eq!(lakefs.diff(REPO, &c, &s.id, "out/").unwrap().len(), 1);

    // Publishing.
    let Merge::Merged(m) = lakefs
        .merge(
            REPO,
            "ws-7f3c",
            "main",
            "publish attempt 3",
            &Metadata::new(),
        )
        .unwrap()
    else {
        panic!("not merged")
    };
    let merge = lakefs.get_commit(REPO, "main").unwrap();
    assert_eq!(merge.id, m);
    assert_eq!(merge.parents, [c.clone(), s.id.clone()]);
    assert_eq!(
        lakefs
            .merge(REPO, "ws-7f3c", "main", "again", &Metadata::new())
            .unwrap(),
        Merge::NoChanges
    );
    let published = lakefs.list_objects(REPO, &m, "out/").unwrap();
    assert_eq!(published, [uploaded]);

    lakefs.delete_branch(REPO, "ws-7f3c").unwrap();
    let e = clean(&server, lakefs.delete_branch(REPO, "ws-7f3c").unwrap_err());
    assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");
    assert_eq!(server.branches(REPO), ["main"]);
}

#[test]
fn conflicts_dirty_destinations_and_taken_names() {
    let server = LakeFsServer::start();
    let c = repository(&server, &[("p", b"base")]);
    let lakefs = client(&server);
    let dir = tempfile::tempdir().unwrap();
    for (branch, content) in [("ws-a", "a"), ("ws-b", "b")] {
        lakefs.create_branch(REPO, branch, &c).unwrap();
        let file = dir.path().join(branch);
        std::fs::write(&file, content).unwrap();
        lakefs.upload(REPO, branch, "p", &file).unwrap();
        lakefs
            .commit(REPO, branch, branch, &Metadata::new())
            .unwrap()
            .unwrap();
    }
    let e = clean(&server, lakefs.create_branch(REPO, "ws-a", &c).unwrap_err());
    assert!(matches!(e, StoreError::AlreadyExists(_)), "{e:?}");

    let merged = lakefs
        .merge(REPO, "ws-a", "main", "a", &Metadata::new())
        .unwrap();
    assert!(matches!(merged, Merge::Merged(_)), "{merged:?}");
    let head = server.head(REPO, "main").unwrap();
    assert_eq!(
        lakefs
            .merge(REPO, "ws-b", "main", "b", &Metadata::new())
            .unwrap(),
        Merge::Conflict
    );
    assert_eq!(server.head(REPO, "main").unwrap(), head, "nothing written");

    server
        .put_object(REPO, "main", "dirt", b"x".to_vec())
        .unwrap();
    let e = clean(
        &server,
        lakefs
            .merge(REPO, "ws-b", "main", "b", &Metadata::new())
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("dirty"), "{e}");
}

#[test]
fn listings_page_past_1000() {
    let server = LakeFsServer::start();
    server.create_repository(REPO, "main").unwrap();
    for i in 0..2100 {
        server
            .put_object(
                REPO,
                "main",
                &format!("f/{i:05}"),
                format!("{i}").into_bytes(),
            )
            .unwrap();
    }
    let c = id(&server.commit(REPO, "main", "many").unwrap().id);
    for i in 0..1005 {
        server
            .put_object(REPO, "main", "counter", format!("{i}").into_bytes())
            .unwrap();
        server.commit(REPO, "main", &format!("c{i}")).unwrap();
    }
    for i in 0..1003 {
        server
            .create_branch(REPO, &format!("b{i:04}"), c.as_str())
            .unwrap();
    }
    let lakefs = client(&server);
    let objects = lakefs.list_objects(REPO, &c, "f/").unwrap();
    assert_eq!(objects.len(), 2100);
    assert_eq!(objects[2099].path, "f/02099");
    assert_eq!(lakefs.list_objects(REPO, &c, "").unwrap().len(), 2100);
    assert_eq!(lakefs.log(REPO, "main", 5000).unwrap().len(), 1 + 1 + 1005);
    assert_eq!(lakefs.log(REPO, "main", 1001).unwrap().len(), 1001);
    assert_eq!(lakefs.list_branches(REPO).unwrap().len(), 1004);
    let head = id(&server.head(REPO, "main").unwrap());
    assert_eq!(lakefs.diff(REPO, &head, &c, "").unwrap().len(), 1);
}

#[test]
fn errors_are_mapped_and_faults_retried() {
    let server = LakeFsServer::start();
    let c = repository(&server, &[("in/a", b"hello")]);
    let lakefs = client(&server);

    let e = clean(&server, lakefs.get_commit("nope-repo", "main").unwrap_err());
    assert!(matches!(e, StoreError::RepositoryNotFound(_)), "{e:?}");
    let e = clean(&server, lakefs.get_commit(REPO, "gone").unwrap_err());
    assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");
    let missing = ObjectInfo {
        path: "in/missing".into(),
        size: 1,
        checksum: String::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let e = clean(
        &server,
        lakefs
            .download(REPO, &c, &missing, &dir.path().join("m"))
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");

    let wrong = LakeFs::new(
        LakeFsSettings::new(&server.base_url(), server.access_key_id(), "wrong-secret").unwrap(),
    )
    .unwrap();
    let e = wrong.list_branches(REPO).unwrap_err();
    assert!(!e.to_string().contains("wrong-secret"), "{e}");
    assert!(matches!(e, StoreError::Unauthorized(_)), "{e:?}");

    // 5xx and dropped connections on reads are retried.
    server.fail_next(Operation::ListObjects, 2, 500, "internal server error");
    assert_eq!(lakefs.list_objects(REPO, &c, "").unwrap().len(), 1);
    server.drop_next(Operation::GetObject, 1);
    server.fail_next(
        Operation::GetObject,
        1,
        503,
        "Throughput exceeded. Slow down and retry",
    );
    let object = &lakefs.list_objects(REPO, &c, "in/").unwrap()[0];
    let dest = dir.path().join("a");
    lakefs.download(REPO, &c, object, &dest).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), b"hello");
    server.fail_next(Operation::GetCommit, 4, 500, "internal server error");
    let e = clean(&server, lakefs.get_commit(REPO, "main").unwrap_err());
    assert!(
        e.to_string()
            .ends_with("500 internal server error (after 4 tries)"),
        "{e}"
    );

    // A merge is retried when the branch is locked, but not after a lost answer.
    lakefs.create_branch(REPO, "ws-1", &c).unwrap();
    let file = dir.path().join("o");
    std::fs::write(&file, b"out").unwrap();
    lakefs.upload(REPO, "ws-1", "out/o", &file).unwrap();
    lakefs
        .commit(REPO, "ws-1", "out", &Metadata::new())
        .unwrap()
        .unwrap();
    server.drop_next(Operation::MergeIntoBranch, 1);
    let e = clean(
        &server,
        lakefs
            .merge(REPO, "ws-1", "main", "m", &Metadata::new())
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(
        e.to_string().contains("may or may not have taken effect"),
        "{e}"
    );
    assert_eq!(server.head(REPO, "main").unwrap(), c.as_str());
    server.fail_next(
        Operation::MergeIntoBranch,
        2,
        500,
        "branch is currently locked, try again later",
    );
    assert!(matches!(
        lakefs
            .merge(REPO, "ws-1", "main", "m", &Metadata::new())
            .unwrap(),
        Merge::Merged(_)
    ));
}

#[test]
fn parallel_downloads_through_one_client() {
    let server = LakeFsServer::start();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 241) as u8).collect();
    server.create_repository(REPO, "main").unwrap();
    for i in 0..8 {
        server
            .put_object(REPO, "main", &format!("big/{i}"), big.clone())
            .unwrap();
    }
    let c = id(&server.commit(REPO, "main", "big").unwrap().id);
    let lakefs = client(&server);
    let objects = lakefs.list_objects(REPO, &c, "big/").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for object in &objects {
            let (lakefs, c, dir) = (&lakefs, &c, dir.path());
            scope.spawn(move || {
                let dest = dir.join(object.path.replace('/', "_"));
                lakefs.download(REPO, c, object, &dest).unwrap();
            });
        }
    });
    for object in &objects {
        let dest = dir.path().join(object.path.replace('/', "_"));
        assert_eq!(std::fs::read(dest).unwrap(), big);
    }
}
