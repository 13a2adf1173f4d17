//! A lakeFS-compatible HTTP server for tests.
//!
//! lakeFS cannot run where perago is built and tested, so lakeFS-facing tests
//! start a [`LakeFsServer`] on `127.0.0.1` instead. It answers the subset of
//! the lakeFS REST API (`/api/v1`) that a workspace backend needs, with the
//! paths, bodies, status codes, messages and quirks of lakeFS v1.84 as the
//! page `docs/src/reference/lakefs.md` states them (cited by section number below), keeps
//! everything in memory, records every request, and can inject faults:
//! error statuses ([`LakeFsHandle::fail_next`]), canned raw answers
//! ([`LakeFsHandle::reply_next`]), dropped connections
//! ([`LakeFsHandle::drop_next`]), trickled bodies
//! ([`LakeFsHandle::slow_body_next`]), delays ([`LakeFsHandle::set_delay`]),
//! a stopped server ([`LakeFsServer::stop`]) and a destination head that
//! moves while a merge is in flight ([`LakeFsHandle::before_merge`]). Faults
//! are aimed with a [`Target`]: an [`Operation`], a method, a path prefix.
//!
//! Like the Conductor server, the API is blocking so plain `#[test]`s can
//! drive it, the HTTP side (hyper) runs on a private tokio runtime, and
//! tests wait for state changes with [`LakeFsHandle::wait_until`]
//! (condition-variable based), never with sleeps. [`LakeFsServer`]
//! dereferences to its [`LakeFsHandle`], a cloneable handle to the same
//! state that hooks and other threads can hold.
//!
//! ```no_run
//! use perago_testserver::lakefs::LakeFsServer;
//!
//! let server = LakeFsServer::start();
//! server.create_repository("songs", "main").unwrap();
//! server.put_object("songs", "main", "in/a.txt", b"hello".to_vec()).unwrap();
//! let commit = server.commit("songs", "main", "inputs").unwrap();
//! // … run a client against server.base_url() + "/api/v1", with
//! // server.access_key_id() / server.secret_access_key() …
//! assert_eq!(server.head("songs", "main"), Some(commit.id));
//! ```
//!
//! # What it serves
//!
//! Outside `/api/v1`: `GET /_health` (200 `alive!`). Under `/api/v1`, with
//! HTTP Basic auth (one access key fixed at start; missing or wrong → 401
//! `error authenticating request`) except for the health check:
//!
//! - `GET /healthcheck` (204, no auth);
//! - repositories: `POST /repositories` (201, 409 when it exists), `GET
//!   /repositories/{r}`;
//! - branches (§3.3–§3.6): get, create (201 `text/plain` commit id; 404 for
//!   the source before 409 for an existing name; atomic create-if-absent),
//!   delete, list (pagination, `prefix`, `show_hidden`);
//! - tags: `POST /repositories/{r}/tags` (201 `Ref`, 409 when it exists),
//!   `GET`/`DELETE /repositories/{r}/tags/{t}`; tags resolve in refs;
//! - objects (§3.7–§3.12): list (`prefix`, `delimiter`, `after`, `amount`
//!   ≤ 1000, `user_metadata`), stat, get and HEAD (a single `Range`, 206/416,
//!   quoted-MD5 `ETag`, `If-None-Match` → 304, lakeFS's caching and safety
//!   headers), upload (raw body or a multipart `content` part; hex-MD5
//!   checksum; `X-Lakefs-Meta-*` metadata; `If-None-Match: *` → 412, other
//!   conditions → 501), delete (204 even when missing), bulk delete;
//! - refs (§1.7): full ids, branches, tags, unique hex prefixes, `~N`, `^N`,
//!   `@` and `$`; a bare branch reads its staging area;
//! - commits (§3.13, §4.3, §4.4): commit with the exact id encoding,
//!   `commit: no changes`, `allow_empty`, `date`; getCommit of any ref; the
//!   log (§3.17: date then id descending, `after`, `amount`, `limit`,
//!   `first_parent`, `objects`, `prefixes`, `stop_at`);
//! - diffs: two-dot and three-dot diffRefs with `conflict` rows (§3.14),
//!   diffBranch (§3.15);
//! - merge (§3.16): the per-path 3-way table with no strategy, `dest-wins`
//!   and `source-wins`, 409 `{"reference":""}` on a conflict with nothing
//!   written, always a new merge commit (`squash_merge` too), the dirty
//!   destination and no-change 400s; and findMergeBase (§6.12).
//!
//! Merges follow §5: the merge is computed outside the state lock against
//! the destination's current head, then the head moves by compare-and-set;
//! a merge that lost the race recomputes against the new head (10 tries,
//! then 429 `Too many attempts, try again later`). Two concurrent merges
//! into one branch therefore both land unless their contents conflict.
//! Commits, branch creation and conditional uploads are atomic under the lock.
//!
//! Object bodies are `Bytes` shared by content (one copy per MD5 and size);
//! a GET clones a reference under the lock and sends the bytes after
//! releasing it, without copying. Upload bodies are read as they stream in
//! (MD5 computed on the way), up to [`LakeFsOptions::max_upload_bytes`].
//!
//! # Where it differs from a real lakeFS
//!
//! - Only the operations above exist; any other `/api/v1` path, or a served
//!   path with another method, is 404 `invalid API endpoint` (no 405).
//!   Paths outside `/api/v1` other than `/_health` are a plain 404 (a real
//!   server serves its web UI there). No `/openapi.json`, setup, config,
//!   user, auth, presign, import, revert, cherry-pick, hard reset, actions
//!   or garbage-collection endpoints.
//! - One user: the access key of [`LakeFsOptions`]; every authenticated call
//!   is allowed, and the committer is [`LakeFsOptions::committer`] (`admin`).
//!   No JWT, cookie or OIDC auth.
//! - No read-only repositories, branch protection, hooks or repository
//!   deletion, so no 403, 410 or 412-from-a-hook answers; `force` is accepted
//!   and ignored. `presign=true` answers 400 as on a `local://` store.
//! - Request validation covers what clients hit: required and typed query
//!   parameters (`amount` within −1…1000, booleans, `type`), the `Range`
//!   pattern, JSON bodies (object, required fields and their types,
//!   `Content-Type: application/json`). The 400 messages imitate
//!   kin-openapi's wording but are not byte-for-byte its own.
//! - Bodies larger than the limits (uploads: [`LakeFsOptions::max_upload_bytes`],
//!   JSON: 16 MiB) answer 413 `request body too large`.
//! - Each commit snapshots its whole tree; `meta_range_id` is a SHA-256 over
//!   the tree's paths and identities (§4.3 allows any deterministic hash).
//!   Physical addresses look like `<namespace>/data/gperago/<hex>` and name
//!   nothing.
//! - Commit and merge run under one lock, so the races of §4.4 and §5 that
//!   give 500 `predicate failed` or a sealed-but-uncommitted dirty branch
//!   cannot happen; concurrent commits serialise (the second one sees the
//!   first one's result: `commit: no changes` if nothing is left).
//! - The log's `since` filter is ignored; `after` that is not in the log
//!   gives an empty page.
//! - `X-Request-ID` is a counter, not a UUID.

mod api;
mod http;
mod ident;
mod listing;
mod merge;
mod refs;
mod service;
mod state;

pub use bytes::Bytes;

use crate::RawReply;
use crate::faults::Action;
use crate::server::{self, Listening};
use state::{Config, Shared, Upload};
use std::collections::BTreeMap;
use std::fmt;
use std::net::{Ipv4Addr, TcpListener};
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An error as the server answers it: the status and the `message` of the
/// `{"message": …}` body. The test-side API returns the same errors the HTTP
/// side would answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeFsError {
    /// The HTTP status, e.g. 404.
    pub status: u16,
    /// The error message, e.g. `branch not found`.
    pub message: String,
}

impl LakeFsError {
    pub(crate) fn new(status: u16, message: impl Into<String>) -> LakeFsError {
        LakeFsError {
            status,
            message: message.into(),
        }
    }
}

impl fmt::Display for LakeFsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}: {}", self.status, self.message)
    }
}

impl std::error::Error for LakeFsError {}

/// A lakeFS API operation (its `operationId`), used to aim faults and in
/// the request log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `GET /_health` (outside `/api/v1`).
    Health,
    /// `GET /api/v1/healthcheck`.
    HealthCheck,
    /// `POST /repositories`.
    CreateRepository,
    /// `GET /repositories/{r}`.
    GetRepository,
    /// `GET /repositories/{r}/branches`.
    ListBranches,
    /// `POST /repositories/{r}/branches`.
    CreateBranch,
    /// `GET /repositories/{r}/branches/{b}`.
    GetBranch,
    /// `DELETE /repositories/{r}/branches/{b}`.
    DeleteBranch,
    /// `POST /repositories/{r}/tags`.
    CreateTag,
    /// `GET /repositories/{r}/tags/{t}`.
    GetTag,
    /// `DELETE /repositories/{r}/tags/{t}`.
    DeleteTag,
    /// `GET /repositories/{r}/refs/{ref}/objects/ls`.
    ListObjects,
    /// `GET /repositories/{r}/refs/{ref}/objects/stat`.
    StatObject,
    /// `GET /repositories/{r}/refs/{ref}/objects`.
    GetObject,
    /// `HEAD /repositories/{r}/refs/{ref}/objects`.
    HeadObject,
    /// `POST /repositories/{r}/branches/{b}/objects`.
    UploadObject,
    /// `DELETE /repositories/{r}/branches/{b}/objects`.
    DeleteObject,
    /// `POST /repositories/{r}/branches/{b}/objects/delete`.
    DeleteObjects,
    /// `POST /repositories/{r}/branches/{b}/commits`.
    Commit,
    /// `GET /repositories/{r}/commits/{commitId}`.
    GetCommit,
    /// `GET /repositories/{r}/refs/{ref}/commits`.
    LogCommits,
    /// `GET /repositories/{r}/refs/{left}/diff/{right}`.
    DiffRefs,
    /// `GET /repositories/{r}/branches/{b}/diff`.
    DiffBranch,
    /// `POST /repositories/{r}/refs/{source}/merge/{destination}`.
    MergeIntoBranch,
    /// `GET /repositories/{r}/refs/{source}/merge/{destination}`.
    FindMergeBase,
}

/// Which requests a fault or delay applies to: all of the set conditions
/// must hold. [`Target::any`] matches every request; an [`Operation`]
/// converts into a target matching that operation.
///
/// ```
/// use perago_testserver::lakefs::{Operation, Target};
/// let uploads = Target::from(Operation::UploadObject);
/// let under_main = Target::any()
///     .method("POST")
///     .path_prefix("/api/v1/repositories/r/branches/main/");
/// # let _ = (uploads, under_main);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    method: Option<String>,
    path_prefix: Option<String>,
    operation: Option<Operation>,
}

impl Target {
    /// Every request.
    pub fn any() -> Target {
        Target::default()
    }

    /// Only requests with this method (`GET`, `POST`…; case-insensitive).
    #[must_use]
    pub fn method(mut self, method: &str) -> Target {
        self.method = Some(method.to_ascii_uppercase());
        self
    }

    /// Only requests whose path, as sent (still percent-encoded, without the
    /// query), starts with `prefix`.
    #[must_use]
    pub fn path_prefix(mut self, prefix: &str) -> Target {
        self.path_prefix = Some(prefix.to_owned());
        self
    }

    /// Only requests for this operation.
    #[must_use]
    pub fn operation(mut self, operation: Operation) -> Target {
        self.operation = Some(operation);
        self
    }

    pub(crate) fn matches(&self, method: &str, path: &str, operation: Option<Operation>) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self
                .path_prefix
                .as_deref()
                .is_none_or(|p| path.starts_with(p))
            && self.operation.is_none_or(|o| Some(o) == operation)
    }
}

impl From<Operation> for Target {
    fn from(operation: Operation) -> Target {
        Target::any().operation(operation)
    }
}

/// One request as the server received it, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeFsRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path as sent (percent-encoded), without the query string.
    pub path: String,
    /// The raw query string without `?` (empty when absent).
    pub query: String,
    /// The operation the path and method name, `None` for unknown routes.
    pub operation: Option<Operation>,
    /// Header names (lower-case) and values, in arrival order (the
    /// `Authorization` header included).
    pub headers: Vec<(String, String)>,
    /// The raw `Authorization` header value, if one was sent.
    pub authorization: Option<String>,
    /// The status the server answered; 0 if no answer was sent (dropped
    /// connection, server stopped, or still in progress).
    pub status: u16,
}

impl LakeFsRequest {
    /// Whether an `Authorization` header was sent.
    pub fn has_authorization(&self) -> bool {
        self.authorization.is_some()
    }

    /// The first value of a query parameter (percent-decoded, `+` as space).
    pub fn query_param(&self, name: &str) -> Option<String> {
        crate::url::query_param(&self.query, name)
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A commit, as `GET /repositories/{r}/commits/{id}` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// 64 lower-case hex characters (§4.3).
    pub id: String,
    /// `[]` for the first commit, `[previous head]` for a commit,
    /// `[destination head, source]` for a merge.
    pub parents: Vec<String>,
    /// `""` for the first commit.
    pub committer: String,
    /// The message.
    pub message: String,
    /// Unix seconds.
    pub creation_date: i64,
    /// `""` for the first commit, else this server's tree hash.
    pub meta_range_id: String,
    /// User metadata (merges add `.lakefs.merge.strategy`).
    pub metadata: BTreeMap<String, String>,
    /// 1 for the first commit, parent + 1, max(parents) + 1 for a merge.
    pub generation: i64,
    /// Always 1.
    pub version: i64,
}

impl CommitInfo {
    fn of(commit: &state::Commit) -> CommitInfo {
        CommitInfo {
            id: commit.id.clone(),
            parents: commit.parents.clone(),
            committer: commit.committer.clone(),
            message: commit.message.clone(),
            creation_date: commit.creation_date,
            meta_range_id: commit.meta_range_id.clone(),
            metadata: commit.metadata.clone(),
            generation: commit.generation,
            version: 1,
        }
    }
}

/// Server settings fixed at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeFsOptions {
    /// The one access key id HTTP Basic auth accepts.
    /// Default: `AKIAIOSFODNN7EXAMPLE`.
    pub access_key_id: String,
    /// Its secret. Default: `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`.
    pub secret_access_key: String,
    /// The `committer` of commits and merges made through the API (lakeFS
    /// uses the user's email, else its name). Default: `admin`.
    pub committer: String,
    /// The largest upload body accepted; larger ones answer 413.
    /// Default: 2 GiB.
    pub max_upload_bytes: u64,
}

impl Default for LakeFsOptions {
    fn default() -> Self {
        LakeFsOptions {
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            committer: "admin".into(),
            max_upload_bytes: 2 << 30,
        }
    }
}

/// A lakeFS-compatible server listening on `127.0.0.1:<ephemeral port>`.
///
/// It dereferences to its [`LakeFsHandle`], which holds the test-side API.
/// It stops when dropped. [`stop`](Self::stop) and [`restart`](Self::restart)
/// simulate an outage: while stopped, connections are refused; after a
/// restart the server listens on the same port with the same state.
pub struct LakeFsServer {
    handle: LakeFsHandle,
    /// `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    port: u16,
    /// `None` while stopped.
    listening: Option<Listening>,
}

impl fmt::Debug for LakeFsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LakeFsServer")
            .field("port", &self.port)
            .field("running", &self.listening.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for LakeFsServer {
    fn drop(&mut self) {
        self.stop();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Deref for LakeFsServer {
    type Target = LakeFsHandle;

    fn deref(&self) -> &LakeFsHandle {
        &self.handle
    }
}

impl LakeFsServer {
    /// Starts a server with default [`LakeFsOptions`].
    ///
    /// # Panics
    /// If no loopback port can be bound or the runtime cannot start.
    pub fn start() -> LakeFsServer {
        LakeFsServer::start_with(LakeFsOptions::default())
    }

    /// Starts a server with `options`.
    ///
    /// # Panics
    /// If no loopback port can be bound or the runtime cannot start.
    pub fn start_with(options: LakeFsOptions) -> LakeFsServer {
        let runtime = server::runtime("perago-lakefs");
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("perago-testserver lakefs: cannot bind 127.0.0.1:0");
        let port = listener
            .local_addr()
            .expect("a bound listener has an address")
            .port();
        let shared = Arc::new(Shared::new(Config {
            access_key_id: options.access_key_id,
            secret_access_key: options.secret_access_key,
            committer: options.committer,
            max_upload_bytes: options.max_upload_bytes,
        }));
        let listening = Listening::start(runtime.handle(), Arc::clone(&shared), listener)
            .expect("perago-testserver lakefs: cannot listen");
        LakeFsServer {
            handle: LakeFsHandle { shared },
            runtime: Some(runtime),
            port,
            listening: Some(listening),
        }
    }

    /// `http://127.0.0.1:PORT`; clients append `/api/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/api/v1`.
    pub fn api_url(&self) -> String {
        format!("{}/api/v1", self.base_url())
    }

    /// The port the server listens on (unchanged by restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle to the same state, for other threads and hooks.
    pub fn handle(&self) -> LakeFsHandle {
        self.handle.clone()
    }

    /// Whether the server accepts connections (false between stop and restart).
    pub fn is_running(&self) -> bool {
        self.listening.is_some()
    }

    /// Stops listening and closes every open connection: from return on,
    /// connections are refused. State is kept. No-op when stopped.
    pub fn stop(&mut self) {
        if let Some(listening) = self.listening.take() {
            listening.stop();
        }
    }

    /// Listens again on the same port with the same state. No-op when running.
    ///
    /// # Panics
    /// If the port was taken by someone else in between.
    pub fn restart(&mut self) {
        if self.listening.is_some() {
            return;
        }
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        let port = self.port;
        let listener = Listening::rebind(runtime.handle(), port).unwrap_or_else(|e| {
            panic!("perago-testserver lakefs: cannot listen on 127.0.0.1:{port} again: {e}")
        });
        let listening =
            Listening::start(runtime.handle(), Arc::clone(&self.handle.shared), listener)
                .expect("perago-testserver lakefs: cannot listen");
        self.listening = Some(listening);
    }
}

/// The test-side API of a [`LakeFsServer`]: inspect and change its data,
/// read the request log, inject faults. Cloneable and `Send`; every clone
/// works on the same server.
#[derive(Clone)]
pub struct LakeFsHandle {
    shared: Arc<Shared>,
}

impl fmt::Debug for LakeFsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LakeFsHandle").finish_non_exhaustive()
    }
}

impl LakeFsHandle {
    /// The access key id HTTP Basic auth accepts.
    pub fn access_key_id(&self) -> &str {
        &self.shared.config.access_key_id
    }

    /// The secret access key HTTP Basic auth accepts.
    pub fn secret_access_key(&self) -> &str {
        &self.shared.config.secret_access_key
    }

    /// The `Authorization` header value a client should send:
    /// `Basic base64(<key id>:<secret>)`.
    pub fn authorization(&self) -> String {
        http::basic_authorization(self.access_key_id(), self.secret_access_key())
    }

    // ---- data ----

    /// Creates repository `name` (storage namespace `local://<name>`) with
    /// its first commit (`Repository created`, committer `""`,
    /// `meta_range_id` `""`, no parents, generation 1) and the branch
    /// `default_branch` on it; returns the first commit's id. The same
    /// errors as `POST /repositories` (400 invalid id, 409 exists).
    pub fn create_repository(
        &self,
        name: &str,
        default_branch: &str,
    ) -> Result<String, LakeFsError> {
        self.shared.with(|s| {
            let repository =
                s.create_repository(name, &format!("local://{name}"), default_branch)?;
            let branch = repository.branch(default_branch)?;
            Ok(branch.head.clone())
        })
    }

    /// Creates branch `name` at the commit `source` (any ref) resolves to,
    /// as createBranch does; returns its head commit id.
    pub fn create_branch(
        &self,
        repository: &str,
        name: &str,
        source: &str,
    ) -> Result<String, LakeFsError> {
        self.shared
            .with(|s| api::create_branch(s, repository, name, source, false))
    }

    /// Stages `data` at `path` on `branch` (as an upload with
    /// `Content-Type: application/octet-stream` and no metadata); returns
    /// the checksum (hex MD5).
    pub fn put_object(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
        data: impl Into<Bytes>,
    ) -> Result<String, LakeFsError> {
        let data = data.into();
        let md5 = http::md5(&data);
        let upload = Upload {
            data,
            md5,
            content_type: "application/octet-stream".into(),
            metadata: BTreeMap::new(),
        };
        self.shared.with(|s| {
            let entry = api::stage_upload(s, repository, branch, path, upload, false)?;
            Ok(entry.checksum.clone())
        })
    }

    /// Stages a delete of `path` on `branch` (as deleteObject).
    pub fn delete_object(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
    ) -> Result<(), LakeFsError> {
        self.shared
            .with(|s| api::stage_delete(s, repository, branch, path))
    }

    /// Commits `branch`'s staged changes with `message` as the configured
    /// committer (as the commit operation: 400 `commit: no changes` when
    /// nothing changed).
    pub fn commit(
        &self,
        repository: &str,
        branch: &str,
        message: &str,
    ) -> Result<CommitInfo, LakeFsError> {
        let committer = self.shared.config.committer.clone();
        self.shared.with(|s| {
            let repo = s.repository_mut(repository)?;
            let commit = repo.commit_branch(
                branch,
                state::CommitRequest {
                    committer,
                    message: message.to_owned(),
                    metadata: BTreeMap::new(),
                    creation_date: state::now(),
                    allow_empty: false,
                },
            )?;
            s.touch();
            Ok(CommitInfo::of(&commit))
        })
    }

    /// The head commit id of `branch`, `None` if there is no such branch.
    pub fn head(&self, repository: &str, branch: &str) -> Option<String> {
        self.shared.with(|s| {
            let repo = s.repositories.get(repository)?;
            Some(repo.branches.get(branch)?.head.clone())
        })
    }

    /// The bytes of `path` as a read at `reference` sees them (a bare
    /// branch includes its staged writes); `None` if absent or the ref does
    /// not resolve.
    pub fn object(&self, repository: &str, reference: &str, path: &str) -> Option<Bytes> {
        self.shared.with(|s| {
            let repo = s.repositories.get(repository)?;
            let resolved = repo.resolve(reference).ok()?;
            let entry = repo.view(&resolved).get(path)?;
            Some(entry.blob.data.clone())
        })
    }

    /// The commit `reference` (any ref expression) resolves to.
    pub fn get_commit(&self, repository: &str, reference: &str) -> Option<CommitInfo> {
        self.shared.with(|s| {
            let repo = s.repositories.get(repository)?;
            let resolved = repo.resolve(reference).ok()?;
            Some(CommitInfo::of(&resolved.commit))
        })
    }

    /// How many commits the repository holds (the first one included).
    pub fn commits_count(&self, repository: &str) -> usize {
        self.shared.with(|s| {
            s.repositories
                .get(repository)
                .map_or(0, |r| r.commits.len())
        })
    }

    /// The repository's branch names, hidden ones included, in order.
    pub fn branches(&self, repository: &str) -> Vec<String> {
        self.shared.with(|s| {
            s.repositories
                .get(repository)
                .map(|r| r.branches.keys().cloned().collect())
                .unwrap_or_default()
        })
    }

    /// Runs `hook` once, in the next merge into `branch`: after the merge
    /// was computed against the destination's head and before that head
    /// moves. A hook that commits to or merges into the destination makes
    /// the merge see a concurrent head move, so it retries against the new
    /// head (§5). The hook runs on a server thread and must not wait for
    /// the merge it interrupts.
    pub fn before_merge(
        &self,
        repository: &str,
        branch: &str,
        hook: impl FnOnce(&LakeFsHandle) + Send + 'static,
    ) {
        self.shared.with(|s| {
            s.merge_hooks
                .push(((repository.to_owned(), branch.to_owned()), Box::new(hook)));
            s.touch();
        });
    }

    // ---- requests ----

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<LakeFsRequest> {
        self.shared.with(|s| s.requests.clone())
    }

    /// Forgets the recorded requests (state is kept).
    pub fn clear_requests(&self) {
        self.shared.with(|s| {
            s.requests_cleared += s.requests.len();
            s.requests.clear();
            s.touch();
        });
    }

    /// Blocks until `pred` holds or `timeout` passes; returns whether it held.
    ///
    /// `pred` is re-evaluated after every state change (a request arriving
    /// or answered, a write, a commit…), so tests need no sleeps or polling
    /// loops. It must not block.
    pub fn wait_until(&self, timeout: Duration, pred: impl Fn(&LakeFsHandle) -> bool) -> bool {
        let now = Instant::now();
        let deadline = now
            .checked_add(timeout)
            .unwrap_or(now + Duration::from_secs(86_400 * 365));
        loop {
            let seen = self.shared.generation();
            if pred(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.shared.wait_change(seen, deadline);
        }
    }

    // ---- faults ----

    /// The next `times` requests matching `target` are answered with
    /// `status` and `{"message": message}`, without touching the state (the
    /// request is still recorded; an upload's body is not read).
    pub fn fail_next(&self, target: impl Into<Target>, times: usize, status: u16, message: &str) {
        self.add_fault(target, times, Action::Status(status, message.to_owned()));
    }

    /// The next `times` requests matching `target` are answered with
    /// `reply` exactly, without touching the state.
    pub fn reply_next(&self, target: impl Into<Target>, times: usize, reply: RawReply) {
        self.add_fault(target, times, Action::Reply(reply));
    }

    /// The next `times` requests matching `target` get no answer: the
    /// connection is closed after the request head is read (state untouched).
    pub fn drop_next(&self, target: impl Into<Target>, times: usize) {
        self.add_fault(target, times, Action::Drop);
    }

    /// The next `times` requests matching `target` are handled as usual,
    /// then the status and headers are sent at once and the body in slices
    /// spread evenly over `over`.
    pub fn slow_body_next(&self, target: impl Into<Target>, times: usize, over: Duration) {
        self.add_fault(target, times, Action::SlowBody(over));
    }

    fn add_fault(&self, target: impl Into<Target>, times: usize, action: Action) {
        let target = target.into();
        self.shared.with(|s| {
            s.faults.add(target, times, action);
            s.touch();
        });
    }

    /// Every request matching `target` waits `delay` before it is handled;
    /// `Duration::ZERO` removes the delay.
    pub fn set_delay(&self, target: impl Into<Target>, delay: Duration) {
        let target = target.into();
        self.shared.with(|s| {
            s.faults.set_delay(target, delay);
            s.touch();
        });
    }

    /// Removes every pending fault, delay and merge hook.
    pub fn clear_faults(&self) {
        self.shared.with(|s| {
            s.faults.clear();
            s.merge_hooks.clear();
            s.touch();
        });
    }
}
