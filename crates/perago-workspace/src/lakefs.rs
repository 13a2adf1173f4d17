//! The lakeFS REST client (API v1, `docs/src/reference/lakefs.md`): [`LakeFs`] implements [`Store`] over
//! a lakeFS server, blocking, with HTTP Basic auth on every request.
//!
//! ```no_run
//! use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
//! use perago_workspace::Store;
//!
//! // LAKECTL_SERVER_ENDPOINT_URL, LAKECTL_CREDENTIALS_ACCESS_KEY_ID, …_SECRET_ACCESS_KEY
//! if let Some(settings) = LakeFsSettings::from_env()? {
//!     let lakefs = LakeFs::new(settings)?;
//!     let head = lakefs.get_commit("song-000123", "main")?;
//!     let objects = lakefs.list_objects("song-000123", &head.id, "features/")?;
//! }
//! # Ok::<(), perago_workspace::StoreError>(())
//! ```
//!
//! **Reading** (commits, logs, branches, object listings, diffs) pages through lakeFS's
//! listings 1000 at a time. A **download** streams the object into its file through a 64 KiB
//! buffer, never holding it whole, and checks its size and (for an MD5 checksum, which is what
//! lakeFS computes for uploads) its checksum: an answer announcing or carrying fewer or more
//! bytes than the object has, or other content, is [`StoreError::Corrupt`] (not retried: that
//! is what lakeFS serves), and a failed download removes its file. An **upload** streams the
//! file with its length and checks lakeFS's size and checksum against the file's. One object
//! is hashed as it streams; many ([`Store::download_all`], [`Store::upload_all`]: a checkout, a
//! publication, an import) are hashed sixteen side by side ([`crate::md5_lanes`]), each file
//! once written or just before it is sent, at less than half the CPU time, reading the files
//! back included; a small file to send is read once, and the bytes hashed are the bytes sent.
//!
//! **Retries.** A request is tried up to [`RetryPolicy::max_attempts`] times (5 by default),
//! with an exponential, jittered backoff between tries. What is retried depends on whether a
//! repetition can do harm:
//! - reads, downloads (each retry restarts the file), uploads (each resends the file),
//!   object deletes and branch creation and deletion are retried after a connection error,
//!   a body that breaks off, a 429 and any 5xx;
//! - commit and merge are retried only when lakeFS certainly did nothing: no connection was
//!   made, a 429 (its optimistic update gave up), or a 500 `branch is currently locked`. A
//!   lost answer (the connection broke after the request was sent) or another 5xx is
//!   reported as [`StoreError::Unavailable`] saying it may or may not have taken effect, since
//!   repeating a merge that happened answers `no changes` (spec §6.7): the caller verifies by
//!   the log. Commits and merges go on a fresh connection each, so that a stale pooled one
//!   cannot lose a request.
//!
//! A branch creation whose earlier attempt may have succeeded (its answer was lost, or was a
//! 5xx) and whose retry then finds the branch is `Unavailable`, not `AlreadyExists`, since the
//! branch may be its own; a branch deletion in that case succeeds on the retry's 404.
//!
//! **Timeouts** ([`Timeouts`]): connecting, and each wait for an answer's head or for a single
//! read or write of a body; no overall limit, so a large download takes as long as it needs
//! while it moves.
//!
//! **Messages** name the store, the operation, the repository and the path, e.g. `lakeFS at
//! http://127.0.0.1:8000: list objects of song-1@0123456789ab under features/: 500 internal
//! server error (after 5 tries)`; `NotFound`, `RepositoryNotFound` and `AlreadyExists` name
//! what is missing or taken and the store, e.g. `branch ws-1 of song-1 (lakeFS at …) not
//! found`. The module logs nothing, and nothing it produces (errors, `Debug`) carries the
//! secret access key or the `Authorization` header: [`Secret`]'s `Debug` is redacted, an
//! endpoint URL with an `@` (maybe `user:password@`) is refused without being echoed, and a
//! server message that echoes either secret has it cut out.
//!
//! [`LakeFs`] is `Sync`: threads share one client, e.g. parallel downloads through one
//! `&LakeFs`, and its connection pool, which keeps up to 16 idle connections to the server
//! for reuse.

mod http;
mod settings;
mod wire;

pub use http::{RetryPolicy, Timeouts};
pub use settings::{
    ACCESS_KEY_ID_ENV, ENDPOINT_ENV, LakeFsSettings, SECRET_ACCESS_KEY_ENV, Secret,
};

use crate::md5_lanes;
use crate::store::{
    Change, ChangeKind, Checksum, Commit, CommitId, Merge, Metadata, ObjectInfo, Result, Store,
    StoreError,
};
use base64::Engine as _;
use http::{Broken, Method, Payload, Replay, Request, hex, segment};
use md5::{Digest, Md5};
use std::cell::Cell;
use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The threads that hash a transfer's files ([`md5_lanes`]): one per core, at most one per
/// transfer thread.
fn hashing_threads(parallel: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(parallel.max(1))
}

/// The largest file a publication reads whole, hashes and sends from memory instead of
/// reading it twice (to hash it, then to send it), and the largest object a checkout hashes
/// from the bytes downloaded instead of reading its file back: twice a hashing lane's read
/// buffer, so sixteen lanes hold at most 2 MiB.
const IN_MEMORY: u64 = 128 * 1024;

/// What a download checks beyond its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The MD5 of the answer as it streams.
    Hashed,
    /// Nothing more: the caller hashes the file.
    Unhashed,
    /// Nothing more, and the content is returned for the caller to hash (at most
    /// `IN_MEMORY` bytes).
    Kept,
}

/// The content of file `source` when it has at most [`IN_MEMORY`] bytes, `None` when more.
fn read_small(source: &Path) -> Result<Option<Vec<u8>>> {
    let (file, len) = http::open_file(source)?;
    if len > IN_MEMORY {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(IN_MEMORY + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::io(format!("reading {}", source.display()), e))?;
    // A file that grew past the limit since is sent from the file.
    Ok((bytes.len() as u64 <= IN_MEMORY).then_some(bytes))
}

/// The page size of every listing: lakeFS's maximum (spec §1.5).
const PAGE_SIZE: usize = 1000;

/// The buffer a download streams through.
const DOWNLOAD_BUFFER: usize = 64 * 1024;

/// A lakeFS server, reached with one access key. See the [module](self) documentation.
pub struct LakeFs {
    /// The server root, without `/api/v1`.
    endpoint: String,
    access_key_id: String,
    secret: Secret,
    /// `Basic base64(key:secret)`.
    authorization: Secret,
    retry: RetryPolicy,
    timeouts: Timeouts,
    /// The agent of requests that may be repeated: keeps idle connections.
    pooled: ureq::Agent,
    /// The agent of commits and merges: a fresh connection each time.
    fresh: ureq::Agent,
}

impl fmt::Debug for LakeFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LakeFs")
            .field("endpoint", &self.endpoint)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret)
            .field("retry", &self.retry)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl LakeFs {
    /// A client of the server `settings` name, with the default [`RetryPolicy`] and
    /// [`Timeouts`]. `Invalid` when the URL is unusable or a credential is empty. It does not
    /// contact the server (see [`LakeFs::check_repository`]).
    pub fn new(settings: LakeFsSettings) -> Result<LakeFs> {
        let endpoint = settings::normalize_endpoint(&settings.endpoint_url)?;
        if settings.access_key_id.trim().is_empty() {
            return Err(StoreError::Invalid(format!(
                "lakeFS at {endpoint}: the access key id is empty"
            )));
        }
        if settings.secret_access_key.expose().is_empty() {
            return Err(StoreError::Invalid(format!(
                "lakeFS at {endpoint}: the secret access key is empty"
            )));
        }
        let credentials = format!(
            "{}:{}",
            settings.access_key_id,
            settings.secret_access_key.expose()
        );
        let authorization = Secret::new(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(credentials)
        ));
        let timeouts = Timeouts::default();
        Ok(LakeFs {
            endpoint,
            access_key_id: settings.access_key_id,
            secret: settings.secret_access_key,
            authorization,
            retry: RetryPolicy::default(),
            timeouts,
            pooled: http::build_agent(timeouts, true),
            fresh: http::build_agent(timeouts, false),
        })
    }

    /// This client with another retry policy (`max_attempts` at least 1).
    pub fn with_retry(mut self, retry: RetryPolicy) -> LakeFs {
        self.retry = RetryPolicy {
            max_attempts: retry.max_attempts.max(1),
            ..retry
        };
        self
    }

    /// This client with other timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> LakeFs {
        self.timeouts = timeouts;
        self.pooled = http::build_agent(timeouts, true);
        self.fresh = http::build_agent(timeouts, false);
        self
    }

    /// The server root, e.g. `http://host:8000`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The retry policy.
    pub fn retry(&self) -> RetryPolicy {
        self.retry
    }

    /// The timeouts.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Checks that the server answers, takes the credentials and has `repository` (spec
    /// §3.18's startup check): `Unauthorized`, `RepositoryNotFound` or `Unavailable` when not.
    pub fn check_repository(&self, repository: &str) -> Result<()> {
        let request = read_request(
            format!("/repositories/{}", segment(repository)),
            format!("get repository {repository}"),
            format!("repository {repository}"),
        );
        self.execute(
            &request,
            |status, response, _| {
                self.read_json::<serde_json::Value>(&request, status, response)
                    .map(drop)
            },
            |_| None,
        )
    }

    fn describe_endpoint(&self) -> String {
        format!("lakeFS at {}", self.endpoint)
    }

    /// Pages through a listing, `PAGE_SIZE` at a time, giving each item to `each` until it
    /// returns `false` or the listing ends.
    fn paginate<T: serde::de::DeserializeOwned>(
        &self,
        mut request: Request<'_>,
        page_size: usize,
        mut each: impl FnMut(&Request<'_>, T) -> Result<bool>,
    ) -> Result<()> {
        let query = request.query.clone();
        let mut after: Option<String> = None;
        loop {
            request.query = query.clone();
            request.query.push(("amount", page_size.to_string()));
            if let Some(after) = &after {
                request.query.push(("after", after.clone()));
            }
            let page: wire::Page<T> = self.execute(
                &request,
                |status, response, _| self.read_json(&request, status, response),
                |_| None,
            )?;
            for item in page.results {
                if !each(&request, item)? {
                    return Ok(());
                }
            }
            if !page.pagination.has_more {
                return Ok(());
            }
            let next = page.pagination.next_offset;
            if next.is_empty() || after.as_deref() == Some(next.as_str()) {
                return Err(self.unavailable(
                    &request,
                    &format!("the listing does not advance (has_more with next_offset {next:?})"),
                ));
            }
            after = Some(next);
        }
    }

    fn commit_id(&self, request: &Request<'_>, text: &str) -> Result<CommitId> {
        CommitId::parse(text).ok_or_else(|| {
            self.unavailable(
                request,
                &format!(
                    "lakeFS answered with a commit id that is not 64 lowercase hex digits: {text:?}"
                ),
            )
        })
    }

    fn commit_from_wire(&self, request: &Request<'_>, commit: wire::Commit) -> Result<Commit> {
        Ok(Commit {
            id: self.commit_id(request, &commit.id)?,
            parents: commit
                .parents
                .iter()
                .map(|p| self.commit_id(request, p))
                .collect::<Result<_>>()?,
            message: commit.message,
            metadata: commit.metadata.unwrap_or_default(),
            creation_date: commit.creation_date,
        })
    }

    fn object_from_wire(
        &self,
        request: &Request<'_>,
        stats: wire::ObjectStats,
    ) -> Result<ObjectInfo> {
        let size = stats
            .size_bytes
            .and_then(|size| u64::try_from(size).ok())
            .ok_or_else(|| {
                self.unavailable(
                    request,
                    &format!(
                        "lakeFS answered with no valid size_bytes for {} ({:?})",
                        stats.path, stats.size_bytes
                    ),
                )
            })?;
        Ok(ObjectInfo {
            path: stats.path,
            size,
            checksum: stats.checksum,
        })
    }

    /// Streams a 2xx download answer into `dest`, checking its size against `object`'s, and
    /// what `check` says. The content, for [`Check::Kept`].
    fn receive(
        &self,
        response: &mut http::HttpResponse,
        object: &ObjectInfo,
        dest: &Path,
        created: &Cell<bool>,
        check: Check,
    ) -> Result<Option<Vec<u8>>, Broken> {
        let corrupt = |detail: String| {
            Broken::Fatal(StoreError::Corrupt {
                path: object.path.clone(),
                detail: self.redact(&format!("{} answered {detail}", self.describe_endpoint())),
            })
        };
        let broke_off = |written: u64, e: &std::io::Error| {
            Broken::Transport(format!(
                "the answer broke off after {written} of {} bytes: {}",
                object.size,
                http::describe_body_error(e)
            ))
        };
        let more = || corrupt(format!("more than the object's {} bytes", object.size));
        let announced = response.body().content_length();
        if let Some(length) = announced.filter(|&length| length != object.size) {
            return Err(corrupt(format!(
                "with {length} bytes for an object of {} bytes",
                object.size
            )));
        }
        let io_error = |e| Broken::Fatal(StoreError::io(format!("writing {}", dest.display()), e));
        let mut file = File::create(dest).map_err(io_error)?;
        created.set(true);
        let mut reader = response.body_mut().as_reader();
        let mut md5 = (check == Check::Hashed).then(Md5::new);
        let mut kept = None;
        let mut written = 0u64;
        if check == Check::Kept {
            // Read whole into the one buffer the caller hashes, then written at once.
            let mut bytes = Vec::with_capacity(usize::try_from(object.size).unwrap_or(0));
            let read = (&mut reader).take(object.size + 1).read_to_end(&mut bytes);
            if let Err(e) = read {
                return Err(broke_off(bytes.len() as u64, &e));
            }
            if bytes.len() as u64 > object.size {
                return Err(more());
            }
            file.write_all(&bytes).map_err(io_error)?;
            written = bytes.len() as u64;
            kept = Some(bytes);
        } else {
            let mut buffer = DownloadBuffer::lend();
            let buffer = &mut buffer.0;
            loop {
                let n = match reader.read(buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(broke_off(written, &e)),
                };
                if written + n as u64 > object.size {
                    return Err(more());
                }
                if let Some(md5) = &mut md5 {
                    md5.update(&buffer[..n]);
                }
                file.write_all(&buffer[..n]).map_err(io_error)?;
                written += n as u64;
            }
        }
        if written < object.size {
            return Err(corrupt(format!(
                "with a body that ended after {written} of {} bytes",
                object.size
            )));
        }
        if let Some(md5) = md5
            && Checksum::Md5.recognises(&object.checksum)
        {
            let actual = hex(&md5.finalize());
            if actual != object.checksum {
                return Err(Broken::Fatal(self.mismatch(object, &actual)));
            }
        }
        file.flush().map_err(io_error)?;
        Ok(kept)
    }

    /// Content whose MD5 is `actual` was served for `object`.
    fn mismatch(&self, object: &ObjectInfo, actual: &str) -> StoreError {
        StoreError::Corrupt {
            path: object.path.clone(),
            detail: self.redact(&format!(
                "{} answered content with MD5 {actual}, but the object's checksum is {}",
                self.describe_endpoint(),
                object.checksum
            )),
        }
    }

    /// Writes `object` to `dest` (see [`Store::download`]), checked as `check` says. The
    /// content, for [`Check::Kept`].
    fn fetch(
        &self,
        repository: &str,
        commit: &CommitId,
        object: &ObjectInfo,
        dest: &Path,
        check: Check,
    ) -> Result<Option<Vec<u8>>> {
        let mut request = read_request(
            format!(
                "/repositories/{}/refs/{}/objects",
                segment(repository),
                segment(commit.as_str())
            ),
            format!("download {} of {}", object.path, at(repository, commit)),
            format!("object {} of {}", object.path, at(repository, commit)),
        );
        request.query.push(("path", object.path.clone()));
        let created = Cell::new(false);
        let result = self.execute(
            &request,
            |_, response, _| self.receive(response, object, dest, &created, check),
            |_| None,
        );
        if result.is_err() && created.get() {
            let _ = std::fs::remove_file(dest);
        }
        result
    }

    /// Stages a file's content, `payload`, at `path` on `branch` (see [`Store::upload`]),
    /// checking lakeFS's size against what was sent, and its checksum too when the payload
    /// was hashed. The stored object, and what was sent.
    fn send_file(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
        payload: Payload<'_>,
    ) -> Result<(ObjectInfo, http::Sent)> {
        let request = Request {
            method: Method::Post,
            path: format!(
                "/repositories/{}/branches/{}/objects",
                segment(repository),
                segment(branch)
            ),
            query: vec![("path", path.to_owned())],
            payload,
            what: format!("upload {path} to branch {branch} of {repository}"),
            subject: format!("branch {branch} of {repository}"),
            replay: Replay::Always,
            verify: "",
        };
        self.execute(
            &request,
            |status, response, sent| {
                let stats: wire::ObjectStats = self.read_json(&request, status, response)?;
                let object = self
                    .object_from_wire(&request, stats)
                    .map_err(Broken::Fatal)?;
                let sent = sent.expect("an upload sends its file");
                let checksum_differs = sent.md5.as_ref().is_some_and(|md5| {
                    Checksum::Md5.recognises(&object.checksum) && object.checksum != *md5
                });
                if object.size != sent.bytes || checksum_differs {
                    return Err(Broken::Fatal(self.stored_otherwise(
                        path,
                        &object,
                        sent.bytes,
                        sent.md5.as_deref().unwrap_or("(not hashed)"),
                    )));
                }
                Ok((object, sent.clone()))
            },
            |_| None,
        )
    }

    /// lakeFS stored `object` for `path`, whose file had `bytes` bytes with MD5 `md5`.
    fn stored_otherwise(
        &self,
        path: &str,
        object: &ObjectInfo,
        bytes: u64,
        md5: &str,
    ) -> StoreError {
        StoreError::Corrupt {
            path: path.to_owned(),
            detail: self.redact(&format!(
                "{} stored {} bytes with checksum {}, but {bytes} bytes with MD5 {md5} were sent",
                self.describe_endpoint(),
                object.size,
                object.checksum,
            )),
        }
    }
}

/// A download thread's buffer, lent to one download at a time: allocating and zeroing 64 KiB
/// per object costs more than a small object's whole transfer.
struct DownloadBuffer(Vec<u8>);

thread_local! {
    static DOWNLOAD_BUFFERS: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

impl DownloadBuffer {
    fn lend() -> DownloadBuffer {
        let mut buffer = DOWNLOAD_BUFFERS.take();
        buffer.resize(DOWNLOAD_BUFFER, 0);
        DownloadBuffer(buffer)
    }
}

impl Drop for DownloadBuffer {
    fn drop(&mut self) {
        DOWNLOAD_BUFFERS.set(std::mem::take(&mut self.0));
    }
}

/// A GET that may be repeated.
fn read_request<'a>(path: String, what: String, subject: String) -> Request<'a> {
    Request {
        method: Method::Get,
        path,
        query: Vec::new(),
        payload: Payload::None,
        what,
        subject,
        replay: Replay::Always,
        verify: "",
    }
}

/// `repository@<short id>`, for messages.
fn at(repository: &str, commit: &CommitId) -> String {
    format!("{repository}@{}", commit.short())
}

/// ` under <prefix>` when there is a prefix.
fn under(prefix: &str) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!(" under {prefix}")
    }
}

fn json<T: serde::Serialize>(body: &T) -> Vec<u8> {
    serde_json::to_vec(body).expect("string fields and string maps always serialise")
}

impl Store for LakeFs {
    fn describe(&self) -> String {
        self.describe_endpoint()
    }

    fn checksum(&self) -> Checksum {
        Checksum::Md5
    }

    fn get_commit(&self, repository: &str, reference: &str) -> Result<Commit> {
        let request = read_request(
            format!(
                "/repositories/{}/commits/{}",
                segment(repository),
                segment(reference)
            ),
            format!("get commit {reference} of {repository}"),
            format!("ref {reference} of {repository}"),
        );
        let commit: wire::Commit = self.execute(
            &request,
            |status, response, _| self.read_json(&request, status, response),
            |_| None,
        )?;
        self.commit_from_wire(&request, commit)
    }

    fn log(&self, repository: &str, reference: &str, limit: usize) -> Result<Vec<Commit>> {
        let request = read_request(
            format!(
                "/repositories/{}/refs/{}/commits",
                segment(repository),
                segment(reference)
            ),
            format!("log of {repository}@{reference}"),
            format!("ref {reference} of {repository}"),
        );
        let mut commits = Vec::new();
        self.paginate(
            request,
            limit.clamp(1, PAGE_SIZE),
            |request, commit: wire::Commit| {
                if commits.len() < limit {
                    commits.push(self.commit_from_wire(request, commit)?);
                }
                Ok(commits.len() < limit)
            },
        )?;
        Ok(commits)
    }

    fn list_branches(&self, repository: &str) -> Result<Vec<(String, CommitId)>> {
        let request = read_request(
            format!("/repositories/{}/branches", segment(repository)),
            format!("list branches of {repository}"),
            format!("repository {repository}"),
        );
        let mut branches = Vec::new();
        self.paginate(request, PAGE_SIZE, |request, branch: wire::Ref| {
            let head = self.commit_id(request, &branch.commit_id)?;
            branches.push((branch.id, head));
            Ok(true)
        })?;
        Ok(branches)
    }

    fn list_objects(
        &self,
        repository: &str,
        commit: &CommitId,
        prefix: &str,
    ) -> Result<Vec<ObjectInfo>> {
        let mut request = read_request(
            format!(
                "/repositories/{}/refs/{}/objects/ls",
                segment(repository),
                segment(commit.as_str())
            ),
            format!(
                "list objects of {}{}",
                at(repository, commit),
                under(prefix)
            ),
            format!("commit {}", at(repository, commit)),
        );
        if !prefix.is_empty() {
            request.query.push(("prefix", prefix.to_owned()));
        }
        let mut objects = Vec::new();
        self.paginate(request, PAGE_SIZE, |request, stats: wire::ObjectStats| {
            if stats.path_type != "common_prefix" {
                objects.push(self.object_from_wire(request, stats)?);
            }
            Ok(true)
        })?;
        Ok(objects)
    }

    fn download(
        &self,
        repository: &str,
        commit: &CommitId,
        object: &ObjectInfo,
        dest: &Path,
    ) -> Result<()> {
        self.fetch(repository, commit, object, dest, Check::Hashed)
            .map(|_| ())
    }

    /// The downloads stream to their files checking sizes only, and each file with an MD5
    /// checksum, once written, is hashed by other threads sixteen side by side ([`md5_lanes`]),
    /// at less than half the CPU time of hashing each stream as it arrives; the first that
    /// differs is `Corrupt` (its file removed). An object of at most 128 KiB (`IN_MEMORY`) is
    /// hashed from the bytes downloaded instead of its file read back; the hashing holds at
    /// most sixteen such per hashing thread waiting, and the downloads wait for it beyond.
    fn download_all(
        &self,
        repository: &str,
        commit: &CommitId,
        objects: &[ObjectInfo],
        dests: &[PathBuf],
        parallel: usize,
        written: &(dyn Fn(usize) -> Result<()> + Sync),
    ) -> Result<()> {
        let threads = hashing_threads(parallel);
        let (ready, files_ready) = std::sync::mpsc::sync_channel(threads * md5_lanes::LANES);
        let (downloaded, digests) = std::thread::scope(|scope| {
            let hashing = scope.spawn(|| md5_lanes::md5_as_ready(dests, files_ready, threads));
            let downloaded = crate::parallel::try_for_each(objects, parallel, |i, object| {
                let hashed = Checksum::Md5.recognises(&object.checksum);
                let check = if hashed && object.size <= IN_MEMORY {
                    Check::Kept
                } else {
                    Check::Unhashed
                };
                let kept = self.fetch(repository, commit, object, &dests[i], check)?;
                written(i)?;
                if hashed {
                    let _ = ready.send((i, kept));
                }
                Ok(())
            });
            // The hashing ends once every sender is gone.
            drop(ready);
            let digests = hashing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (downloaded, digests)
        });
        downloaded?;
        let digests = digests
            .map_err(|(k, e)| StoreError::io(format!("cannot read {}", dests[k].display()), e))?;
        for ((object, dest), actual) in objects.iter().zip(dests).zip(&digests) {
            if let Some(actual) = actual
                && *actual != object.checksum
            {
                let _ = std::fs::remove_file(dest);
                return Err(self.mismatch(object, actual));
            }
        }
        Ok(())
    }

    fn create_branch(&self, repository: &str, name: &str, source: &CommitId) -> Result<()> {
        // lakeFS answers an empty name with a 500; every backend says `Invalid`.
        crate::store::check_branch_name(name)?;
        let request = Request {
            method: Method::Post,
            path: format!("/repositories/{}/branches", segment(repository)),
            query: Vec::new(),
            payload: Payload::Json(json(&wire::BranchCreation {
                name,
                source: source.as_str(),
            })),
            what: format!("create branch {name} of {repository} at {}", source.short()),
            subject: format!("commit {}", at(repository, source)),
            replay: Replay::Always,
            verify: "",
        };
        self.execute(
            &request,
            |_, response, _| {
                // The new head's id as plain text; read so the connection can be reused.
                let _ = response
                    .body_mut()
                    .with_config()
                    .limit(64 * 1024)
                    .read_to_string();
                Ok(())
            },
            |refusal| match refusal.status {
                409 if refusal.earlier_maybe_applied => Some(Err(self.unavailable(
                    &request,
                    &format!(
                        "409 {}: an earlier attempt, whose answer was lost, may have created it",
                        refusal.message
                    ),
                ))),
                409 => Some(Err(StoreError::AlreadyExists(format!(
                    "branch {name} of {repository} ({})",
                    self.describe_endpoint()
                )))),
                _ => None,
            },
        )
    }

    fn delete_branch(&self, repository: &str, name: &str) -> Result<()> {
        let request = Request {
            method: Method::Delete,
            path: format!(
                "/repositories/{}/branches/{}",
                segment(repository),
                segment(name)
            ),
            query: Vec::new(),
            payload: Payload::None,
            what: format!("delete branch {name} of {repository}"),
            subject: format!("branch {name} of {repository}"),
            replay: Replay::Always,
            verify: "",
        };
        self.execute(
            &request,
            |_, _, _| Ok(()),
            |refusal| {
                // An earlier attempt that lost its answer deleted it.
                (refusal.status == 404
                    && refusal.earlier_maybe_applied
                    && !refusal.says("repository not found"))
                .then_some(Ok(()))
            },
        )
    }

    fn upload(
        &self,
        repository: &str,
        branch: &str,
        path: &str,
        source: &Path,
    ) -> Result<ObjectInfo> {
        let payload = Payload::File {
            path: source,
            hash: true,
        };
        self.send_file(repository, branch, path, payload)
            .map(|(object, _)| object)
    }

    /// Each thread takes up to sixteen files at a time, hashes them side by side
    /// ([`md5_lanes`]), then sends them unhashed, their sizes checked, and holds each
    /// checksum lakeFS stored to its file's MD5. A file of at most 128 KiB (`IN_MEMORY`) is
    /// read once: hashed in memory and sent from there. (Hashing threads beside the uploads
    /// cost as little CPU but slowed the uploads they competed with.)
    fn upload_all(
        &self,
        repository: &str,
        branch: &str,
        files: &[(String, PathBuf)],
        parallel: usize,
        stored: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        // Fewer than sixteen to a batch when that keeps every thread busy.
        let batch = files
            .len()
            .div_ceil(parallel.max(1))
            .clamp(1, md5_lanes::LANES);
        let batches: Vec<&[(String, PathBuf)]> = files.chunks(batch).collect();
        crate::parallel::try_for_each(&batches, parallel, |_, batch| {
            let contents = batch
                .iter()
                .map(|(_, source)| read_small(source))
                .collect::<Result<Vec<_>>>()?;
            let inputs: Vec<md5_lanes::Input> = batch
                .iter()
                .zip(&contents)
                .map(|((_, source), content)| match content {
                    Some(bytes) => md5_lanes::Input::Bytes(bytes),
                    None => md5_lanes::Input::File(source),
                })
                .collect();
            let digests = md5_lanes::md5_all(&inputs, 1)
                .map_err(|(k, e)| StoreError::io(format!("reading {}", batch[k].1.display()), e))?;
            for (((path, source), content), md5) in batch.iter().zip(&contents).zip(&digests) {
                let payload = match content {
                    Some(bytes) => Payload::Bytes(bytes),
                    None => Payload::File {
                        path: source,
                        hash: false,
                    },
                };
                let (object, _) = self.send_file(repository, branch, path, payload)?;
                if Checksum::Md5.recognises(&object.checksum) && object.checksum != *md5 {
                    return Err(self.stored_otherwise(path, &object, object.size, md5));
                }
                stored(object.size);
            }
            Ok(())
        })
    }

    fn delete_object(&self, repository: &str, branch: &str, path: &str) -> Result<()> {
        let request = Request {
            method: Method::Delete,
            path: format!(
                "/repositories/{}/branches/{}/objects",
                segment(repository),
                segment(branch)
            ),
            query: vec![("path", path.to_owned())],
            payload: Payload::None,
            what: format!("delete {path} on branch {branch} of {repository}"),
            subject: format!("branch {branch} of {repository}"),
            replay: Replay::Always,
            verify: "",
        };
        self.execute(&request, |_, _, _| Ok(()), |_| None)
    }

    fn commit(
        &self,
        repository: &str,
        branch: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Option<Commit>> {
        let request = Request {
            method: Method::Post,
            path: format!(
                "/repositories/{}/branches/{}/commits",
                segment(repository),
                segment(branch)
            ),
            query: Vec::new(),
            payload: Payload::Json(json(&wire::MessageAndMetadata { message, metadata })),
            what: format!("commit branch {branch} of {repository}"),
            subject: format!("branch {branch} of {repository}"),
            replay: Replay::IfNotApplied,
            verify: "look for the commit in the branch's log before committing again",
        };
        let commit: Option<wire::Commit> = self.execute(
            &request,
            |status, response, _| self.read_json(&request, status, response).map(Some),
            |refusal| (refusal.status == 400 && refusal.says("no changes")).then_some(Ok(None)),
        )?;
        commit
            .map(|commit| self.commit_from_wire(&request, commit))
            .transpose()
    }

    fn merge(
        &self,
        repository: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Merge> {
        let request = Request {
            method: Method::Post,
            path: format!(
                "/repositories/{}/refs/{}/merge/{}",
                segment(repository),
                segment(source),
                segment(destination)
            ),
            query: Vec::new(),
            payload: Payload::Json(json(&wire::MessageAndMetadata { message, metadata })),
            what: format!("merge {source} into {destination} of {repository}"),
            subject: format!("branch {source} or {destination} of {repository}"),
            replay: Replay::IfNotApplied,
            verify: "look in the destination's log for a merge commit whose second parent is \
                     the source's head before merging again",
        };
        self.execute(
            &request,
            |status, response, _| {
                let result: wire::MergeResult = self.read_json(&request, status, response)?;
                let id = self
                    .commit_id(&request, &result.reference)
                    .map_err(Broken::Fatal)?;
                Ok(Merge::Merged(id))
            },
            |refusal| match refusal.status {
                409 => Some(Ok(Merge::Conflict)),
                400 if refusal.says("no changes") => Some(Ok(Merge::NoChanges)),
                _ => None,
            },
        )
    }

    fn diff(
        &self,
        repository: &str,
        left: &CommitId,
        right: &CommitId,
        prefix: &str,
    ) -> Result<Vec<Change>> {
        let mut request = read_request(
            format!(
                "/repositories/{}/refs/{}/diff/{}",
                segment(repository),
                segment(left.as_str()),
                segment(right.as_str())
            ),
            format!(
                "diff {repository}@{}..{}{}",
                left.short(),
                right.short(),
                under(prefix)
            ),
            format!(
                "commit {} or {} of {repository}",
                left.short(),
                right.short()
            ),
        );
        request.query.push(("type", "two_dot".to_owned()));
        if !prefix.is_empty() {
            request.query.push(("prefix", prefix.to_owned()));
        }
        let mut changes = Vec::new();
        self.paginate(request, PAGE_SIZE, |request, diff: wire::Diff| {
            let kind = match diff.kind.as_str() {
                "added" => ChangeKind::Added,
                "removed" => ChangeKind::Removed,
                "changed" => ChangeKind::Changed,
                other => {
                    return Err(self.unavailable(
                        request,
                        &format!(
                            "unexpected diff type {other:?} for {} ({})",
                            diff.path, diff.path_type
                        ),
                    ));
                }
            };
            changes.push(Change {
                kind,
                path: diff.path,
            });
            Ok(true)
        })?;
        Ok(changes)
    }
}
