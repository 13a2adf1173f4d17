//! The wire: percent-encoding, one request with its retries, and the mapping of lakeFS's
//! answers to [`StoreError`]s.

use super::LakeFs;
use crate::store::{Result, StoreError};
use md5::{Digest, Md5};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::Duration;

/// Every operation lives under this prefix (`docs/src/reference/lakefs.md` §1.1).
pub(super) const API_PREFIX: &str = "/api/v1";

/// The largest JSON answer read (a page of 1000 objects is well under 1 MiB).
const MAX_JSON_BODY: u64 = 64 * 1024 * 1024;

/// The most of an error answer's body read for its message.
const MAX_ERROR_BODY: u64 = 64 * 1024;

/// The most of the server's message shown in an error.
const MAX_MESSAGE_CHARS: usize = 500;

/// lakeFS's answer when another operation holds the branch (spec §1.4): nothing was done.
const BRANCH_LOCKED: &str = "branch is currently locked";

pub(super) type HttpResponse = ureq::http::Response<ureq::Body>;

/// Percent-encodes a path segment (a repository, branch or ref) as Go's `url.PathEscape`
/// does, so lakeFS's router sees the value itself: `~ @ $` literal, `^` as `%5E`, `/` as `%2F`.
pub(super) fn segment(value: &str) -> String {
    encode(value, |b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'~' | b'$' | b'&' | b'+' | b':' | b'=' | b'@'
            )
    })
}

/// Percent-encodes a query value: everything but `A-Z a-z 0-9 - _ . ~`, so `+` is `%2B` (Go
/// would read a bare `+` as a space) and `/` is `%2F` (spec §1.1).
pub(super) fn query_value(value: &str) -> String {
    encode(value, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
    })
}

fn encode(value: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Lowercase hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How often a request is tried, and how long to wait between tries.
///
/// Failed attempt `n` waits `initial_backoff · 2^(n-1)`, capped at `max_backoff` (with up to
/// half of it taken off at random, so parallel downloads do not retry in step), before attempt
/// `n + 1`; after `max_attempts` attempts the last error is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait after the first failed attempt.
    pub initial_backoff: Duration,
    /// The longest wait.
    pub max_backoff: Duration,
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub const NONE: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        initial_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
    };

    /// The full wait after `failures` failed attempts in a row (≥ 1), before jitter.
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 1u32
            .checked_shl(failures.saturating_sub(1).min(31))
            .unwrap_or(u32::MAX);
        self.initial_backoff
            .checked_mul(factor)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff)
    }

    /// [`RetryPolicy::backoff`] less a random part of up to half of it.
    fn wait(&self, failures: u32) -> Duration {
        let full = self.backoff(failures);
        let half = full / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return full;
        }
        full - Duration::from_nanos(jitter() % nanos)
    }
}

impl Default for RetryPolicy {
    /// 5 attempts, waiting about 0.5 s, 1 s, 2 s and 4 s between them (at most 7.5 s in all).
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// A cheap random number: the clock's nanoseconds hashed with the thread's id.
fn jitter() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}

/// The timeouts of one request. There is no overall limit: a large download takes as long as
/// it needs while data keeps arriving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Resolving the host and opening the connection.
    pub connect: Duration,
    /// Sending the request head, waiting for the answer's head (a commit or merge computes
    /// before it answers), and any single read or write of a body.
    pub read: Duration,
}

impl Default for Timeouts {
    /// 10 s to connect, 60 s per read.
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(60),
        }
    }
}

/// Idle connections kept per host: enough for 16 parallel downloads through one client.
pub(super) const POOL_CONNECTIONS: usize = 16;

/// An agent with `timeouts`, not following redirects, answering every status as a response,
/// looking the host up once in a while ([`perago_resolver`]).
/// `pooled`: whether it keeps idle connections (the agent for requests that must not be
/// repeated opens a fresh one each time, so a stale pooled connection cannot turn a request
/// that never reached lakeFS into an answer that may have been lost).
pub(super) fn build_agent(timeouts: Timeouts, pooled: bool) -> ureq::Agent {
    let connect = Some(timeouts.connect);
    let read = Some(timeouts.read);
    let idle = if pooled { POOL_CONNECTIONS } else { 0 };
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("perago-workspace/", env!("CARGO_PKG_VERSION")))
        .max_idle_connections(idle)
        .max_idle_connections_per_host(idle)
        .timeout_resolve(connect)
        .timeout_connect(connect)
        .timeout_send_request(read)
        .timeout_recv_response(read)
        .timeout_per_read(read)
        .timeout_per_write(read)
        .build();
    perago_resolver::agent(config)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Post,
    Delete,
}

/// A request's body.
pub(super) enum Payload<'a> {
    None,
    /// JSON, sent as `application/json`.
    Json(Vec<u8>),
    /// A file's content, streamed as `application/octet-stream`, reopened for each attempt;
    /// hashed (MD5) as it is sent when `hash`.
    File {
        path: &'a Path,
        hash: bool,
    },
    /// A file's content already read, sent as `application/octet-stream`, unhashed.
    Bytes(&'a [u8]),
}

/// When a failed attempt may be repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Replay {
    /// Reads, uploads and deletes, whose repetition does no harm: after any connection
    /// error, 429 or 5xx.
    Always,
    /// Commit and merge (spec §6.7): only when lakeFS certainly did nothing: no connection
    /// was made, 429, or 500 `branch is currently locked`.
    IfNotApplied,
}

/// One operation's request.
pub(super) struct Request<'a> {
    pub method: Method,
    /// The path after `/api/v1`, its segments encoded with [`segment`].
    pub path: String,
    /// Query parameters, the values not yet encoded.
    pub query: Vec<(&'static str, String)>,
    pub payload: Payload<'a>,
    /// The operation in words, for messages: `list objects of song-1@0123abcd4567 under a/`.
    pub what: String,
    /// What a `NotFound` or `AlreadyExists` names: `branch ws-1 of song-1`.
    pub subject: String,
    pub replay: Replay,
    /// For [`Replay::IfNotApplied`]: how to find out whether a request whose answer was lost
    /// took effect.
    pub verify: &'static str,
}

/// What was sent of an uploaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sent {
    pub bytes: u64,
    /// The hex MD5 of what was sent, when it was hashed.
    pub md5: Option<String>,
}

/// Why a 2xx answer could not be used.
pub(super) enum Broken {
    /// The connection failed while the body was read: the attempt may be repeated.
    Transport(String),
    /// Final.
    Fatal(StoreError),
}

/// A non-2xx answer that is not retried (or no longer).
#[derive(Debug)]
pub(super) struct Refusal {
    pub status: u16,
    /// The server's message (redacted, shortened), or the status's reason.
    pub message: String,
    pub attempts: u32,
    /// Whether an earlier attempt of this request may have taken effect (its answer was lost
    /// or was a 5xx), so that a 404 or 409 now may be that attempt's doing.
    pub earlier_maybe_applied: bool,
}

impl Refusal {
    /// Whether the message contains `text`.
    pub fn says(&self, text: &str) -> bool {
        self.message.contains(text)
    }
}

/// How one attempt failed.
enum Failure {
    /// No (whole) answer. `sent`: whether the request may have reached the server;
    /// `answered`: the 2xx status whose body then broke off, if it came that far.
    Transport {
        message: String,
        sent: bool,
        answered: Option<u16>,
    },
    /// A non-2xx answer.
    Status { status: u16, message: String },
}

impl LakeFs {
    /// Sends `request`, retrying per its [`Replay`] and the client's [`RetryPolicy`]. A 2xx
    /// answer goes to `on_success` (with what was sent of an uploaded file), which may ask
    /// for another attempt when the connection breaks under it; a final non-2xx answer goes
    /// to `on_refusal`, and when that returns `None`, to the generic mapping.
    pub(super) fn execute<T>(
        &self,
        request: &Request<'_>,
        mut on_success: impl FnMut(u16, &mut HttpResponse, Option<&Sent>) -> Result<T, Broken>,
        on_refusal: impl FnOnce(&Refusal) -> Option<Result<T>>,
    ) -> Result<T> {
        let url = self.url(request);
        let mut attempts = 0;
        let mut earlier_maybe_applied = false;
        loop {
            attempts += 1;
            let failure = match self.send_once(request, &url)? {
                Err(error) => Failure::Transport {
                    message: describe_transport_error(&error),
                    sent: request_sent(&error),
                    answered: None,
                },
                Ok((mut response, sent)) => {
                    let status = response.status().as_u16();
                    if (200..300).contains(&status) {
                        match on_success(status, &mut response, sent.as_ref()) {
                            Ok(value) => return Ok(value),
                            Err(Broken::Fatal(e)) => return Err(e),
                            Err(Broken::Transport(message)) => Failure::Transport {
                                message,
                                sent: true,
                                answered: Some(status),
                            },
                        }
                    } else {
                        Failure::Status {
                            status,
                            message: self.error_message(status, &mut response),
                        }
                    }
                }
            };
            let (retryable, maybe_applied) = match &failure {
                Failure::Transport { sent, .. } => {
                    (request.replay == Replay::Always || !sent, *sent)
                }
                Failure::Status { status, message } => {
                    let not_applied =
                        *status == 429 || (*status == 500 && message.contains(BRANCH_LOCKED));
                    let server_error = (500..600).contains(status);
                    (
                        not_applied || (server_error && request.replay == Replay::Always),
                        server_error && !not_applied,
                    )
                }
            };
            if retryable && attempts < self.retry.max_attempts {
                earlier_maybe_applied |= maybe_applied;
                std::thread::sleep(self.retry.wait(attempts));
                continue;
            }
            return Err(match failure {
                Failure::Transport {
                    message,
                    answered: Some(status),
                    ..
                } if request.replay == Replay::IfNotApplied => self.unavailable(
                    request,
                    &format!(
                        "lakeFS answered {status}, so it took effect, but the answer broke off \
                         ({message}): {}",
                        request.verify
                    ),
                ),
                Failure::Transport { message, sent, .. } => {
                    if request.replay == Replay::IfNotApplied && sent {
                        self.unavailable(
                            request,
                            &format!(
                                "no answer ({message}); it may or may not have taken effect: {}",
                                request.verify
                            ),
                        )
                    } else {
                        self.unavailable(request, &format!("{message}{}", tries(attempts)))
                    }
                }
                Failure::Status { status, message } => {
                    let refusal = Refusal {
                        status,
                        message,
                        attempts,
                        earlier_maybe_applied,
                    };
                    match on_refusal(&refusal) {
                        Some(result) => return result,
                        None => self.refused(request, &refusal),
                    }
                }
            });
        }
    }

    /// The generic mapping of a final non-2xx answer.
    pub(super) fn refused(&self, request: &Request<'_>, refusal: &Refusal) -> StoreError {
        let Refusal {
            status, message, ..
        } = refusal;
        let detail = format!("{status} {message}");
        match status {
            401 => StoreError::Unauthorized(self.context(request, &detail)),
            404 if refusal.says("repository not found") => StoreError::RepositoryNotFound(format!(
                "{} ({})",
                request_repository(&request.path),
                self.describe_endpoint()
            )),
            404 => StoreError::NotFound(format!(
                "{} ({})",
                request.subject,
                self.describe_endpoint()
            )),
            300..=399 => self.unavailable(
                request,
                &format!("{detail} (a redirect, which is not followed: give lakeFS's own URL)"),
            ),
            400..=499 => StoreError::Invalid(self.context(request, &detail)),
            _ => {
                let not_applied = *status == 429 || refusal.says(BRANCH_LOCKED);
                if request.replay == Replay::IfNotApplied && !not_applied {
                    self.unavailable(
                        request,
                        &format!(
                            "{detail}; it may or may not have taken effect: {}",
                            request.verify
                        ),
                    )
                } else {
                    self.unavailable(request, &format!("{detail}{}", tries(refusal.attempts)))
                }
            }
        }
    }

    /// `lakeFS at <endpoint>: <what>: <detail>`, with any trace of the secret removed.
    pub(super) fn context(&self, request: &Request<'_>, detail: &str) -> String {
        self.redact(&format!(
            "{}: {}: {detail}",
            self.describe_endpoint(),
            request.what
        ))
    }

    pub(super) fn unavailable(&self, request: &Request<'_>, detail: &str) -> StoreError {
        StoreError::Unavailable(self.context(request, detail))
    }

    /// `text` with the secret and the `Authorization` value cut out, should a server or a
    /// proxy have echoed them.
    pub(super) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in [self.authorization.expose(), self.secret.expose()] {
            if !secret.is_empty() && out.contains(secret) {
                out = out.replace(secret, "<redacted>");
            }
        }
        out
    }

    fn url(&self, request: &Request<'_>) -> String {
        let mut url = format!("{}{API_PREFIX}{}", self.endpoint, request.path);
        for (i, (key, value)) in request.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(key);
            url.push('=');
            url.push_str(&query_value(value));
        }
        url
    }

    /// One attempt. The outer error is local (the upload's file cannot be read); the inner
    /// one is the transport's.
    #[allow(clippy::type_complexity)]
    fn send_once(
        &self,
        request: &Request<'_>,
        url: &str,
    ) -> Result<Result<(HttpResponse, Option<Sent>), ureq::Error>> {
        let agent = match request.replay {
            Replay::Always => &self.pooled,
            Replay::IfNotApplied => &self.fresh,
        };
        let auth = self.authorization.expose();
        Ok(match (&request.method, &request.payload) {
            (Method::Get, _) => agent
                .get(url)
                .header("authorization", auth)
                .call()
                .map(|r| (r, None)),
            (Method::Delete, _) => agent
                .delete(url)
                .header("authorization", auth)
                .call()
                .map(|r| (r, None)),
            (Method::Post, Payload::None) => agent
                .post(url)
                .header("authorization", auth)
                .send_empty()
                .map(|r| (r, None)),
            (Method::Post, Payload::Json(body)) => agent
                .post(url)
                .header("authorization", auth)
                .content_type("application/json")
                .send(&body[..])
                .map(|r| (r, None)),
            (Method::Post, Payload::File { path, hash }) => {
                let context = || format!("reading {}", path.display());
                let (file, len) = open_file(path)?;
                let mut reader = HashingReader::new(file, len, *hash);
                let result = agent
                    .post(url)
                    .header("authorization", auth)
                    .content_type("application/octet-stream")
                    .header("content-length", len)
                    .send(ureq::SendBody::from_reader(&mut reader));
                if let Some(e) = reader.local_error.take() {
                    return Err(StoreError::io(context(), e));
                }
                result.map(|r| (r, Some(reader.finish())))
            }
            (Method::Post, Payload::Bytes(bytes)) => agent
                .post(url)
                .header("authorization", auth)
                .content_type("application/octet-stream")
                .send(*bytes)
                .map(|r| {
                    let sent = Sent {
                        bytes: bytes.len() as u64,
                        md5: None,
                    };
                    (r, Some(sent))
                }),
        })
    }

    /// The message of a non-2xx answer: lakeFS's `{"message": …}`, else the body's text,
    /// else the status's reason; redacted and shortened.
    fn error_message(&self, status: u16, response: &mut HttpResponse) -> String {
        let mut body = Vec::new();
        let _ = response
            .body_mut()
            .as_reader()
            .take(MAX_ERROR_BODY)
            .read_to_end(&mut body);
        let text = String::from_utf8_lossy(&body);
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("message")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| text.trim().to_owned());
        let message = if message.is_empty() {
            ureq::http::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("(no message)")
                .to_owned()
        } else {
            message
        };
        let message = self.redact(&message);
        let mut cut: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
        if cut.len() < message.len() {
            cut.push('…');
        }
        cut
    }

    /// A 2xx answer's body decoded as JSON.
    pub(super) fn read_json<T: serde::de::DeserializeOwned>(
        &self,
        request: &Request<'_>,
        status: u16,
        response: &mut HttpResponse,
    ) -> Result<T, Broken> {
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_JSON_BODY)
            .read_to_string()
            .map_err(|e| {
                Broken::Transport(format!(
                    "reading the answer: {}",
                    describe_transport_error(&e)
                ))
            })?;
        serde_json::from_str(&text).map_err(|e| {
            Broken::Fatal(self.unavailable(
                request,
                &format!("HTTP {status} with a body that is not the expected JSON: {e}"),
            ))
        })
    }
}

/// ` (after N tries)` when there was more than one.
fn tries(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} tries)")
    } else {
        String::new()
    }
}

/// The repository of a request path `/repositories/{repository}/…`, decoded for messages.
fn request_repository(path: &str) -> String {
    let encoded = path
        .strip_prefix("/repositories/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default();
    percent_decode(encoded)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a request that failed with `e` may have reached the server: all but a connection
/// that was never made.
fn request_sent(e: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed | ureq::Error::BadUri(_) => false,
        ureq::Error::Timeout(t) => !matches!(t, ureq::Timeout::Resolve | ureq::Timeout::Connect),
        ureq::Error::Io(io) => !matches!(
            io.kind(),
            ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable | ErrorKind::NotFound
        ),
        _ => true,
    }
}

pub(super) fn describe_transport_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => format!("connection error: {io}"),
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::BodyExceedsLimit(limit) => {
            format!("the answer is larger than the limit of {limit} bytes")
        }
        other => other.to_string(),
    }
}

/// An I/O error of reading a body, in words (the transport's error when it is one).
pub(super) fn describe_body_error(e: &io::Error) -> String {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
    {
        Some(inner) => describe_transport_error(inner),
        None => format!("connection error: {e}"),
    }
}

/// File `path`, opened to be read, and its length.
pub(super) fn open_file(path: &Path) -> Result<(File, u64)> {
    let context = || format!("reading {}", path.display());
    let file = File::open(path).map_err(|e| StoreError::io(context(), e))?;
    let len = file
        .metadata()
        .map_err(|e| StoreError::io(context(), e))?
        .len();
    Ok((file, len))
}

/// Reads exactly `len` bytes of a file, hashing them when asked; a file that shrinks or grows
/// while it is sent is an error (kept in `local_error`, since the transport would report it
/// as its own).
struct HashingReader {
    file: File,
    len: u64,
    read: u64,
    md5: Option<Md5>,
    local_error: Option<io::Error>,
}

impl HashingReader {
    fn new(file: File, len: u64, hash: bool) -> HashingReader {
        HashingReader {
            file,
            len,
            read: 0,
            md5: hash.then(Md5::new),
            local_error: None,
        }
    }

    fn fail(&mut self, e: io::Error) -> io::Error {
        let copy = io::Error::new(e.kind(), e.to_string());
        self.local_error = Some(e);
        copy
    }

    fn finish(self) -> Sent {
        Sent {
            bytes: self.read,
            md5: self.md5.map(|md5| hex(&md5.finalize())),
        }
    }
}

impl Read for HashingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len - self.read;
        if left == 0 {
            let mut probe = [0u8; 1];
            return match self.file.read(&mut probe) {
                Ok(0) => Ok(0),
                Ok(_) => Err(self.fail(io::Error::other("the file grew while it was sent"))),
                Err(e) => Err(self.fail(e)),
            };
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        match self.file.read(&mut buf[..want]) {
            Ok(0) => Err(self.fail(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the file shrank while it was sent ({} of {} bytes)",
                    self.read, self.len
                ),
            ))),
            Ok(n) => {
                if let Some(md5) = &mut self.md5 {
                    md5.update(&buf[..n]);
                }
                self.read += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.fail(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_as_go_does() {
        assert_eq!(segment("song-000123"), "song-000123");
        assert_eq!(segment("main~2^2"), "main~2%5E2");
        assert_eq!(segment("main@"), "main@");
        assert_eq!(segment("main$"), "main$");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        assert_eq!(segment("ü"), "%C3%BC");
    }

    #[test]
    fn query_values_are_encoded_as_go_reads_them() {
        assert_eq!(query_value("out/a+b.json"), "out%2Fa%2Bb.json");
        assert_eq!(query_value("a b&c=d?#%"), "a%20b%26c%3Dd%3F%23%25");
        assert_eq!(query_value("x~y_z-1.txt"), "x~y_z-1.txt");
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let retry = RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        let waits: Vec<u128> = (1..=6).map(|n| retry.backoff(n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(retry.backoff(u32::MAX), Duration::from_millis(1000));
        for n in 1..=6 {
            let wait = retry.wait(n);
            assert!(wait <= retry.backoff(n) && wait >= retry.backoff(n) / 2);
        }
        assert_eq!(RetryPolicy::NONE.wait(1), Duration::ZERO);
    }

    #[test]
    fn repositories_are_named_from_the_path() {
        assert_eq!(
            request_repository("/repositories/song-1/branches"),
            "song-1"
        );
        assert_eq!(percent_decode("a%2Fb%zz"), "a/b%zz");
    }
}
