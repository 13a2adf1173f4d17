//! The lakeFS client against a scripted server: a std `TcpListener` answering each request
//! with what the test's handler says, recording what it was sent. It checks the wire details
//! (auth header, percent-encoding, pagination, bodies), the retry policy and the mapping of
//! lakeFS's answers, and that no message carries the secret.
#![cfg(feature = "lakefs")]

use base64::Engine as _;
use md5::{Digest, Md5};
use perago_workspace::lakefs::{LakeFs, LakeFsSettings, RetryPolicy, Timeouts};
use perago_workspace::store::{Change, ChangeKind};
use perago_workspace::{CommitId, Merge, Metadata, ObjectInfo, Store, StoreError};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCESS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
/// With `/` and `+`, so that an encoded form could show up too.
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzS3CR3T";

// ---------------------------------------------------------------------------------------------
// The scripted server.

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    /// Path and query, as sent (still percent-encoded).
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path, still encoded.
    fn path(&self) -> &str {
        self.target.split('?').next().unwrap()
    }

    /// The raw query string.
    fn query(&self) -> &str {
        self.target.split_once('?').map(|(_, q)| q).unwrap_or("")
    }

    /// A query parameter, decoded.
    fn param(&self, key: &str) -> Option<String> {
        self.query().split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == key).then(|| decode(v))
        })
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            assert_ne!(
                bytes[i], b'+',
                "a bare + in a query: Go reads it as a space"
            );
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// What the server does with a request.
enum Reply {
    /// An answer.
    Full {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    },
    /// Close the connection without answering (a lost answer).
    Hangup,
    /// Announce `announced` bytes, send `body`, close.
    Truncated { announced: usize, body: Vec<u8> },
    /// Wait, then answer.
    Slow(Duration, Box<Reply>),
}

fn json_reply(status: u16, value: Value) -> Reply {
    Reply::Full {
        status,
        headers: vec![("content-type", "application/json".into())],
        body: format!("{value}\n").into_bytes(),
    }
}

fn error_reply(status: u16, message: &str) -> Reply {
    json_reply(status, json!({ "message": message }))
}

fn bytes_reply(status: u16, body: &[u8]) -> Reply {
    Reply::Full {
        status,
        headers: vec![("content-type", "application/octet-stream".into())],
        body: body.to_vec(),
    }
}

fn no_content() -> Reply {
    Reply::Full {
        status: 204,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

struct Script {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Script {
    fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Script {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let recorded = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let handler = Arc::clone(&handler);
                let recorded = Arc::clone(&recorded);
                std::thread::spawn(move || serve(stream, &*handler, &recorded));
            }
        });
        Script { port, requests }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn client(&self) -> LakeFs {
        client_for(&self.url())
    }
}

fn serve(stream: TcpStream, handler: &Handler, recorded: &Mutex<Vec<Recorded>>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        recorded.lock().unwrap().push(request.clone());
        if !answer(&mut writer, handler(&request)) {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.trim_end().splitn(3, ' ');
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut request = Recorded {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    assert!(
        request.header("transfer-encoding").is_none(),
        "the client sends sized bodies"
    );
    if let Some(length) = request.header("content-length") {
        let mut body = vec![0; length.parse().unwrap()];
        reader.read_exact(&mut body).ok()?;
        request.body = body;
    }
    Some(request)
}

/// Writes `reply`; false when the connection is to be closed.
fn answer(writer: &mut TcpStream, reply: Reply) -> bool {
    match reply {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} X\r\n");
            if status != 204 {
                head.push_str(&format!("content-length: {}\r\n", body.len()));
            }
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            writer.write_all(head.as_bytes()).is_ok() && writer.write_all(&body).is_ok()
        }
        Reply::Hangup => false,
        Reply::Truncated { announced, body } => {
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {announced}\r\n\r\n");
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(&body);
            let _ = writer.flush();
            false
        }
        Reply::Slow(wait, reply) => {
            std::thread::sleep(wait);
            answer(writer, *reply)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
    }
}

fn settings_for(url: &str) -> LakeFsSettings {
    LakeFsSettings {
        endpoint_url: url.to_owned(),
        access_key_id: ACCESS_KEY_ID.to_owned(),
        secret_access_key: SECRET.into(),
    }
}

fn client_for(url: &str) -> LakeFs {
    LakeFs::new(settings_for(url))
        .unwrap()
        .with_retry(fast_retry(5))
}

fn basic_auth() -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{ACCESS_KEY_ID}:{SECRET}"))
    )
}

/// An error whose every rendering is free of the secret and of the `Authorization` value.
#[track_caller]
fn clean(e: StoreError) -> StoreError {
    let auth = basic_auth();
    let encoded = auth.trim_start_matches("Basic ").to_owned();
    for text in [e.to_string(), format!("{e:?}")] {
        for secret in [SECRET, "wJalrXUtnFEMI", &auth, &encoded] {
            assert!(!text.contains(secret), "the secret in {text}");
        }
    }
    e
}

fn cid(n: u64) -> CommitId {
    CommitId::parse(&format!("{n:064x}")).unwrap()
}

fn commit_json(id: &CommitId, parents: &[&CommitId], message: &str) -> Value {
    json!({
        "id": id.as_str(), "parents": parents.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "committer": "admin", "message": message, "creation_date": 1_784_800_001,
        "meta_range_id": "", "metadata": {"attempt": "3"}, "generation": 2, "version": 1
    })
}

fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn object(path: &str, content: &[u8]) -> ObjectInfo {
    ObjectInfo {
        path: path.to_owned(),
        size: content.len() as u64,
        checksum: md5_hex(content),
    }
}

fn stats_json(path: &str, content: &[u8]) -> Value {
    json!({
        "path": path, "path_type": "object", "physical_address": "local://ns/data/x",
        "checksum": md5_hex(content), "mtime": 1_784_700_000, "size_bytes": content.len(),
        "content_type": "application/octet-stream"
    })
}

fn page(results: Vec<Value>, has_more: bool, next_offset: &str) -> Value {
    json!({
        "pagination": {"has_more": has_more, "next_offset": next_offset,
                       "results": results.len(), "max_per_page": 1000},
        "results": results
    })
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

// ---------------------------------------------------------------------------------------------
// Settings and the client value.

#[test]
fn the_client_is_sync_and_its_debug_hides_the_secret() {
    fn sync<T: Send + Sync>() {}
    sync::<LakeFs>();

    let settings = settings_for("http://127.0.0.1:8000/api/v1/");
    let client = LakeFs::new(settings.clone()).unwrap();
    assert_eq!(client.endpoint(), "http://127.0.0.1:8000");
    assert_eq!(client.describe(), "lakeFS at http://127.0.0.1:8000");
    assert_eq!(client.checksum(), perago_workspace::Checksum::Md5);
    for debug in [format!("{settings:?}"), format!("{client:?}")] {
        assert!(!debug.contains("wJalrXUtnFEMI"), "{debug}");
        assert!(!debug.contains(&basic_auth()[6..]), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
    }
    let empty = LakeFsSettings {
        secret_access_key: "".into(),
        ..settings.clone()
    };
    assert!(matches!(LakeFs::new(empty), Err(StoreError::Invalid(_))));
    let with_credentials = LakeFsSettings {
        endpoint_url: format!("http://{ACCESS_KEY_ID}:{SECRET}@h:8000"),
        ..settings
    };
    let e = clean(LakeFs::new(with_credentials).unwrap_err());
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
}

#[test]
fn settings_from_lookup_make_a_working_client() {
    let script = Script::start(|_| json_reply(200, commit_json(&cid(7), &[], "m")));
    let url = format!("{}/api/v1", script.url());
    let settings = LakeFsSettings::from_lookup(|var| match var {
        "LAKECTL_SERVER_ENDPOINT_URL" => Some(url.clone()),
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID" => Some(ACCESS_KEY_ID.into()),
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY" => Some(SECRET.into()),
        _ => None,
    })
    .unwrap()
    .unwrap();
    let client = LakeFs::new(settings).unwrap();
    assert_eq!(client.get_commit("song-1", "main").unwrap().id, cid(7));
    // The /api/v1 given with the endpoint is not doubled.
    assert_eq!(
        script.requests()[0].path(),
        "/api/v1/repositories/song-1/commits/main"
    );
}

// ---------------------------------------------------------------------------------------------
// Wire details.

#[test]
fn every_request_carries_basic_auth_and_refs_are_encoded() {
    let script =
        Script::start(|_| json_reply(200, commit_json(&cid(2), &[&cid(1)], "task output")));
    let commit = script.client().get_commit("song-1", "main~2^2").unwrap();
    assert_eq!(commit.id, cid(2));
    assert_eq!(commit.parents, [cid(1)]);
    assert_eq!(commit.message, "task output");
    assert_eq!(
        commit.metadata.get("attempt").map(String::as_str),
        Some("3")
    );
    assert_eq!(commit.creation_date, 1_784_800_001);

    let requests = script.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "GET");
    assert_eq!(
        request.path(),
        "/api/v1/repositories/song-1/commits/main~2%5E2"
    );
    assert_eq!(request.header("authorization"), Some(basic_auth().as_str()));
}

#[test]
fn object_paths_are_encoded_in_the_query() {
    let content = b"{\"k\":1}";
    let script = Script::start(move |r| match r.method.as_str() {
        "GET" => bytes_reply(200, content),
        "DELETE" => no_content(),
        _ => unreachable!(),
    });
    let client = script.client();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("a");
    let commit = cid(9);
    client
        .download("song-1", &commit, &object("out/a+b c.json", content), &dest)
        .unwrap();
    client
        .delete_object("song-1", "ws-7f3c", "out/ä&x=1?#%.json")
        .unwrap();
    let requests = script.requests();
    assert_eq!(
        requests[0].target,
        format!(
            "/api/v1/repositories/song-1/refs/{}/objects?path=out%2Fa%2Bb%20c.json",
            commit.as_str()
        )
    );
    assert_eq!(
        requests[1].target,
        "/api/v1/repositories/song-1/branches/ws-7f3c/objects?path=out%2F%C3%A4%26x%3D1%3F%23%25.json"
    );
    assert_eq!(requests[1].method, "DELETE");
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some(basic_auth().as_str()))
    );
}

/// A lakeFS-like listing of `paths`, honouring `after` and `amount`.
fn list(paths: &[String], request: &Recorded, row: impl Fn(&str) -> Value) -> Reply {
    let amount: usize = request.param("amount").unwrap().parse().unwrap();
    assert!((1..=1000).contains(&amount), "amount {amount}");
    let after = request.param("after").unwrap_or_default();
    let rest: Vec<&String> = paths.iter().filter(|p| **p > after).collect();
    let has_more = rest.len() > amount;
    let shown: Vec<&String> = rest.into_iter().take(amount).collect();
    let next = if has_more {
        shown.last().unwrap().as_str()
    } else {
        ""
    };
    json_reply(
        200,
        page(shown.iter().map(|p| row(p)).collect(), has_more, next),
    )
}

#[test]
fn list_objects_pages_through_more_than_1000_objects() {
    let paths: Vec<String> = (0..2500)
        .map(|i| format!("features/f{i:05}.json"))
        .collect();
    let listed = paths.clone();
    let script = Script::start(move |r| {
        assert!(r.param("delimiter").is_none());
        list(&listed, r, |p| stats_json(p, p.as_bytes()))
    });
    let commit = cid(3);
    let objects = script
        .client()
        .list_objects("song-1", &commit, "features/")
        .unwrap();
    assert_eq!(objects.len(), 2500);
    assert_eq!(
        objects[0],
        object("features/f00000.json", b"features/f00000.json")
    );
    assert!(objects.iter().map(|o| &o.path).eq(paths.iter()));

    let requests = script.requests();
    assert_eq!(requests.len(), 3);
    let path = format!(
        "/api/v1/repositories/song-1/refs/{}/objects/ls",
        commit.as_str()
    );
    assert_eq!(
        requests[0].target,
        format!("{path}?prefix=features%2F&amount=1000")
    );
    assert_eq!(
        requests[1].target,
        format!("{path}?prefix=features%2F&amount=1000&after=features%2Ff00999.json")
    );
    assert_eq!(requests[2].param("after").unwrap(), "features/f01999.json");
}

#[test]
fn a_listing_that_does_not_advance_is_an_error_not_a_loop() {
    let script = Script::start(|_| json_reply(200, page(vec![stats_json("a", b"a")], true, "a")));
    let e = clean(
        script
            .client()
            .list_objects("song-1", &cid(3), "")
            .unwrap_err(),
    );
    assert!(e.to_string().contains("does not advance"), "{e}");
    assert_eq!(script.requests().len(), 2);
}

#[test]
fn log_pages_and_stops_at_the_limit() {
    let ids: Vec<String> = (1..=1200u64).rev().map(|n| cid(n).to_string()).collect();
    // The log is newest first, which here is descending id order: `after` means "smaller".
    let listed = ids.clone();
    let script = Script::start(move |r| {
        let amount: usize = r.param("amount").unwrap().parse().unwrap();
        let after = r.param("after");
        let rest: Vec<&String> = listed
            .iter()
            .filter(|id| after.as_ref().is_none_or(|a| *id < a))
            .collect();
        let has_more = rest.len() > amount;
        let shown: Vec<Value> = rest
            .iter()
            .take(amount)
            .map(|id| commit_json(&CommitId::parse(id).unwrap(), &[], "m"))
            .collect();
        let next = if has_more {
            rest[amount - 1].clone()
        } else {
            String::new()
        };
        json_reply(200, page(shown, has_more, &next))
    });
    let client = script.client();
    let log = client.log("song-1", "main", 5).unwrap();
    assert_eq!(log.len(), 5);
    assert_eq!(log[0].id.as_str(), ids[0]);
    assert_eq!(script.requests()[0].param("amount").unwrap(), "5");
    assert_eq!(
        script.requests()[0].path(),
        "/api/v1/repositories/song-1/refs/main/commits"
    );

    let log = client.log("song-1", "main", 1100).unwrap();
    assert_eq!(log.len(), 1100);
    assert!(
        log.iter()
            .map(|c| c.id.as_str())
            .eq(ids[..1100].iter().map(String::as_str))
    );
    let all = client.log("song-1", "main", usize::MAX).unwrap();
    assert_eq!(all.len(), 1200);
    assert_eq!(script.requests().len(), 1 + 2 + 2);
}

#[test]
fn list_branches_pages() {
    let names: Vec<String> = (0..1500).map(|i| format!("b{i:04}")).collect();
    let listed = names.clone();
    let script = Script::start(move |r| {
        list(
            &listed,
            r,
            |name| json!({"id": name, "commit_id": cid(5).as_str()}),
        )
    });
    let branches = script.client().list_branches("song-1").unwrap();
    assert_eq!(branches.len(), 1500);
    assert_eq!(branches[1499], ("b1499".to_owned(), cid(5)));
    assert_eq!(script.requests().len(), 2);
    assert_eq!(
        script.requests()[0].path(),
        "/api/v1/repositories/song-1/branches"
    );
}

#[test]
fn diff_is_two_dot_paginated_and_mapped() {
    let paths: Vec<String> = (0..1001).map(|i| format!("out/{i:04}")).collect();
    let listed = paths.clone();
    let script = Script::start(move |r| {
        assert_eq!(r.param("type").as_deref(), Some("two_dot"));
        assert_eq!(r.param("prefix").as_deref(), Some("out/"));
        list(&listed, r, |p| {
            let kind = match p.as_bytes()[p.len() - 1] % 3 {
                0 => "added",
                1 => "removed",
                _ => "changed",
            };
            json!({"type": kind, "path": p, "path_type": "object", "size_bytes": 1})
        })
    });
    let (left, right) = (cid(1), cid(2));
    let changes = script
        .client()
        .diff("song-1", &left, &right, "out/")
        .unwrap();
    assert_eq!(changes.len(), 1001);
    assert_eq!(
        changes[..3],
        [
            Change {
                kind: ChangeKind::Added,
                path: "out/0000".into()
            },
            Change {
                kind: ChangeKind::Removed,
                path: "out/0001".into()
            },
            Change {
                kind: ChangeKind::Changed,
                path: "out/0002".into()
            },
        ]
    );
    assert_eq!(
        script.requests()[0].path(),
        format!(
            "/api/v1/repositories/song-1/refs/{}/diff/{}",
            left.as_str(),
            right.as_str()
        )
    );
    assert_eq!(script.requests().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Retries and failures.

#[test]
fn a_500_is_retried_then_succeeds() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) < 2 {
            error_reply(500, "internal server error")
        } else {
            json_reply(200, commit_json(&cid(4), &[], "m"))
        }
    });
    assert_eq!(
        script.client().get_commit("song-1", "main").unwrap().id,
        cid(4)
    );
    assert_eq!(script.requests().len(), 3);
}

#[test]
fn a_persistent_500_names_the_operation_and_the_tries() {
    let script = Script::start(|_| error_reply(500, "internal server error"));
    let commit = cid(0xabc);
    let e = clean(
        script
            .client()
            .list_objects("song-1", &commit, "features/")
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "lakeFS at {}: list objects of song-1@{} under features/: 500 internal server error (after 5 tries)",
            script.url(),
            commit.short()
        )
    );
    assert_eq!(script.requests().len(), 5);
}

#[test]
fn a_401_is_unauthorized_at_once() {
    let script = Script::start(|_| error_reply(401, "error authenticating request"));
    let e = clean(script.client().list_branches("song-1").unwrap_err());
    assert!(matches!(e, StoreError::Unauthorized(_)), "{e:?}");
    assert!(
        e.to_string().contains("error authenticating request"),
        "{e}"
    );
    assert!(e.to_string().contains("list branches of song-1"), "{e}");
    assert_eq!(script.requests().len(), 1);
}

#[test]
fn a_server_echoing_the_credentials_is_redacted() {
    let script = Script::start(|r| {
        let echoed = format!(
            "bad header {} for secret {SECRET}",
            r.header("authorization").unwrap()
        );
        error_reply(400, &echoed)
    });
    let e = clean(script.client().get_commit("song-1", "main").unwrap_err());
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("<redacted>"), "{e}");
}

#[test]
fn not_found_tells_a_missing_repository_from_a_missing_ref() {
    let script = Script::start(|r| {
        if r.path().contains("/nope/") {
            error_reply(404, "repository not found")
        } else if r.method == "DELETE" {
            error_reply(404, "branch not found")
        } else {
            error_reply(404, "commit not found")
        }
    });
    let client = script.client();
    let e = clean(client.get_commit("nope", "main").unwrap_err());
    assert!(
        matches!(&e, StoreError::RepositoryNotFound(r) if r.starts_with("nope ")),
        "{e:?}"
    );
    let e = clean(client.get_commit("song-1", "gone").unwrap_err());
    assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");
    assert!(e.to_string().contains("ref gone of song-1"), "{e}");
    let e = clean(client.delete_branch("song-1", "ws-1").unwrap_err());
    assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");
    assert!(e.to_string().contains("branch ws-1 of song-1"), "{e}");
    let e = clean(client.log("nope", "main", 10).unwrap_err());
    assert!(matches!(e, StoreError::RepositoryNotFound(_)), "{e:?}");
    // No 404 is retried.
    assert_eq!(script.requests().len(), 4);
}

#[test]
fn connection_refused_is_retried_then_unavailable() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let client = client_for(&url).with_retry(fast_retry(3));
    let e = clean(client.get_commit("song-1", "main").unwrap_err());
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("lakeFS at {url}: get commit main of song-1: ")),
        "{text}"
    );
    assert!(text.ends_with("(after 3 tries)"), "{text}");
    // A merge that never reached lakeFS is retried too, since nothing happened.
    let e = clean(
        client
            .merge("song-1", "ws-1", "main", "m", &Metadata::new())
            .unwrap_err(),
    );
    assert!(e.to_string().ends_with("(after 3 tries)"), "{e}");
}

#[test]
fn a_slow_answer_times_out() {
    let script = Script::start(|_| {
        Reply::Slow(
            Duration::from_millis(1500),
            Box::new(json_reply(200, commit_json(&cid(1), &[], "m"))),
        )
    });
    let client = script
        .client()
        .with_retry(RetryPolicy::NONE)
        .with_timeouts(Timeouts {
            connect: Duration::from_secs(1),
            read: Duration::from_millis(200),
        });
    let e = clean(client.get_commit("song-1", "main").unwrap_err());
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("timed out"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Commit and merge.

#[test]
fn commit_sends_message_and_metadata_and_maps_no_changes() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            json_reply(201, commit_json(&cid(8), &[&cid(7)], "task output"))
        } else {
            error_reply(400, "commit: no changes")
        }
    });
    let client = script.client();
    let metadata = Metadata::from([("attempt".to_owned(), "3".to_owned())]);
    let commit = client
        .commit("song-1", "ws-7f3c", "task output", &metadata)
        .unwrap()
        .unwrap();
    assert_eq!(commit.id, cid(8));
    assert_eq!(commit.parents, [cid(7)]);
    assert_eq!(
        client
            .commit("song-1", "ws-7f3c", "again", &metadata)
            .unwrap(),
        None
    );

    let request = &script.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.path(),
        "/api/v1/repositories/song-1/branches/ws-7f3c/commits"
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        json!({"message": "task output", "metadata": {"attempt": "3"}})
    );
}

#[test]
fn merge_maps_merged_conflict_no_changes_and_dirty() {
    let script = Script::start(|r| match r.json()["message"].as_str().unwrap() {
        "merged" => json_reply(200, json!({"reference": cid(9).as_str()})),
        "conflict" => json_reply(409, json!({"reference": ""})),
        "no changes" => error_reply(400, "update branch main: no changes"),
        "dirty" => error_reply(400, "uncommitted changes (dirty branch)"),
        other => panic!("{other}"),
    });
    let client = script.client();
    let merge = |message| client.merge("song-1", "ws-7f3c", "main", message, &Metadata::new());
    assert_eq!(merge("merged").unwrap(), Merge::Merged(cid(9)));
    assert_eq!(merge("conflict").unwrap(), Merge::Conflict);
    assert_eq!(merge("no changes").unwrap(), Merge::NoChanges);
    let e = clean(merge("dirty").unwrap_err());
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
    assert!(
        e.to_string().contains("uncommitted changes (dirty branch)"),
        "{e}"
    );
    assert!(
        e.to_string().contains("merge ws-7f3c into main of song-1"),
        "{e}"
    );

    let requests = script.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[0].path(),
        "/api/v1/repositories/song-1/refs/ws-7f3c/merge/main"
    );
    assert_eq!(
        requests[0].json(),
        json!({"message": "merged", "metadata": {}})
    );
}

#[test]
fn a_merge_whose_answer_is_lost_is_not_repeated() {
    let script = Script::start(|_| Reply::Hangup);
    let e = clean(
        script
            .client()
            .merge("song-1", "ws-1", "main", "m", &Metadata::new())
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("merge ws-1 into main of song-1: no answer"),
        "{text}"
    );
    assert!(text.contains("may or may not have taken effect"), "{text}");
    assert!(text.contains("log"), "{text}");
    assert_eq!(script.requests().len(), 1);
}

#[test]
fn a_merge_whose_answer_breaks_off_took_effect_and_says_so() {
    let script = Script::start(|_| Reply::Truncated {
        announced: 80,
        body: b"{\"reference\":\"00".to_vec(),
    });
    let e = clean(
        script
            .client()
            .merge("song-1", "ws-1", "main", "m", &Metadata::new())
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(
        e.to_string().contains("answered 200, so it took effect"),
        "{e}"
    );
    assert_eq!(script.requests().len(), 1);
}

#[test]
fn a_merge_or_commit_is_repeated_only_when_nothing_happened() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |r| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        match (r.path().ends_with("/main"), n) {
            // merge: locked, too many tries, then merged
            (true, 0) => error_reply(500, "branch is currently locked, try again later"),
            (true, 1) => error_reply(429, "Too many attempts, try again later"),
            (true, _) => json_reply(200, json!({"reference": cid(9).as_str()})),
            // commit: a 503 may have done anything
            (false, _) => error_reply(503, "Throughput exceeded. Slow down and retry"),
        }
    });
    let client = script.client();
    assert_eq!(
        client
            .merge("song-1", "ws-1", "main", "m", &Metadata::new())
            .unwrap(),
        Merge::Merged(cid(9))
    );
    assert_eq!(script.requests().len(), 3);
    let e = clean(
        client
            .commit("song-1", "ws-1", "m", &Metadata::new())
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("503 Throughput exceeded"), "{e}");
    assert!(
        e.to_string().contains("may or may not have taken effect"),
        "{e}"
    );
    assert_eq!(script.requests().len(), 4);
}

// ---------------------------------------------------------------------------------------------
// Branches.

#[test]
fn create_branch_sends_name_and_source_and_maps_409() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |r| {
        let source = r.json()["source"].as_str().unwrap().to_owned();
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Full {
                status: 201,
                headers: vec![("content-type", "text/plain; charset=utf-8".into())],
                body: source.into_bytes(),
            }
        } else {
            error_reply(409, "branch already exists: not unique")
        }
    });
    let client = script.client();
    client.create_branch("song-1", "ws-7f3c", &cid(6)).unwrap();
    let e = clean(
        client
            .create_branch("song-1", "ws-7f3c", &cid(6))
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::AlreadyExists(_)), "{e:?}");
    assert!(e.to_string().contains("branch ws-7f3c of song-1"), "{e}");
    let request = &script.requests()[0];
    assert_eq!(request.path(), "/api/v1/repositories/song-1/branches");
    assert_eq!(
        request.json(),
        json!({"name": "ws-7f3c", "source": cid(6).as_str()})
    );
}

#[test]
fn a_branch_found_after_a_lost_creation_is_not_called_taken() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Hangup
        } else {
            error_reply(409, "branch already exists: not unique")
        }
    });
    let e = clean(
        script
            .client()
            .create_branch("song-1", "ws-1", &cid(6))
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("may have created it"), "{e}");
    assert_eq!(script.requests().len(), 2);
}

#[test]
fn a_branch_deletion_whose_answer_was_lost_succeeds_on_404() {
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Hangup
        } else {
            error_reply(404, "branch not found")
        }
    });
    script.client().delete_branch("song-1", "ws-1").unwrap();
    let requests = script.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "DELETE");
    assert_eq!(
        requests[0].path(),
        "/api/v1/repositories/song-1/branches/ws-1"
    );
}

// ---------------------------------------------------------------------------------------------
// Downloads.

#[test]
fn a_download_is_verified_and_a_retry_restarts_the_file() {
    let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let served = content.clone();
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |_| match calls.fetch_add(1, Ordering::SeqCst) {
        0 => error_reply(503, "Throughput exceeded. Slow down and retry"),
        1 => Reply::Truncated {
            announced: served.len(),
            body: served[..70_000].to_vec(),
        },
        _ => bytes_reply(200, &served),
    });
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    script
        .client()
        .download("song-1", &cid(1), &object("in/f.bin", &content), &dest)
        .unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), content);
    assert_eq!(script.requests().len(), 3);
}

#[test]
fn a_short_long_or_wrong_body_is_corrupt_and_leaves_no_file() {
    let content = b"hello";
    let script = Script::start(move |r| match r.param("path").unwrap().as_str() {
        "short" => bytes_reply(200, b"hel"),
        "long" => bytes_reply(200, b"hello!"),
        "wrong" => bytes_reply(200, b"jello"),
        other => panic!("{other}"),
    });
    let client = script.client();
    let dir = tempfile::tempdir().unwrap();
    for (path, detail) in [
        ("short", "with 3 bytes for an object of 5 bytes"),
        ("long", "with 6 bytes for an object of 5 bytes"),
        ("wrong", "MD5"),
    ] {
        let dest = dir.path().join(path);
        let e = clean(
            client
                .download("song-1", &cid(1), &object(path, content), &dest)
                .unwrap_err(),
        );
        assert!(
            matches!(&e, StoreError::Corrupt { path: p, detail: d } if p == path && d.contains(detail)),
            "{e:?}"
        );
        assert!(!dest.exists(), "{path}");
    }
    // Corrupt content is not retried: lakeFS said that is the object.
    assert_eq!(script.requests().len(), 3);
}

#[test]
fn download_all_checks_every_md5_and_removes_only_the_wrong_file() {
    // Twenty objects of different sizes, one of them served with other content of its size:
    // the batch hashes after the transfers, sixteen side by side, and must still name it.
    // f13 is hashed from the bytes downloaded, then (more than 128 KiB) from its file.
    for step in [977, 13_000] {
        let contents: Vec<Vec<u8>> = (0..20u32)
            .map(|k| (0..k * step).map(|i| (i % 251) as u8 ^ k as u8).collect())
            .collect();
        let served = contents.clone();
        let script = Script::start(move |r| {
            let path = r.param("path").unwrap();
            let k: usize = path.trim_start_matches("in/f").parse().unwrap();
            let mut body = served[k].clone();
            if k == 13 {
                body[100] ^= 1;
            }
            bytes_reply(200, &body)
        });
        let dir = tempfile::tempdir().unwrap();
        let objects: Vec<ObjectInfo> = contents
            .iter()
            .enumerate()
            .map(|(k, c)| object(&format!("in/f{k}"), c))
            .collect();
        let dests: Vec<std::path::PathBuf> =
            (0..20).map(|k| dir.path().join(format!("f{k}"))).collect();
        let written = AtomicUsize::new(0);
        let e = clean(
            script
                .client()
                .download_all("song-1", &cid(1), &objects, &dests, 4, &|_| {
                    written.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .unwrap_err(),
        );
        assert!(
            matches!(&e, StoreError::Corrupt { path, detail } if path == "in/f13" && detail.contains("MD5")),
            "{step}: {e:?}"
        );
        assert_eq!(written.into_inner(), 20);
        assert!(!dests[13].exists());
        for k in [12, 19] {
            assert_eq!(
                std::fs::read(&dests[k]).unwrap(),
                contents[k],
                "{step}: f{k}"
            );
        }
    }
}

#[test]
fn a_download_all_whose_body_breaks_off_is_unavailable_and_leaves_no_file() {
    let script = Script::start(|_| Reply::Truncated {
        announced: 5,
        body: b"hel".to_vec(),
    });
    let dir = tempfile::tempdir().unwrap();
    let dests = [dir.path().join("f")];
    let e = clean(
        script
            .client()
            .with_retry(fast_retry(2))
            .download_all(
                "song-1",
                &cid(1),
                &[object("in/f", b"hello")],
                &dests,
                2,
                &|_| Ok(()),
            )
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("after 3 of 5 bytes"), "{e}");
    assert!(!dests[0].exists());
}

#[test]
fn upload_all_holds_every_stored_checksum_to_its_file() {
    // f3 is sent from memory and f9 from its file (more than 128 KiB): lakeFS answers both
    // with another content's checksum.
    let script = Script::start(|r| {
        let path = r.param("path").unwrap();
        let mut stats = stats_json(&path, &r.body);
        if path == "out/f3" || path == "out/f9" {
            stats["checksum"] = json!(md5_hex(b"something else"));
        }
        json_reply(201, stats)
    });
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(String, std::path::PathBuf)> = (0..12u8)
        .map(|k| {
            let source = dir.path().join(format!("f{k}"));
            std::fs::write(&source, vec![k; 25_000 * usize::from(k)]).unwrap();
            (format!("out/f{k}"), source)
        })
        .collect();
    let client = script.client();
    for (files, wrong) in [(&files[..8], "out/f3"), (&files[4..], "out/f9")] {
        let stored = AtomicUsize::new(0);
        let e = clean(
            client
                .upload_all("song-1", "ws-1", files, 3, &|_| {
                    stored.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap_err(),
        );
        assert!(
            matches!(&e, StoreError::Corrupt { path, .. } if path == wrong),
            "{e:?}"
        );
        // What lakeFS stored otherwise is not counted as stored.
        assert!(stored.into_inner() < files.len());
    }
    // Without the wrong ones, from memory and from files, the batch passes.
    let stored = AtomicUsize::new(0);
    client
        .upload_all("song-1", "ws-1", &files[4..9], 3, &|size| {
            stored.fetch_add(size as usize, Ordering::SeqCst);
        })
        .unwrap();
    assert_eq!(stored.into_inner(), 25_000 * (4 + 5 + 6 + 7 + 8));
}

#[test]
fn a_body_that_keeps_breaking_off_is_unavailable() {
    let script = Script::start(|_| Reply::Truncated {
        announced: 5,
        body: b"hel".to_vec(),
    });
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    let e = clean(
        script
            .client()
            .with_retry(fast_retry(2))
            .download("song-1", &cid(1), &object("in/f", b"hello"), &dest)
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("after 3 of 5 bytes"), "{e}");
    assert!(e.to_string().contains("download in/f of song-1@"), "{e}");
    assert!(!dest.exists());
}

#[test]
fn a_foreign_checksum_checks_only_the_size() {
    let script = Script::start(|_| bytes_reply(200, b"hello"));
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    let imported = ObjectInfo {
        path: "f".into(),
        size: 5,
        checksum: "\"etag-of-a-multipart-upload-3\"".into(),
    };
    script
        .client()
        .download("song-1", &cid(1), &imported, &dest)
        .unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), b"hello");
}

#[test]
fn parallel_downloads_share_one_client() {
    let content: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let served = content.clone();
    let script = Script::start(move |_| bytes_reply(200, &served));
    let client = script.client();
    let dir = tempfile::tempdir().unwrap();
    let info = object("big.bin", &content);
    std::thread::scope(|scope| {
        for t in 0..16 {
            let (client, info, dir) = (&client, &info, dir.path());
            scope.spawn(move || {
                for i in 0..3 {
                    let dest = dir.join(format!("{t}-{i}"));
                    client.download("song-1", &cid(1), info, &dest).unwrap();
                }
            });
        }
    });
    for t in 0..16 {
        assert_eq!(
            std::fs::read(dir.path().join(format!("{t}-2"))).unwrap(),
            content
        );
    }
    assert_eq!(script.requests().len(), 48);
}

// ---------------------------------------------------------------------------------------------
// Uploads.

fn write_file(dir: &Path, content: &[u8]) -> std::path::PathBuf {
    let path = dir.join("upload.bin");
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn an_upload_streams_the_file_and_returns_lakefs_stats() {
    let content: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let calls = AtomicUsize::new(0);
    let script = Script::start(move |r| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return error_reply(500, "internal server error");
        }
        json_reply(201, stats_json(&r.param("path").unwrap(), &r.body))
    });
    let dir = tempfile::tempdir().unwrap();
    let source = write_file(dir.path(), &content);
    let info = script
        .client()
        .upload("song-1", "ws-7f3c", "out/a+b.json", &source)
        .unwrap();
    assert_eq!(info, object("out/a+b.json", &content));

    let requests = script.requests();
    assert_eq!(requests.len(), 2, "a 500 on an upload is retried");
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(
            request.target,
            "/api/v1/repositories/song-1/branches/ws-7f3c/objects?path=out%2Fa%2Bb.json"
        );
        assert_eq!(
            request.header("content-type"),
            Some("application/octet-stream")
        );
        assert_eq!(request.header("content-length"), Some("300000"));
        assert_eq!(request.body, content, "each attempt sends the whole file");
    }
}

#[test]
fn an_upload_stored_differently_is_corrupt() {
    let script = Script::start(|r| {
        let mut stats = stats_json(&r.param("path").unwrap(), &r.body);
        stats["checksum"] = json!(md5_hex(b"something else"));
        json_reply(201, stats)
    });
    let dir = tempfile::tempdir().unwrap();
    let source = write_file(dir.path(), b"hello");
    let e = clean(
        script
            .client()
            .upload("song-1", "ws-1", "out/x", &source)
            .unwrap_err(),
    );
    assert!(
        matches!(&e, StoreError::Corrupt { path, .. } if path == "out/x"),
        "{e:?}"
    );
}

#[test]
fn an_upload_of_a_missing_file_is_an_io_error() {
    let script = Script::start(|_| panic!("nothing is sent"));
    let dir = tempfile::tempdir().unwrap();
    let e = clean(
        script
            .client()
            .upload("song-1", "ws-1", "out/x", &dir.path().join("missing"))
            .unwrap_err(),
    );
    assert!(matches!(e, StoreError::Io { .. }), "{e:?}");
    assert!(script.requests().is_empty());
}
