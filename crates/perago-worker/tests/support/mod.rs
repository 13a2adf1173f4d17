//! What the worker's tests share: the example crate whose tasks they run (its directory and its
//! built binary), and the two workspace backends they run against: the embedded local store in
//! a temporary directory, and the lakeFS client against the lakeFS-compatible test server.
//! Each test that concerns workspaces runs on both.

#![allow(dead_code)] // each test file uses a part

use perago::runtime::ExecutionContext;
use perago_testserver::lakefs::LakeFsServer;
use perago_workspace::lakefs::{LakeFs, LakeFsSettings, RetryPolicy};
use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, Store, transfer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The example crate: its sample inputs (`inputs/`) and the content of its sample repository
/// (`workspace/`).
pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perago-example")
}

/// The example's binary (`perago_worker::cli::main` over its tasks), as cargo built it for the
/// example's own tests: run these with them (`cargo test -p perago-worker -p perago-example`).
pub fn example_binary() -> PathBuf {
    perago_testserver::process::built_binary("perago-example")
}

/// The repository of the example's inputs.
pub const REPOSITORY: &str = "song-000123";

/// A store with one repository, `song-000123`, whose `main` branch is empty.
pub struct Backend {
    pub name: &'static str,
    pub store: Arc<dyn Store>,
    /// The lakeFS test server, for the lakeFS backend.
    pub lakefs: Option<LakeFsServer>,
    /// The local store's directory, for the local backend.
    pub local_root: Option<PathBuf>,
    scratch: tempfile::TempDir,
}

impl Backend {
    /// The embedded local store.
    pub fn local() -> Backend {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().join("store");
        let store = LocalStore::open(&root).unwrap();
        store.create_repository(REPOSITORY, "main").unwrap();
        Backend {
            name: "local",
            store: Arc::new(store),
            lakefs: None,
            local_root: Some(root),
            scratch,
        }
    }

    /// lakeFS: the client against a fresh test server. Retries wait 1 ms, so fault tests stay
    /// quick.
    pub fn lakefs() -> Backend {
        let server = LakeFsServer::start();
        server.create_repository(REPOSITORY, "main").unwrap();
        let store = LakeFs::new(Self::lakefs_settings(&server))
            .unwrap()
            .with_retry(RetryPolicy {
                max_attempts: 3,
                initial_backoff: Duration::from_millis(1),
                max_backoff: Duration::from_millis(1),
            });
        Backend {
            name: "lakefs",
            store: Arc::new(store),
            lakefs: Some(server),
            local_root: None,
            scratch: tempfile::tempdir().unwrap(),
        }
    }

    /// The client settings of `server`.
    pub fn lakefs_settings(server: &LakeFsServer) -> LakeFsSettings {
        LakeFsSettings::new(
            &server.base_url(),
            server.access_key_id(),
            server.secret_access_key(),
        )
        .unwrap()
    }

    /// Both backends.
    pub fn both() -> [Backend; 2] {
        [Backend::local(), Backend::lakefs()]
    }

    /// Commits `dir`'s files as the whole content of `main`; returns the commit id.
    pub fn import(&self, dir: &Path) -> String {
        transfer::import(
            self.store.as_ref(),
            REPOSITORY,
            "main",
            dir,
            "",
            &format!("import {}", dir.display()),
            &Metadata::new(),
        )
        .unwrap()
        .expect("the import changes main")
        .id
        .to_string()
    }

    /// Commits the example's workspace (`features/…`); returns the commit id.
    pub fn import_example(&self) -> String {
        self.import(&example_workspace())
    }

    /// The head of `branch`.
    pub fn head(&self, branch: &str) -> String {
        self.store
            .get_commit(REPOSITORY, branch)
            .unwrap()
            .id
            .to_string()
    }

    /// The content of `path` at `reference`, if it exists.
    pub fn read(&self, reference: &str, path: &str) -> Option<String> {
        let commit = self.store.get_commit(REPOSITORY, reference).unwrap();
        let objects = self
            .store
            .list_objects(REPOSITORY, &commit.id, path)
            .unwrap();
        let object = objects.into_iter().find(|o| o.path == path)?;
        let file = self
            .scratch
            .path()
            .join(format!("read-{}", object.checksum));
        self.store
            .download(REPOSITORY, &commit.id, &object, &file)
            .unwrap();
        Some(std::fs::read_to_string(file).unwrap())
    }

    /// An execution context on this store, its attempt directories under this backend's
    /// scratch directory (so a test can see that they are removed).
    pub fn context(&self) -> ExecutionContext {
        ExecutionContext {
            store: Some(Arc::clone(&self.store)),
            scratch_dir: self.scratch_dir(),
            ..ExecutionContext::default()
        }
    }

    /// Where attempts materialise their workspaces.
    pub fn scratch_dir(&self) -> PathBuf {
        self.scratch.path().join("attempts")
    }

    /// What is left in the scratch directory (nothing, after every attempt).
    pub fn leftovers(&self) -> Vec<String> {
        match std::fs::read_dir(self.scratch_dir()) {
            Ok(entries) => entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// The example crate's workspace directory: the content of its repository.
pub fn example_workspace() -> PathBuf {
    example_dir().join("workspace")
}

/// The `workspace` of an input at `commit`.
pub fn workspace_at(commit: &str) -> Value {
    json!({
        "repository": REPOSITORY,
        "branch": "main",
        "ref_type": "commit",
        "ref": commit,
    })
}
