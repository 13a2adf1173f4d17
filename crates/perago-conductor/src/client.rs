//! The blocking client for Conductor's REST API (`docs/src/reference/conductor.md` §3–§4).
//!
//! [`Client`] holds the server's base URL, the optional Orkes `X-Authorization` token and a
//! [`Retry`] policy; it sends JSON and returns the status and body text as a [`Response`], or a
//! typed [`Error`]. Connection errors and 5xx answers are retried with exponential backoff a
//! bounded number of times ([`Retry`]); any other status is returned at once.
//!
//! ```no_run
//! use perago_conductor::Client;
//!
//! let client = Client::from_env("http://localhost:8080")?; // CONDUCTOR_AUTH_TOKEN, if set
//! let defs: serde_json::Value = client.get("/api/metadata/taskdefs", &[])?.json()?;
//! # Ok::<(), perago_conductor::Error>(())
//! ```
//!
//! Paths are absolute and include `/api` (`/api/metadata/taskdefs`); the base URL is the
//! server root (`http://host:8080`) — a trailing `/api` on it is accepted and dropped, because the
//! Conductor SDKs spell server URLs that way. The token never appears in `Debug` output, errors
//! or logs.
//!
//! The API areas live beside it: [`crate::metadata`] (TaskDefs and the schema registry) and
//! [`crate::tasks`] (the worker's poll and update).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::io::{self, Read};
use std::time::Duration;

/// The environment variable holding the optional `X-Authorization` token (Orkes servers).
pub const AUTH_TOKEN_ENV: &str = "CONDUCTOR_AUTH_TOKEN";

/// The header carrying the token.
pub const AUTH_HEADER: &str = "X-Authorization";

/// The largest response body read by default (bytes): Conductor's own payload ceiling is 10 MB
/// per task input or output, and a batch poll can carry several.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;

/// An HTTP method the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
}

impl Method {
    /// The method's name, e.g. `"GET"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A wait that doubles after every failure, from `initial` up to `max`: the one backoff rule
/// of the client's retries, the worker's polls and its result updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Backoff {
    /// No wait at all.
    pub const NONE: Backoff = Backoff {
        initial: Duration::ZERO,
        max: Duration::ZERO,
    };

    /// The wait after `failures` failures in a row (≥ 1): `initial · 2^(failures-1)`, capped
    /// at `max`.
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 1u32
            .checked_shl(failures.saturating_sub(1).min(31))
            .unwrap_or(u32::MAX);
        self.initial
            .checked_mul(factor)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

/// How often and how patiently a request is retried after a connection error or a 5xx answer:
/// failed attempt `n` waits [`Backoff::delay`]`(n)` before attempt `n + 1`; after
/// `max_attempts` attempts the last error is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The waits between attempts.
    pub backoff: Backoff,
}

impl Retry {
    /// One attempt, no retry.
    pub const NONE: Retry = Retry {
        max_attempts: 1,
        backoff: Backoff::NONE,
    };
}

impl Default for Retry {
    /// 4 attempts, waiting 0.5 s, 1 s, 2 s (capped at 5 s).
    fn default() -> Self {
        Retry {
            max_attempts: 4,
            backoff: Backoff {
                initial: Duration::from_millis(500),
                max: Duration::from_secs(5),
            },
        }
    }
}

/// An `X-Authorization` token: `Debug` never shows it, and no error or log line carries it.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthToken(String);

impl AuthToken {
    /// Wraps `token`.
    pub fn new(token: impl Into<String>) -> AuthToken {
        AuthToken(token.into())
    }

    /// The token itself, for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthToken(<redacted>)")
    }
}

/// A Conductor API client: base URL, optional auth token, timeout, body limit and retry policy.
///
/// Cheap to clone (the connection pool is shared); the `with_*` methods return adjusted copies.
/// Redirects are not followed: a 3xx answer is an [`Error::Status`] naming where it points,
/// since a Conductor URL that redirects is a misconfiguration to fix, not to paper over.
#[derive(Clone)]
pub struct Client {
    base_url: String,
    token: Option<AuthToken>,
    retry: Retry,
    timeout: Duration,
    max_body: u64,
    agent: ureq::Agent,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("token", &self.token)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The default timeout (see [`Client::with_timeout`]).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A client for the server at `base_url` (`http://` or `https://`), without a token, with the
    /// default [`Retry`] and timeout.
    pub fn new(base_url: &str) -> Result<Client, Error> {
        let base_url = normalize_base_url(base_url)?;
        Ok(Client {
            base_url,
            token: None,
            retry: Retry::default(),
            timeout: Self::DEFAULT_TIMEOUT,
            max_body: DEFAULT_MAX_BODY_BYTES,
            agent: build_agent(Self::DEFAULT_TIMEOUT),
        })
    }

    /// [`Client::new`] with the token from [`AUTH_TOKEN_ENV`] when that is set and not empty.
    pub fn from_env(base_url: &str) -> Result<Client, Error> {
        let client = Client::new(base_url)?;
        Ok(match std::env::var(AUTH_TOKEN_ENV) {
            Ok(token) if !token.trim().is_empty() => client.with_auth_token(token.trim()),
            _ => client,
        })
    }

    /// This client sending `X-Authorization: <token>` on every request.
    pub fn with_auth_token(mut self, token: impl Into<String>) -> Client {
        self.token = Some(AuthToken::new(token));
        self
    }

    /// This client with another retry policy.
    pub fn with_retry(mut self, retry: Retry) -> Client {
        self.retry = Retry {
            max_attempts: retry.max_attempts.max(1),
            ..retry
        };
        self
    }

    /// This client with another timeout. Looking the host up (once in 30 s), connecting,
    /// sending the request head and waiting for the answer's head each get `timeout`; a body,
    /// sent or received, may take as long as it needs while it keeps moving: no single read
    /// or write may wait longer than `timeout`.
    /// So a large answer is never cut off for its size, and a stalled one still fails.
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self.agent = build_agent(timeout);
        self
    }

    /// This client reading answers of at most `bytes` (default [`DEFAULT_MAX_BODY_BYTES`]); a
    /// longer one is an error naming the limit.
    pub fn with_max_body(mut self, bytes: u64) -> Client {
        self.max_body = bytes;
        self
    }

    /// The longest answer read, in bytes.
    pub fn max_body(&self) -> u64 {
        self.max_body
    }

    /// The server root, without a trailing `/` or `/api`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether requests carry an `X-Authorization` token.
    pub fn has_auth_token(&self) -> bool {
        self.token.is_some()
    }

    /// The retry policy.
    pub fn retry(&self) -> Retry {
        self.retry
    }

    /// The full URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// `GET path?query`; a 2xx answer is returned, anything else is an [`Error`].
    pub fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Response, Error> {
        self.send(Method::Get, path, query, None)
    }

    /// `GET path` decoded as JSON; `Ok(None)` on 404.
    pub fn get_json_opt<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, Error> {
        match self.get(path, &[]) {
            Ok(response) => response.json().map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `POST path?query` with `body` as JSON.
    pub fn post_json<B: Serialize + ?Sized>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        body: &B,
    ) -> Result<Response, Error> {
        let body = encode(Method::Post, &self.url(path), body)?;
        self.send(Method::Post, path, query, Some(&body))
    }

    /// `PUT path` with `body` as JSON.
    pub fn put_json<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<Response, Error> {
        let body = encode(Method::Put, &self.url(path), body)?;
        self.send(Method::Put, path, &[], Some(&body))
    }

    /// `DELETE path`.
    pub fn delete(&self, path: &str) -> Result<Response, Error> {
        self.send(Method::Delete, path, &[], None)
    }

    /// Sends one request (with `body` as `application/json` when given), retrying connection
    /// errors and 5xx answers per the [`Retry`] policy. A 2xx answer is returned; any other
    /// status is [`Error::Status`].
    pub fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Response, Error> {
        let url = self.url(path);
        let mut attempt = 1;
        loop {
            let answer = self.exchange(method, &url, query, body, attempt, |status, reader| {
                let mut text = String::new();
                reader
                    .read_to_string(&mut text)
                    .map_err(|e| self.describe_body_error(status, &e))?;
                Ok((status, text))
            });
            let error = match answer {
                Ok(Ok((status, text))) => {
                    return Ok(Response {
                        method,
                        url,
                        status,
                        body: text,
                    });
                }
                Ok(Err(message)) => Error::Transport {
                    method,
                    url: url.clone(),
                    message,
                    attempts: attempt,
                    request_sent: true,
                },
                Err(error) => error,
            };
            if !error.is_retryable() || attempt >= self.retry.max_attempts {
                return Err(error);
            }
            std::thread::sleep(self.retry.backoff.delay(attempt));
            attempt += 1;
        }
    }

    /// `GET path?query`, once (no retry): a 2xx answer's status and body go to `read` as the
    /// body arrives, so a large answer is processed without holding its text; the body is
    /// bounded by [`max_body`](Self::max_body) and errors of reading it come out of `read`'s
    /// reader (see [`Client::describe_body_error`]). Any other status is [`Error::Status`].
    pub fn get_streaming<T>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        read: impl FnOnce(u16, &mut dyn Read) -> T,
    ) -> Result<T, Error> {
        self.exchange(Method::Get, &self.url(path), query, None, 1, read)
    }

    /// What went wrong reading a body, in words: the size limit, a stall, or the transport.
    pub fn describe_body_error(&self, status: u16, e: &io::Error) -> String {
        let cause = match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
        {
            Some(inner) => describe_transport_error(inner),
            None => e.to_string(),
        };
        format!("reading the response body (HTTP {status}): {cause}")
    }

    /// One request: a 2xx answer's body goes to `read`; another answer is an
    /// [`Error::Status`] (its body read as text, bounded), no answer an [`Error::Transport`].
    fn exchange<T>(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&[u8]>,
        attempt: u32,
        read: impl FnOnce(u16, &mut dyn Read) -> T,
    ) -> Result<T, Error> {
        let transport = |message, request_sent| Error::Transport {
            method,
            url: url.to_owned(),
            message,
            attempts: attempt,
            request_sent,
        };
        let mut response = self
            .call(method, url, query, body)
            .map_err(|e| transport(describe_transport_error(&e), request_sent(&e)))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            let mut reader = response
                .body_mut()
                .with_config()
                .limit(self.max_body)
                .reader();
            return Ok(read(status, &mut reader));
        }
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut text = String::new();
        let mut reader = response
            .body_mut()
            .with_config()
            .limit(self.max_body)
            .reader();
        reader
            .read_to_string(&mut text)
            .map_err(|e| transport(self.describe_body_error(status, &e), true))?;
        Err(Error::Status {
            method,
            url: url.to_owned(),
            status,
            location,
            body: text,
            attempts: attempt,
        })
    }

    fn call(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        match (method, body) {
            (Method::Get, _) => self.prepare(self.agent.get(url), query).call(),
            (Method::Delete, _) => self.prepare(self.agent.delete(url), query).call(),
            (Method::Post, body) => self
                .prepare(self.agent.post(url), query)
                .content_type("application/json")
                .send(body.unwrap_or_default()),
            (Method::Put, body) => self
                .prepare(self.agent.put(url), query)
                .content_type("application/json")
                .send(body.unwrap_or_default()),
        }
    }

    /// The headers every request carries (user agent, token) and the query.
    fn prepare<B>(
        &self,
        mut req: ureq::RequestBuilder<B>,
        query: &[(&str, &str)],
    ) -> ureq::RequestBuilder<B> {
        req = req.header("user-agent", concat!("perago/", env!("CARGO_PKG_VERSION")));
        if let Some(AuthToken(token)) = &self.token {
            req = req.header(AUTH_HEADER, token.as_str());
        }
        req.query_pairs(query.iter().copied())
    }
}

/// See [`Client::with_timeout`]: every phase but a moving body is bounded by `timeout`. The
/// host is looked up once in a while ([`perago_resolver`]), not for every poll and update.
fn build_agent(timeout: Duration) -> ureq::Agent {
    let t = Some(timeout);
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_resolve(t)
        .timeout_connect(t)
        .timeout_send_request(t)
        .timeout_recv_response(t)
        .timeout_per_read(t)
        .timeout_per_write(t)
        .build();
    perago_resolver::agent(config)
}

/// Whether a request that failed with `e` may have reached the server: all but a connection
/// that was never made. (A poll that reached it may have had tasks handed out.)
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

fn describe_transport_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => format!("connection error: {io}"),
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::BodyExceedsLimit(limit) => {
            format!("the answer is larger than the limit of {limit} bytes")
        }
        other => other.to_string(),
    }
}

fn encode<B: Serialize + ?Sized>(method: Method, url: &str, body: &B) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(body).map_err(|e| Error::Encode {
        method,
        url: url.to_owned(),
        message: e.to_string(),
    })
}

fn normalize_base_url(base_url: &str) -> Result<String, Error> {
    let trimmed = base_url.trim();
    let invalid = |reason: &str| Error::InvalidUrl {
        url: base_url.to_owned(),
        reason: reason.to_owned(),
    };
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| invalid("expected an http:// or https:// URL"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(invalid("the URL has no host"));
    }
    if trimmed.contains(['?', '#']) || trimmed.chars().any(char::is_whitespace) {
        return Err(invalid(
            "expected the server root, without query, fragment or spaces",
        ));
    }
    let mut url = trimmed.trim_end_matches('/');
    if let Some(root) = url.strip_suffix("/api") {
        url = root.trim_end_matches('/');
    }
    Ok(url.to_owned())
}

/// Percent-encodes one path segment (a task type, a schema name) for use in a request path.
pub fn path_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A 2xx answer: its status and body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    method: Method,
    url: String,
    /// The HTTP status (2xx).
    pub status: u16,
    /// The body as text (often empty: Conductor answers 200 with no body to a registration).
    pub body: String,
}

impl Response {
    /// The body decoded as JSON into `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_str(&self.body).map_err(|e| Error::Decode {
            method: self.method,
            url: self.url.clone(),
            status: self.status,
            message: e.to_string(),
            body: self.body.clone(),
        })
    }

    /// Whether the body is empty (or only whitespace), e.g. a 204 or a registration's 200.
    pub fn is_empty(&self) -> bool {
        self.body.trim().is_empty()
    }

    /// The request's method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The request's full URL (without the query).
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// What can go wrong talking to Conductor. The auth token never appears in an error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a non-2xx status (after the retries, for a 5xx).
    #[error("{method} {url}: {}", describe_status(*status, location.as_deref(), body))]
    Status {
        /// The request's method.
        method: Method,
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The `Location` of a redirect (which is not followed).
        location: Option<String>,
        /// The response body as text.
        body: String,
        /// Attempts made.
        attempts: u32,
    },
    /// No answer: connection refused or reset, DNS, TLS, timeout (after the retries).
    #[error("{method} {url}: {message} (after {attempts} attempt{})", if *attempts == 1 { "" } else { "s" })]
    Transport {
        /// The request's method.
        method: Method,
        /// The request's URL.
        url: String,
        /// What failed.
        message: String,
        /// Attempts made.
        attempts: u32,
        /// Whether the last attempt may have reached the server (false when no connection
        /// was made).
        request_sent: bool,
    },
    /// A 2xx answer whose body is not the expected JSON.
    #[error("{method} {url}: HTTP {status} with a body that is not the expected JSON: {message}")]
    Decode {
        /// The request's method.
        method: Method,
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The decoding error.
        message: String,
        /// The response body.
        body: String,
    },
    /// The request body could not be encoded as JSON.
    #[error("{method} {url}: cannot encode the request body as JSON: {message}")]
    Encode {
        /// The request's method.
        method: Method,
        /// The request's URL.
        url: String,
        /// The encoding error.
        message: String,
    },
    /// The base URL is not usable.
    #[error("invalid Conductor URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it is refused.
        reason: String,
    },
}

impl Error {
    /// The HTTP status of a [`Error::Status`] (or of a [`Error::Decode`]).
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Status { status, .. } | Error::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the server answered 404.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404) && matches!(self, Error::Status { .. })
    }

    /// Whether the client retries this error: a connection error or a 5xx answer.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport { .. } => true,
            Error::Status { status, .. } => (500..600).contains(status),
            _ => false,
        }
    }

    /// The response body of a [`Error::Status`].
    pub fn body(&self) -> Option<&str> {
        match self {
            Error::Status { body, .. } | Error::Decode { body, .. } => Some(body),
            _ => None,
        }
    }

    /// Conductor's error body (`{status, message, validationErrors, …}`), when the answer had one.
    pub fn error_body(&self) -> Option<ErrorBody> {
        match self {
            Error::Status { body, .. } => ErrorBody::parse(body),
            _ => None,
        }
    }
}

/// Conductor's error response (`ErrorResponse.java`); every field optional.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ErrorBody {
    /// The HTTP status the server put in the body.
    pub status: Option<i64>,
    /// An error code (usually absent).
    pub code: Option<String>,
    /// The message.
    pub message: Option<String>,
    /// The server instance.
    pub instance: Option<String>,
    /// Whether the server thinks a retry can succeed.
    pub retryable: Option<bool>,
    /// One entry per rejected field (400 validation errors).
    pub validation_errors: Vec<ValidationError>,
}

/// One rejected field of a 400 answer.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ValidationError {
    /// Where, e.g. `registerTaskDef.taskDefinitions[0].ownerEmail`.
    pub path: Option<String>,
    /// What is wrong.
    pub message: Option<String>,
    /// The rejected value: `Some(Value::Null)` when the server said `null`, `None` when it said
    /// nothing.
    #[serde(deserialize_with = "present")]
    pub invalid_value: Option<Value>,
}

/// A field that is present, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

impl ErrorBody {
    /// Parses a Conductor error body; `None` when `body` is not a JSON object of that shape.
    pub fn parse(body: &str) -> Option<ErrorBody> {
        let value: Value = serde_json::from_str(body).ok()?;
        if !value.is_object() {
            return None;
        }
        serde_json::from_value(value).ok()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.as_deref().unwrap_or("?");
        let message = self.message.as_deref().unwrap_or("invalid");
        write!(f, "{path}: {message}")?;
        match &self.invalid_value {
            None => Ok(()),
            Some(v) => write!(f, " (value: {v})"),
        }
    }
}

/// `HTTP 400: message` and, for a Conductor error body, one indented line per validation error;
/// any other body is shown cut to 500 characters. A redirect says where it points.
fn describe_status(status: u16, location: Option<&str>, body: &str) -> String {
    let mut out = format!("HTTP {status}");
    if (300..400).contains(&status) {
        out.push_str(&format!(
            " (a redirect to {}; perago does not follow redirects: give the Conductor \
             server's own URL)",
            location.unwrap_or("an unnamed location")
        ));
        return out;
    }
    if let Some(error) = ErrorBody::parse(body) {
        if let Some(message) = error.message.as_deref().filter(|m| !m.is_empty()) {
            out.push_str(": ");
            out.push_str(message);
        }
        for v in &error.validation_errors {
            out.push_str("\n  - ");
            out.push_str(&v.to_string());
        }
    } else if !body.trim().is_empty() {
        let text = body.trim();
        let cut: String = text.chars().take(500).collect();
        out.push_str(": ");
        out.push_str(&cut);
        if cut.len() < text.len() {
            out.push('…');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalized() {
        for (given, want) in [
            ("http://localhost:8080", "http://localhost:8080"),
            ("http://localhost:8080/", "http://localhost:8080"),
            ("http://localhost:8080/api", "http://localhost:8080"),
            ("https://x.orkes.io/api/", "https://x.orkes.io"),
            ("https://x.example/conductor", "https://x.example/conductor"),
        ] {
            assert_eq!(Client::new(given).unwrap().base_url(), want, "{given}");
        }
        for bad in [
            "localhost:8080",
            "ftp://x",
            "http://",
            "http:///x",
            "http://x/?a",
        ] {
            let e = Client::new(bad).unwrap_err();
            assert!(matches!(e, Error::InvalidUrl { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let backoff = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        let waits: Vec<u128> = (1..=6).map(|n| backoff.delay(n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(backoff.delay(200), Duration::from_millis(1000));
        assert_eq!(backoff.delay(u32::MAX), Duration::from_millis(1000));
        assert_eq!(Retry::NONE.backoff.delay(1), Duration::ZERO);
    }

    #[test]
    fn the_token_is_never_shown() {
        let client = Client::new("http://h")
            .unwrap()
            .with_auth_token("s3cr3t-token");
        assert!(client.has_auth_token());
        assert!(!format!("{client:?}").contains("s3cr3t"));
    }

    #[test]
    fn a_validation_error_body_is_shown_field_by_field() {
        let body = r#"{"status":400,"message":"Validation failed, check below errors for detail.","instance":"h","retryable":false,
          "validationErrors":[{"path":"registerTaskDef.taskDefinitions[0].ownerEmail","message":"ownerEmail cannot be empty","invalidValue":null},
                              {"path":"registerTaskDef.taskDefinitions[1].responseTimeoutSeconds","message":"must be >= 1","invalidValue":0}]}"#;
        let e = Error::Status {
            method: Method::Post,
            url: "http://h/api/metadata/taskdefs".into(),
            status: 400,
            location: None,
            body: body.into(),
            attempts: 1,
        };
        assert_eq!(
            e.to_string(),
            "POST http://h/api/metadata/taskdefs: HTTP 400: Validation failed, check below errors for detail.\n  \
             - registerTaskDef.taskDefinitions[0].ownerEmail: ownerEmail cannot be empty (value: null)\n  \
             - registerTaskDef.taskDefinitions[1].responseTimeoutSeconds: must be >= 1 (value: 0)"
        );
        assert!(!e.is_retryable());
        assert_eq!(e.error_body().unwrap().validation_errors.len(), 2);
        // Without an invalidValue, no value is shown.
        let v: ValidationError = serde_json::from_str(r#"{"path":"p","message":"m"}"#).unwrap();
        assert_eq!(v.to_string(), "p: m");
    }

    #[test]
    fn retryable_errors() {
        let status = |status| Error::Status {
            method: Method::Get,
            url: "u".into(),
            status,
            location: None,
            body: String::new(),
            attempts: 1,
        };
        assert!(status(500).is_retryable());
        assert!(status(503).is_retryable());
        assert!(!status(404).is_retryable());
        assert!(status(404).is_not_found());
        assert_eq!(status(502).to_string(), "GET u: HTTP 502");
    }

    #[test]
    fn connection_errors_are_retried_then_reported() {
        // A port nothing listens on: bind, take the port, drop the listener.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let client = Client::new(&format!("http://127.0.0.1:{port}"))
            .unwrap()
            .with_retry(Retry {
                max_attempts: 3,
                backoff: Backoff {
                    initial: Duration::from_millis(1),
                    max: Duration::from_millis(2),
                },
            });
        let e = client.get("/api/metadata/taskdefs", &[]).unwrap_err();
        assert!(matches!(e, Error::Transport { attempts: 3, .. }), "{e:?}");
        assert!(e.to_string().contains("after 3 attempts"), "{e}");
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(path_segment("build_features"), "build_features");
        assert_eq!(path_segment("a b/c"), "a%20b%2Fc");
    }
}
