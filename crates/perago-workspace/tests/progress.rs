//! Imports and exports tell their progress (what `perago workspace import|export` draws):
//! the files and bytes to move first, then each file once, on both backends.

use perago_testserver::lakefs::LakeFsServer;
use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, Progress, Store, transfer};
use std::sync::Mutex;

#[derive(Default)]
struct Told {
    start: Mutex<Vec<(u64, u64)>>,
    files: Mutex<Vec<u64>>,
}

impl Progress for Told {
    fn start(&self, files: u64, bytes: u64) {
        self.start.lock().unwrap().push((files, bytes));
    }

    fn file(&self, bytes: u64) {
        self.files.lock().unwrap().push(bytes);
    }
}

fn round_trip(store: &dyn Store) {
    let source = tempfile::tempdir().unwrap();
    let sizes = [0usize, 3, 4096, 100_000];
    for (i, size) in sizes.iter().enumerate() {
        let dir = source.path().join(format!("d{}", i % 2));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}")), vec![b'x'; *size]).unwrap();
    }
    let total: u64 = sizes.iter().map(|s| *s as u64).sum();
    let told = Told::default();
    let commit = transfer::import_reporting(
        store,
        "repo",
        "main",
        source.path(),
        "in/",
        "m",
        &Metadata::new(),
        &told,
    )
    .unwrap()
    .unwrap();
    assert_eq!(*told.start.lock().unwrap(), [(4, total)]);
    let mut files = told.files.lock().unwrap().clone();
    files.sort_unstable();
    assert_eq!(files, [0, 3, 4096, 100_000]);

    let told = Told::default();
    let out = tempfile::tempdir().unwrap();
    let (_, written) = transfer::export_reporting(
        store,
        "repo",
        commit.id.as_str(),
        "in/",
        &out.path().join("x"),
        &told,
    )
    .unwrap();
    assert_eq!(written, 4);
    assert_eq!(*told.start.lock().unwrap(), [(4, total)]);
    assert_eq!(told.files.lock().unwrap().iter().sum::<u64>(), total);
}

#[test]
fn the_local_store_tells_its_progress() {
    let root = tempfile::tempdir().unwrap();
    let store = LocalStore::open(root.path()).unwrap();
    store.create_repository("repo", "main").unwrap();
    round_trip(&store);
}

#[test]
fn lakefs_tells_its_progress() {
    let server = LakeFsServer::start();
    server.create_repository("repo", "main").unwrap();
    let settings = LakeFsSettings::new(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )
    .unwrap();
    round_trip(&LakeFs::new(settings).unwrap());
}
