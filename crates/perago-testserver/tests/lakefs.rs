//! The lakeFS-compatible server over HTTP: every status and message of the
//! checklist of `docs/src/reference/lakefs.md` (§4.5), pagination, ref expressions, the commit id's
//! encoding recomputed here from the spec, the 3-way merge table, concurrent
//! merges and conditional uploads, ranges, auth, faults.

use perago_testserver::RawReply;
use perago_testserver::lakefs::{LakeFsOptions, LakeFsServer, Operation, Target};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

// ---- a small blocking client ----

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn message(&self) -> String {
        self.json()["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no message in {}", self.text()))
            .to_owned()
    }

    /// Asserts status and `{"message": …}` exactly.
    #[track_caller]
    fn error(&self, status: u16, message: &str) {
        assert_eq!(
            (self.status, self.message().as_str()),
            (status, message),
            "{}",
            self.text()
        );
    }
}

struct Lake {
    agent: ureq::Agent,
    base: String,
    auth: String,
}

/// Percent-encodes everything but unreserved characters.
fn enc(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Lake {
    fn new(server: &LakeFsServer) -> Lake {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(120)))
            .build();
        Lake {
            agent: ureq::Agent::new_with_config(config),
            base: server.base_url(),
            auth: server.authorization(),
        }
    }

    fn try_send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        auth: bool,
    ) -> Result<Resp, ureq::Error> {
        let url = if path.starts_with("/_") {
            format!("{}{path}", self.base)
        } else {
            format!("{}/api/v1{path}", self.base)
        };
        let mut builder = ureq::http::Request::builder().method(method).uri(url);
        if auth {
            builder = builder.header("authorization", &self.auth);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let result = match body {
            Some(body) => self.agent.run(builder.body(body).unwrap()),
            None => self.agent.run(builder.body(()).unwrap()),
        };
        let mut response = result?;
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        Ok(Resp {
            status: response.status().as_u16(),
            headers,
            body: response
                .body_mut()
                .with_config()
                .limit(u64::MAX)
                .read_to_vec()?,
        })
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Resp {
        self.try_send(method, path, headers, body, true)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn get(&self, path: &str) -> Resp {
        self.send("GET", path, &[], None)
    }

    fn head(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        self.send("HEAD", path, headers, None)
    }

    fn delete(&self, path: &str) -> Resp {
        self.send("DELETE", path, &[], None)
    }

    fn post_json(&self, path: &str, body: &Value) -> Resp {
        let body = body.to_string();
        self.send(
            "POST",
            path,
            &[("content-type", "application/json")],
            Some(body.as_bytes()),
        )
    }

    fn upload_with(
        &self,
        repo: &str,
        branch: &str,
        path: &str,
        headers: &[(&str, &str)],
        data: &[u8],
    ) -> Resp {
        self.send(
            "POST",
            &format!(
                "/repositories/{repo}/branches/{branch}/objects?path={}",
                enc(path)
            ),
            headers,
            Some(data),
        )
    }

    #[track_caller]
    fn upload(&self, repo: &str, branch: &str, path: &str, data: &[u8]) -> Value {
        let answer = self.upload_with(repo, branch, path, &[], data);
        assert_eq!(answer.status, 201, "{}", answer.text());
        answer.json()
    }

    fn get_object(
        &self,
        repo: &str,
        reference: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Resp {
        self.send(
            "GET",
            &format!(
                "/repositories/{repo}/refs/{}/objects?path={}",
                enc(reference),
                enc(path)
            ),
            headers,
            None,
        )
    }

    fn stat(&self, repo: &str, reference: &str, path: &str) -> Resp {
        self.get(&format!(
            "/repositories/{repo}/refs/{}/objects/stat?path={}",
            enc(reference),
            enc(path)
        ))
    }

    fn list(&self, repo: &str, reference: &str, query: &str) -> Resp {
        self.get(&format!(
            "/repositories/{repo}/refs/{}/objects/ls?{query}",
            enc(reference)
        ))
    }

    #[track_caller]
    fn commit(&self, repo: &str, branch: &str, body: &Value) -> Value {
        let answer = self.post_json(
            &format!("/repositories/{repo}/branches/{branch}/commits"),
            body,
        );
        assert_eq!(answer.status, 201, "{}", answer.text());
        answer.json()
    }

    fn merge(&self, repo: &str, source: &str, dest: &str, body: &Value) -> Resp {
        self.post_json(
            &format!("/repositories/{repo}/refs/{}/merge/{dest}", enc(source)),
            body,
        )
    }

    #[track_caller]
    fn create_branch(&self, repo: &str, name: &str, source: &str) -> String {
        let answer = self.post_json(
            &format!("/repositories/{repo}/branches"),
            &json!({"name": name, "source": source}),
        );
        assert_eq!(answer.status, 201, "{}", answer.text());
        answer.text()
    }

    fn get_commit(&self, repo: &str, reference: &str) -> Resp {
        self.get(&format!("/repositories/{repo}/commits/{}", enc(reference)))
    }
}

fn started() -> (LakeFsServer, Lake) {
    let server = LakeFsServer::start();
    server.create_repository("repo", "main").unwrap();
    let lake = Lake::new(&server);
    (server, lake)
}

fn md5_hex(data: &[u8]) -> String {
    use md5::Md5;
    hex(&Md5::digest(data))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- the commit id, recomputed from the spec's encoding (§4.3) ----

fn put_int(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&[0x02, 0x08]);
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.push(0x01);
    put_int(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn spec_commit_id(commit: &Value) -> String {
    let parents: Vec<&str> = commit["parents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let mut list = vec![0x03];
    put_int(&mut list, parents.len() as u64);
    for p in &parents {
        put_str(&mut list, p);
    }
    let parents_identity = Sha256::digest(&list);
    let mut out = Vec::new();
    put_str(&mut out, "commit:v1");
    put_str(&mut out, commit["committer"].as_str().unwrap());
    put_str(&mut out, commit["message"].as_str().unwrap());
    put_str(&mut out, commit["meta_range_id"].as_str().unwrap());
    put_int(&mut out, commit["creation_date"].as_i64().unwrap() as u64);
    let metadata: BTreeMap<&str, &str> = commit["metadata"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
        .collect();
    out.push(0x04);
    put_int(&mut out, metadata.len() as u64);
    for (k, v) in metadata {
        put_str(&mut out, k);
        put_str(&mut out, v);
    }
    out.push(0x05);
    out.push(0x00);
    put_int(&mut out, parents_identity.len() as u64);
    out.extend_from_slice(&parents_identity);
    hex(&Sha256::digest(&out))
}

// ---- health, routing, auth ----

#[test]
fn health_endpoints_and_unknown_routes() {
    let (server, lake) = started();
    let health = lake
        .try_send("GET", "/healthcheck", &[], None, false)
        .unwrap();
    assert_eq!((health.status, health.body.len()), (204, 0));
    let alive = lake.try_send("GET", "/_health", &[], None, false).unwrap();
    assert_eq!((alive.status, alive.text().as_str()), (200, "alive!"));
    // Credentials are ignored by the health check.
    let wrong = lake
        .try_send(
            "GET",
            "/healthcheck",
            &[("authorization", "Basic eDp5")],
            None,
            false,
        )
        .unwrap();
    assert_eq!(wrong.status, 204);
    lake.get("/no/such/route")
        .error(404, "invalid API endpoint");
    lake.try_send("GET", "/nope", &[], None, false)
        .unwrap()
        .error(404, "invalid API endpoint");
    lake.send("PUT", "/repositories/repo", &[], Some(b"x"))
        .error(404, "invalid API endpoint");
    let unknown = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/api/v1/nope")
        .unwrap();
    assert_eq!((unknown.operation, unknown.status), (None, 404));
}

#[test]
fn json_answers_are_go_encoded_with_nosniff_and_a_request_id() {
    let (_server, lake) = started();
    let answer = lake.get("/repositories/repo/branches/nope");
    assert_eq!(answer.status, 404);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert!(answer.header("x-request-id").is_some());
    assert_eq!(answer.text(), "{\"message\":\"branch not found\"}\n");
    // `<`, `>` and `&` are escaped as Go's encoder does.
    let answer = lake.post_json(
        "/repositories/repo/branches/main/commits",
        &json!({"message": "<a & b>"}),
    );
    assert_eq!(answer.status, 400);
    lake.upload("repo", "main", "x", b"1");
    let commit = lake.post_json(
        "/repositories/repo/branches/main/commits",
        &json!({"message": "<a & b>"}),
    );
    assert!(
        commit.text().contains("\\u003ca \\u0026 b\\u003e"),
        "{}",
        commit.text()
    );
    assert_eq!(commit.json()["message"], "<a & b>");
}

#[test]
fn missing_or_wrong_credentials_are_401_and_the_log_keeps_the_header() {
    let (server, lake) = started();
    let none = lake
        .try_send("GET", "/repositories/repo", &[], None, false)
        .unwrap();
    none.error(401, "error authenticating request");
    let encode = |s: &str| {
        // base64 by hand-rolled table, independent of the server's.
        const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let b = s.as_bytes();
        let mut out = String::new();
        for c in b.chunks(3) {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for i in 0..4 {
                out.push(if i <= c.len() {
                    char::from(T[((n >> (18 - 6 * i)) & 63) as usize])
                } else {
                    '='
                });
            }
        }
        out
    };
    let key = server.access_key_id().to_owned();
    let secret = server.secret_access_key().to_owned();
    assert_eq!(
        server.authorization(),
        format!("Basic {}", encode(&format!("{key}:{secret}")))
    );
    for bad in [
        format!("Basic {}", encode(&format!("{key}:wrong"))),
        format!("Basic {}", encode(&format!("AKIAOTHER:{secret}"))),
        format!("Basic {}", encode(&key)),
        "Basic !!!".to_owned(),
        format!("Bearer {secret}"),
    ] {
        lake.try_send(
            "GET",
            "/repositories/repo",
            &[("authorization", &bad)],
            None,
            false,
        )
        .unwrap()
        .error(401, "error authenticating request");
    }
    let ok = lake.get("/repositories/repo");
    assert_eq!(ok.status, 200);
    // The scheme is case-insensitive.
    let lower = server.authorization().replacen("Basic", "basic", 1);
    let ok = lake.try_send(
        "GET",
        "/repositories/repo",
        &[("authorization", &lower)],
        None,
        false,
    );
    assert_eq!(ok.unwrap().status, 200);

    let requests = server.requests();
    assert!(!requests[0].has_authorization());
    assert_eq!(requests[0].status, 401);
    assert_eq!(requests[0].operation, Some(Operation::GetRepository));
    let authorized = requests.iter().find(|r| r.status == 200).unwrap();
    assert_eq!(
        authorized.authorization.as_deref(),
        Some(server.authorization().as_str())
    );
    assert_eq!(
        authorized.header("Authorization"),
        authorized.authorization.as_deref()
    );
    // The secret travels only inside the Authorization header.
    for r in &requests {
        assert!(!r.path.contains(&secret) && !r.query.contains(&secret));
        for (name, value) in &r.headers {
            if name != "authorization" {
                assert!(!value.contains(&secret), "{name}");
            }
        }
    }
}

#[test]
fn validation_comes_before_authentication() {
    let (_server, lake) = started();
    let answer = lake
        .try_send(
            "GET",
            "/repositories/repo/refs/main/objects/ls?amount=1001",
            &[],
            None,
            false,
        )
        .unwrap();
    assert_eq!(answer.status, 400);
    let answer = lake
        .try_send(
            "GET",
            "/repositories/repo/refs/main/objects/ls?amount=10",
            &[],
            None,
            false,
        )
        .unwrap();
    assert_eq!(answer.status, 401);
}

// ---- repositories (§3.1) ----

#[test]
fn repositories_are_created_by_api_and_test_side_with_a_first_commit() {
    let server = LakeFsServer::start();
    let lake = Lake::new(&server);
    let created = lake.post_json(
        "/repositories",
        &json!({"name": "songs", "storage_namespace": "local://songs", "default_branch": "trunk"}),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let repo = created.json();
    assert_eq!(repo["id"], "songs");
    assert_eq!(repo["default_branch"], "trunk");
    assert_eq!(repo["storage_namespace"], "local://songs");
    assert_eq!(repo["read_only"], false);
    assert_eq!(repo["storage_id"], "");
    assert!(repo["creation_date"].as_i64().unwrap() > 1_600_000_000);
    assert_eq!(lake.get("/repositories/songs").json(), repo);
    lake.post_json(
        "/repositories",
        &json!({"name": "songs", "storage_namespace": "local://x"}),
    )
    .error(409, "repository already exists: not unique");
    // default_branch defaults to main.
    let other = lake.post_json(
        "/repositories",
        &json!({"name": "other", "storage_namespace": "s3://b/p"}),
    );
    assert_eq!(other.json()["default_branch"], "main");
    lake.get("/repositories/nope")
        .error(404, "repository not found");
    for bad in ["ab", "Abc", "a_b"] {
        lake.get(&format!("/repositories/{bad}")).error(
            400,
            "argument repository: repository id: invalid value: validation error",
        );
    }
    lake.post_json(
        "/repositories",
        &json!({"name": "x.y", "storage_namespace": "local://x"}),
    )
    .error(
        400,
        "argument repository: repository id: invalid value: validation error",
    );

    // The test side: the first commit's fields (§4.1).
    let first = server.create_repository("tested", "main").unwrap();
    assert_eq!(server.head("tested", "main"), Some(first.clone()));
    let commit = lake.get_commit("tested", &first).json();
    assert_eq!(commit["message"], "Repository created");
    assert_eq!(commit["committer"], "");
    assert_eq!(commit["meta_range_id"], "");
    assert_eq!(commit["parents"], json!([]));
    assert_eq!(commit["metadata"], json!({}));
    assert_eq!(commit["generation"], 1);
    assert_eq!(commit["version"], 1);
    assert_eq!(spec_commit_id(&commit), first);
    assert_eq!(
        server
            .create_repository("tested", "main")
            .unwrap_err()
            .status,
        409
    );
    assert_eq!(server.commits_count("tested"), 1);
    let main = lake.get("/repositories/tested/branches/main").json();
    assert_eq!(main, json!({"commit_id": first, "id": "main"}));
}

#[test]
fn json_bodies_are_validated() {
    let (_server, lake) = started();
    let path = "/repositories/repo/branches";
    for (content_type, body) in [
        ("text/plain", r#"{"name":"a","source":"main"}"#),
        ("application/json", r#"["a"]"#),
        ("application/json", r#"{"name":"a"}"#),
        ("application/json", r#"{"name":1,"source":"main"}"#),
        ("application/json", "{"),
        ("application/json", ""),
    ] {
        let answer = lake.send(
            "POST",
            path,
            &[("content-type", content_type)],
            Some(body.as_bytes()),
        );
        assert_eq!(answer.status, 400, "{body}: {}", answer.text());
        assert!(
            answer.message().starts_with("request body has an error"),
            "{}",
            answer.text()
        );
    }
    // Unknown fields are allowed; a charset parameter too.
    let answer = lake.send(
        "POST",
        path,
        &[("content-type", "application/json; charset=utf-8")],
        Some(br#"{"name":"a","source":"main","extra":[1]}"#),
    );
    assert_eq!(answer.status, 201);
}

// ---- branches (§3.3–§3.6) ----

#[test]
fn branches_are_created_read_listed_and_deleted() {
    let (server, lake) = started();
    let head = server.head("repo", "main").unwrap();
    let answer = lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "ws-1", "source": "main"}),
    );
    assert_eq!(answer.status, 201);
    assert_eq!(
        answer.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(answer.text(), head);
    lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "ws-1", "source": "main"}),
    )
    .error(409, "branch already exists: not unique");
    // The source is checked before the name.
    lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "ws-1", "source": "nope"}),
    )
    .error(404, "source reference 'nope': not found");
    let bad = lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "a.b", "source": "main"}),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.message().ends_with(
        "branch id must consist of letters, digits, underscores and dashes, and cannot start with a dash"
    ));
    for name in ["-a", "a/b"] {
        let answer = lake.post_json(
            "/repositories/repo/branches",
            &json!({"name": name, "source": "main"}),
        );
        assert_eq!(answer.status, 400, "{name}");
    }
    // Quirks: empty name or source → 500; a `$` source → 500.
    for body in [
        json!({"name": "", "source": "main"}),
        json!({"name": "x", "source": ""}),
    ] {
        assert_eq!(
            lake.post_json("/repositories/repo/branches", &body).status,
            500
        );
    }
    lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "x", "source": "main$"}),
    )
    .error(500, "can't create a branch without commit");
    // A name equal to a commit id conflicts.
    lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": head, "source": "main"}),
    )
    .error(409, &format!("commit ID {head}: conflict found"));

    assert_eq!(
        lake.get("/repositories/repo/branches/ws-1").json(),
        json!({"commit_id": head, "id": "ws-1"})
    );
    lake.get("/repositories/repo/branches/nope")
        .error(404, "branch not found");
    assert_eq!(lake.get("/repositories/repo/branches/a.b").status, 400);
    assert_eq!(
        lake.get(&format!("/repositories/repo/branches/{}", enc("main@")))
            .status,
        400
    );

    // Creating a branch does not carry staged writes, and never moves another.
    lake.upload("repo", "main", "staged", b"s");
    lake.create_branch("repo", "ws-2", "main");
    assert_eq!(lake.stat("repo", "ws-2", "staged").status, 404);

    assert_eq!(lake.delete("/repositories/repo/branches/ws-1").status, 204);
    lake.get("/repositories/repo/branches/ws-1")
        .error(404, "branch not found");
    lake.delete("/repositories/repo/branches/ws-1")
        .error(404, "branch not found");
    lake.delete("/repositories/repo/branches/main")
        .error(403, "cannot delete repository default branch");
}

#[test]
fn branch_listing_pages_and_hides_hidden_branches() {
    let (_server, lake) = started();
    for i in 0..5 {
        lake.create_branch("repo", &format!("b{i}"), "main");
    }
    let hidden = lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "tx-1", "source": "main", "hidden": true}),
    );
    assert_eq!(hidden.status, 201);
    let ids = |answer: &Resp| -> Vec<String> {
        answer.json()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = lake.get("/repositories/repo/branches");
    assert_eq!(ids(&all), ["b0", "b1", "b2", "b3", "b4", "main"]);
    assert_eq!(
        all.json()["pagination"],
        json!({"has_more": false, "max_per_page": 1000, "next_offset": "", "results": 6})
    );
    let page = lake.get("/repositories/repo/branches?amount=2&after=b1");
    assert_eq!(ids(&page), ["b2", "b3"]);
    assert_eq!(page.json()["pagination"]["has_more"], true);
    assert_eq!(page.json()["pagination"]["next_offset"], "b3");
    assert_eq!(
        ids(&lake.get("/repositories/repo/branches?prefix=m")),
        ["main"]
    );
    let shown = lake.get("/repositories/repo/branches?show_hidden=true");
    assert!(ids(&shown).contains(&"tx-1".to_owned()));
    // Hidden branches read normally.
    assert_eq!(lake.get("/repositories/repo/branches/tx-1").status, 200);
}

#[test]
fn concurrent_creates_of_one_branch_let_exactly_one_win() {
    let (server, _lake) = started();
    let barrier = Arc::new(Barrier::new(8));
    let statuses: Vec<u16> = (0..8)
        .map(|_| {
            let lake = Lake::new(&server);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                lake.post_json(
                    "/repositories/repo/branches",
                    &json!({"name": "race", "source": "main"}),
                )
                .status
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        7,
        "{statuses:?}"
    );
}

// ---- objects (§3.7–§3.12) ----

#[test]
fn raw_upload_stages_with_md5_metadata_and_content_type() {
    let (server, lake) = started();
    let answer = lake.upload_with(
        "repo",
        "main",
        "out/a+b.json",
        &[
            ("content-type", "application/json; charset=utf-8"),
            ("x-lakefs-meta-Attempt", "3"),
            ("X-Lakefs-Meta-Owner", "ada"),
        ],
        b"{\"k\":1}",
    );
    assert_eq!(answer.status, 201, "{}", answer.text());
    let stats = answer.json();
    assert_eq!(stats["path"], "out/a+b.json");
    assert_eq!(stats["path_type"], "object");
    assert_eq!(stats["checksum"], md5_hex(b"{\"k\":1}"));
    assert_eq!(stats["size_bytes"], 7);
    assert_eq!(stats["content_type"], "application/json; charset=utf-8");
    assert_eq!(stats["metadata"], json!({"attempt": "3", "owner": "ada"}));
    assert!(
        stats["physical_address"]
            .as_str()
            .unwrap()
            .starts_with("local://repo/data/")
    );
    assert!(stats["mtime"].as_i64().unwrap() > 1_600_000_000);
    // Staged: a bare branch reads it, its committed head and the head's id do not.
    assert_eq!(
        &server.object("repo", "main", "out/a+b.json").unwrap()[..],
        b"{\"k\":1}"
    );
    assert_eq!(lake.stat("repo", "main", "out/a+b.json").status, 200);
    assert_eq!(lake.stat("repo", "main$", "out/a+b.json").status, 200);
    lake.stat("repo", "main@", "out/a+b.json")
        .error(404, "not found");
    let head = server.head("repo", "main").unwrap();
    lake.stat("repo", &head, "out/a+b.json")
        .error(404, "not found");
    // Without a Content-Type: application/octet-stream; metadata {}.
    let plain = lake.upload("repo", "main", "plain", b"x");
    assert_eq!(plain["content_type"], "application/octet-stream");
    assert_eq!(plain["metadata"], json!({}));
    // Empty objects have the empty MD5.
    assert_eq!(
        lake.upload("repo", "main", "empty", b"")["checksum"],
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    // Errors.
    lake.upload_with("repo", "nope", "x", &[], b"x")
        .error(404, "branch 'nope' not found");
    lake.upload_with("repo", &head, "x", &[], b"x")
        .error(404, &format!("branch '{head}' not found"));
    lake.upload_with("nope", "main", "x", &[], b"x")
        .error(404, "repository not found");
    assert_eq!(lake.upload_with("repo", "a.b", "x", &[], b"x").status, 400);
    assert_eq!(
        lake.upload_with("repo", "main", &"p".repeat(1025), &[], b"x")
            .status,
        400
    );
    lake.upload_with("repo", "main", "", &[], b"x")
        .error(400, "missing path: required value: validation error");
    let no_path = lake.send(
        "POST",
        "/repositories/repo/branches/main/objects",
        &[],
        Some(b"x"),
    );
    assert_eq!(no_path.status, 400);
}

#[test]
fn multipart_upload_takes_the_content_part() {
    let (server, lake) = started();
    let body = b"--b0undary\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\nignored\r\n--b0undary\r\nContent-Disposition: form-data; name=\"content\"; filename=\"a.csv\"\r\nContent-Type: text/csv\r\n\r\na,b\r\n1,2\r\n--b0undary--\r\n";
    let answer = lake.upload_with(
        "repo",
        "main",
        "t.csv",
        &[("content-type", "multipart/form-data; boundary=b0undary")],
        body,
    );
    assert_eq!(answer.status, 201, "{}", answer.text());
    assert_eq!(answer.json()["content_type"], "text/csv");
    assert_eq!(answer.json()["checksum"], md5_hex(b"a,b\r\n1,2"));
    assert_eq!(
        &server.object("repo", "main", "t.csv").unwrap()[..],
        b"a,b\r\n1,2"
    );
    let none = b"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--b--\r\n";
    lake.upload_with(
        "repo",
        "main",
        "u",
        &[("content-type", "multipart/form-data; boundary=b")],
        none,
    )
    .error(
        500,
        "multipart upload missing key 'content': http: no such file",
    );
    assert_eq!(
        lake.upload_with(
            "repo",
            "main",
            "u",
            &[("content-type", "multipart/form-data")],
            none
        )
        .status,
        500
    );
}

#[test]
fn upload_conditions() {
    let (server, lake) = started();
    let star = [("if-none-match", "*")];
    assert_eq!(
        lake.upload_with("repo", "main", "p", &star, b"1").status,
        201
    );
    // Staged counts as existing…
    lake.upload_with("repo", "main", "p", &star, b"2")
        .error(412, "path already exists");
    server.commit("repo", "main", "c").unwrap();
    // …and so does committed.
    lake.upload_with("repo", "main", "p", &star, b"2")
        .error(412, "path already exists");
    // A staged delete counts as absent.
    assert_eq!(
        lake.delete("/repositories/repo/branches/main/objects?path=p")
            .status,
        204
    );
    assert_eq!(
        lake.upload_with("repo", "main", "p", &star, b"3").status,
        201
    );
    assert_eq!(&server.object("repo", "main", "p").unwrap()[..], b"3");
    // Anything but `*`, and If-Match, is not implemented.
    lake.upload_with("repo", "main", "q", &[("if-none-match", "\"abc\"")], b"1")
        .error(501, "Not Implemented");
    lake.upload_with("repo", "main", "q", &[("if-match", "\"abc\"")], b"1")
        .error(501, "Not Implemented");
    lake.upload_with(
        "repo",
        "main",
        "q",
        &[("if-match", "*"), ("if-none-match", "*")],
        b"1",
    )
    .error(501, "Not Implemented");
    assert!(server.object("repo", "main", "q").is_none());
}

#[test]
fn concurrent_if_none_match_uploads_let_exactly_one_win() {
    let (server, _lake) = started();
    for round in 0..5 {
        let path = format!("race/{round}");
        let barrier = Arc::new(Barrier::new(6));
        let statuses: Vec<u16> = (0..6u8)
            .map(|i| {
                let lake = Lake::new(&server);
                let barrier = Arc::clone(&barrier);
                let path = path.clone();
                thread::spawn(move || {
                    barrier.wait();
                    lake.upload_with("repo", "main", &path, &[("if-none-match", "*")], &[i; 64])
                        .status
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        assert_eq!(
            statuses.iter().filter(|s| **s == 201).count(),
            1,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 412).count(),
            5,
            "{statuses:?}"
        );
    }
}

#[test]
fn stat_shows_metadata_always_and_misses_directories() {
    let (_server, lake) = started();
    lake.upload_with("repo", "main", "d/f", &[("x-lakefs-meta-k", "v")], b"12");
    lake.upload("repo", "main", "d/g", b"3");
    let f = lake.stat("repo", "main", "d/f").json();
    assert_eq!(f["metadata"], json!({"k": "v"}));
    assert_eq!(f["size_bytes"], 2);
    assert_eq!(
        lake.stat("repo", "main", "d/g").json()["metadata"],
        json!({})
    );
    let without =
        lake.get("/repositories/repo/refs/main/objects/stat?path=d%2Ff&user_metadata=false");
    assert_eq!(without.json()["metadata"], json!({}));
    lake.stat("repo", "main", "d").error(404, "not found");
    lake.stat("repo", "main", "d/").error(404, "not found");
    lake.stat("repo", "nope", "d/f").error(404, "not found");
    assert_eq!(
        lake.get("/repositories/repo/refs/main/objects/stat").status,
        400
    );
    assert_eq!(
        lake.get("/repositories/repo/refs/main/objects/stat?path=d%2Ff&presign=true")
            .status,
        400
    );
}

#[test]
fn get_object_headers_etag_and_304() {
    let (_server, lake) = started();
    lake.upload_with(
        "repo",
        "main",
        "a.txt",
        &[("content-type", "text/plain")],
        b"hello",
    );
    lake.upload_with(
        "repo",
        "main",
        "b.bin",
        &[("content-type", "application/x-tar")],
        b"bin",
    );
    let answer = lake.get_object("repo", "main", "a.txt", &[]);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, b"hello");
    let etag = format!("\"{}\"", md5_hex(b"hello"));
    assert_eq!(answer.header("etag"), Some(etag.as_str()));
    assert_eq!(answer.header("content-length"), Some("5"));
    assert_eq!(answer.header("content-type"), Some("text/plain"));
    assert_eq!(answer.header("content-disposition"), Some("inline"));
    assert_eq!(
        answer.header("cache-control"),
        Some("no-store, must-revalidate")
    );
    assert_eq!(answer.header("expires"), Some("0"));
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(answer.header("x-frame-options"), Some("SAMEORIGIN"));
    assert_eq!(
        answer.header("content-security-policy"),
        Some("default-src 'none'")
    );
    let modified = answer.header("last-modified").unwrap();
    assert!(
        modified.ends_with(" GMT") && modified.len() == 29,
        "{modified}"
    );
    let other = lake.get_object("repo", "main", "b.bin", &[]);
    assert_eq!(other.header("content-disposition"), Some("attachment"));

    let not_modified = lake.get_object("repo", "main", "a.txt", &[("if-none-match", &etag)]);
    assert_eq!((not_modified.status, not_modified.body.len()), (304, 0));
    for ignored in ["*", "\"other\"", etag.trim_matches('"')] {
        let answer = lake.get_object("repo", "main", "a.txt", &[("if-none-match", ignored)]);
        assert_eq!(answer.status, 200, "{ignored}");
    }
    lake.get_object("repo", "main", "nope", &[])
        .error(404, "not found");
    lake.get_object("repo", "nope", "a.txt", &[])
        .error(404, "not found");

    let head = lake.head("/repositories/repo/refs/main/objects?path=a.txt", &[]);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("content-length"), Some("5"));
    assert_eq!(head.header("accept-ranges"), Some("bytes"));
    assert_eq!(head.header("etag"), Some(etag.as_str()));
    let missing = lake.head("/repositories/repo/refs/main/objects?path=nope", &[]);
    assert_eq!((missing.status, missing.body.len()), (404, 0));
}

#[test]
fn single_ranges_206_and_416() {
    let (_server, lake) = started();
    lake.upload("repo", "main", "five", b"01234");
    lake.upload("repo", "main", "empty", b"");
    let range = |path: &str, spec: &str| lake.get_object("repo", "main", path, &[("range", spec)]);
    for (spec, body, content_range) in [
        ("bytes=1-3", &b"123"[..], "bytes 1-3/5"),
        ("bytes=1-30", b"1234", "bytes 1-4/5"),
        ("bytes=2-", b"234", "bytes 2-4/5"),
        ("bytes=-2", b"34", "bytes 3-4/5"),
        ("bytes=-20", b"01234", "bytes 0-4/5"),
        ("bytes=4-4", b"4", "bytes 4-4/5"),
    ] {
        let answer = range("five", spec);
        assert_eq!(answer.status, 206, "{spec}");
        assert_eq!(answer.body, body, "{spec}");
        assert_eq!(
            answer.header("content-range"),
            Some(content_range),
            "{spec}"
        );
        let length = body.len().to_string();
        assert_eq!(
            answer.header("content-length"),
            Some(length.as_str()),
            "{spec}"
        );
    }
    for spec in ["bytes=0-1,2-3", "bytes=3-1", "bytes=-"] {
        let answer = range("five", spec);
        answer.error(416, "Requested Range Not Satisfiable");
        assert_eq!(answer.header("content-range"), None, "{spec}");
    }
    for (path, spec, size) in [
        ("five", "bytes=5-", 5),
        ("five", "bytes=-0", 5),
        ("empty", "bytes=0-", 0),
    ] {
        let answer = range(path, spec);
        answer.error(416, "Requested Range Not Satisfiable");
        let expected = format!("bytes */{size}");
        assert_eq!(
            answer.header("content-range"),
            Some(expected.as_str()),
            "{spec}"
        );
    }
    // The spec's pattern is checked by the validator: 400.
    let invalid = range("five", "items=0-1");
    assert_eq!(invalid.status, 400);
    assert!(invalid.message().contains("Range"));
    // HEAD: 206 with the range's length, 416 bare.
    let head = lake.head(
        "/repositories/repo/refs/main/objects?path=five",
        &[("range", "bytes=1-2")],
    );
    assert_eq!(head.status, 206);
    assert_eq!(head.header("content-length"), Some("2"));
    assert_eq!(head.header("content-range"), Some("bytes 1-2/5"));
    let head = lake.head(
        "/repositories/repo/refs/main/objects?path=five",
        &[("range", "bytes=3-1")],
    );
    assert_eq!((head.status, head.body.len()), (416, 0));
}

#[test]
fn deletes_stage_tombstones_and_never_fail_on_missing_paths() {
    let (server, lake) = started();
    lake.upload("repo", "main", "keep", b"k");
    lake.upload("repo", "main", "gone", b"g");
    server.commit("repo", "main", "two").unwrap();
    let delete = |path: &str| {
        lake.delete(&format!(
            "/repositories/repo/branches/main/objects?path={}",
            enc(path)
        ))
    };
    assert_eq!(delete("gone").status, 204);
    assert_eq!(delete("never").status, 204);
    lake.stat("repo", "main", "gone").error(404, "not found");
    assert_eq!(lake.stat("repo", "main@", "gone").status, 200);
    // Deleting a staged-only path drops it.
    lake.upload("repo", "main", "tmp", b"t");
    assert_eq!(delete("tmp").status, 204);
    lake.stat("repo", "main", "tmp").error(404, "not found");
    let commit = lake.commit("repo", "main", &json!({"message": "delete"}));
    assert_eq!(
        lake.stat("repo", commit["id"].as_str().unwrap(), "gone")
            .status,
        404
    );
    assert_eq!(lake.stat("repo", "main", "keep").status, 200);
    lake.delete("/repositories/repo/branches/nope/objects?path=x")
        .error(404, "branch not found");
    assert_eq!(
        lake.delete("/repositories/repo/branches/main/objects?path=")
            .status,
        400
    );
}

#[test]
fn bulk_delete() {
    let (server, lake) = started();
    for p in ["a", "b", "c"] {
        lake.upload("repo", "main", p, p.as_bytes());
    }
    let bulk = |branch: &str, paths: Value| {
        lake.post_json(
            &format!("/repositories/repo/branches/{branch}/objects/delete"),
            &json!({ "paths": paths }),
        )
    };
    let answer = bulk("main", json!(["a", "b", "missing"]));
    assert_eq!((answer.status, answer.json()), (200, json!({"errors": []})));
    assert!(server.object("repo", "main", "a").is_none());
    assert!(server.object("repo", "main", "c").is_some());
    // Missing branches and repositories are silently fine.
    assert_eq!(bulk("nope", json!(["c"])).json(), json!({"errors": []}));
    let other_repo = lake.post_json(
        "/repositories/nope/branches/main/objects/delete",
        &json!({"paths": ["c"]}),
    );
    assert_eq!(
        (other_repo.status, other_repo.json()),
        (200, json!({"errors": []}))
    );
    // An empty path makes the batch a no-op.
    assert_eq!(bulk("main", json!(["c", ""])).json(), json!({"errors": []}));
    assert!(server.object("repo", "main", "c").is_some());
    // A too-long path fails every path with 500.
    let long = "l".repeat(1025);
    let errors = bulk("main", json!(["c", long])).json()["errors"].clone();
    assert_eq!(errors.as_array().unwrap().len(), 2);
    assert_eq!(errors[0]["status_code"], 500);
    assert_eq!(errors[0]["path"], "c");
    assert!(server.object("repo", "main", "c").is_some());
    let many: Vec<String> = (0..1001).map(|i| i.to_string()).collect();
    bulk("main", json!(many)).error(400, "request size exceeded, max paths is set to 1000");
    assert_eq!(bulk("main", json!("c")).status, 400);
}

// ---- listing and pagination (§1.5, §3.7) ----

fn paths(answer: &Resp) -> Vec<String> {
    answer.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn listing_pages_over_more_than_a_thousand_objects() {
    let (server, lake) = started();
    for i in 0..1500 {
        server
            .put_object(
                "repo",
                "main",
                &format!("data/{i:05}"),
                format!("{i}").into_bytes(),
            )
            .unwrap();
    }
    for p in ["a", "z"] {
        server.put_object("repo", "main", p, b"x".to_vec()).unwrap();
    }
    let commit = server.commit("repo", "main", "many").unwrap();
    for reference in ["main", commit.id.as_str()] {
        // Default 100.
        let first = lake.list("repo", reference, "prefix=data%2F");
        assert_eq!(first.status, 200);
        let pagination = first.json()["pagination"].clone();
        assert_eq!(
            pagination,
            json!({"has_more": true, "max_per_page": 1000, "next_offset": "data/00099", "results": 100})
        );
        // Up to 1000, then the rest.
        let mut seen = Vec::new();
        let mut after = String::new();
        let mut pages = 0;
        loop {
            let answer = lake.list(
                "repo",
                reference,
                &format!("prefix=data%2F&amount=1000&after={}", enc(&after)),
            );
            let page = answer.json()["pagination"].clone();
            seen.extend(paths(&answer));
            pages += 1;
            if page["has_more"] == false {
                assert_eq!(page["next_offset"], "");
                break;
            }
            after = page["next_offset"].as_str().unwrap().to_owned();
            assert_eq!(&after, seen.last().unwrap());
        }
        assert_eq!(pages, 2);
        let expected: Vec<String> = (0..1500).map(|i| format!("data/{i:05}")).collect();
        assert_eq!(seen, expected);
        // amount 0 and -1 mean 100; above 1000 is a 400.
        for amount in ["0", "-1"] {
            let answer = lake.list("repo", reference, &format!("amount={amount}"));
            assert_eq!(answer.json()["pagination"]["results"], 100);
        }
        let too_many = lake.list("repo", reference, "amount=1001");
        assert_eq!(too_many.status, 400);
        assert_eq!(lake.list("repo", reference, "amount=-2").status, 400);
        // A delimiter groups; `after` a common prefix skips the whole group.
        let grouped = lake.list("repo", reference, "delimiter=%2F");
        assert_eq!(paths(&grouped), ["a", "data/", "z"]);
        let prefix_row = &grouped.json()["results"][1];
        assert_eq!(
            prefix_row,
            &json!({"checksum": "", "mtime": 0, "path": "data/", "path_type": "common_prefix", "physical_address": ""})
        );
        let after_group = lake.list("repo", reference, "delimiter=%2F&after=data%2F");
        assert_eq!(paths(&after_group), ["z"]);
        let page = lake.list("repo", reference, "delimiter=%2F&amount=2");
        assert_eq!(page.json()["pagination"]["next_offset"], "data/");
    }
    // An empty page is [], not null.
    let empty = lake.list("repo", "main", "prefix=nothing");
    assert_eq!(empty.json()["results"], json!([]));
    assert_eq!(empty.json()["pagination"]["has_more"], false);
}

#[test]
fn listing_is_byte_ordered_sees_staging_and_filters_metadata() {
    let (server, lake) = started();
    for p in ["a/b", "a-b", "a0", "é", "z", "A"] {
        server
            .put_object("repo", "main", p, p.as_bytes().to_vec())
            .unwrap();
    }
    server.commit("repo", "main", "c").unwrap();
    assert_eq!(
        paths(&lake.list("repo", "main", "")),
        ["A", "a-b", "a/b", "a0", "z", "é"]
    );
    // Staged writes show on the branch, staged deletes hide; the commit is unchanged.
    lake.upload_with("repo", "main", "m", &[("x-lakefs-meta-k", "v")], b"m");
    lake.delete("/repositories/repo/branches/main/objects?path=z");
    assert_eq!(
        paths(&lake.list("repo", "main", "")),
        ["A", "a-b", "a/b", "a0", "m", "é"]
    );
    assert_eq!(
        paths(&lake.list("repo", "main@", "")),
        ["A", "a-b", "a/b", "a0", "z", "é"]
    );
    // metadata appears only when non-empty and asked for.
    let listed = lake.list("repo", "main", "prefix=m").json();
    assert_eq!(listed["results"][0]["metadata"], json!({"k": "v"}));
    let listed = lake.list("repo", "main", "prefix=A").json();
    assert!(listed["results"][0].get("metadata").is_none());
    let listed = lake
        .list("repo", "main", "prefix=m&user_metadata=false")
        .json();
    assert!(listed["results"][0].get("metadata").is_none());
    // Bad refs.
    lake.list("repo", "nope", "").error(404, "not found");
    assert_eq!(lake.list("repo", "main~x", "").status, 400);
}

// ---- commits (§3.13, §4.3) ----

#[test]
fn commit_ids_follow_the_spec_encoding() {
    let (server, lake) = started();
    let first = server.head("repo", "main").unwrap();
    lake.upload("repo", "main", "a", b"1");
    let commit = lake.commit(
        "repo",
        "main",
        &json!({"message": "task output", "metadata": {"b": "2", "a": "1"}}),
    );
    assert_eq!(commit["parents"], json!([first]));
    assert_eq!(commit["committer"], "admin");
    assert_eq!(commit["generation"], 2);
    assert_eq!(commit["version"], 1);
    assert_eq!(commit["metadata"], json!({"a": "1", "b": "2"}));
    let id = commit["id"].as_str().unwrap();
    assert_eq!(id.len(), 64);
    assert!(commit["meta_range_id"].as_str().unwrap().len() == 64);
    assert_eq!(spec_commit_id(&commit), id);
    assert_eq!(lake.get_commit("repo", id).json(), commit);
    // With a date.
    lake.upload("repo", "main", "b", b"2");
    let dated = lake.commit("repo", "main", &json!({"message": "", "date": 1_000_000}));
    assert_eq!(dated["creation_date"], 1_000_000);
    assert_eq!(dated["generation"], 3);
    assert_eq!(spec_commit_id(&dated), dated["id"].as_str().unwrap());
    assert_eq!(server.head("repo", "main").as_deref(), dated["id"].as_str());
}

#[test]
fn commits_need_an_identity_change() {
    let (server, lake) = started();
    let no_changes = |branch: &str| {
        lake.post_json(
            &format!("/repositories/repo/branches/{branch}/commits"),
            &json!({"message": "m"}),
        )
    };
    no_changes("main").error(400, "commit: no changes");
    lake.upload("repo", "main", "a", b"same");
    let first = lake.commit("repo", "main", &json!({"message": "one"}));
    // Re-staging identical content is no change, and the old value stays.
    lake.upload("repo", "main", "a", b"same");
    no_changes("main").error(400, "commit: no changes");
    // Deleting a path that exists nowhere is no change either.
    lake.delete("/repositories/repo/branches/main/objects?path=never");
    no_changes("main").error(400, "commit: no changes");
    // Other metadata or content type is a change (identity, §4.2).
    lake.upload_with("repo", "main", "a", &[("x-lakefs-meta-x", "1")], b"same");
    let second = lake.commit("repo", "main", &json!({"message": "two"}));
    assert_ne!(second["meta_range_id"], first["meta_range_id"]);
    lake.upload_with("repo", "main", "a", &[("x-lakefs-meta-x", "1")], b"same");
    no_changes("main").error(400, "commit: no changes");
    lake.upload_with(
        "repo",
        "main",
        "a",
        &[("content-type", "text/plain"), ("x-lakefs-meta-x", "1")],
        b"same",
    );
    lake.commit("repo", "main", &json!({"message": "three"}));
    // allow_empty gives a commit with the parent's content.
    let empty = lake.commit(
        "repo",
        "main",
        &json!({"message": "e", "allow_empty": true}),
    );
    let parent = lake
        .get_commit("repo", empty["parents"][0].as_str().unwrap())
        .json();
    assert_eq!(empty["meta_range_id"], parent["meta_range_id"]);
    lake.post_json(
        "/repositories/repo/branches/nope/commits",
        &json!({"message": "m"}),
    )
    .error(404, "branch not found");
    let missing = lake.post_json("/repositories/repo/branches/main/commits", &json!({}));
    assert_eq!(missing.status, 400);
    assert_eq!(server.commits_count("repo"), 5);
}

#[test]
fn restaged_identical_content_keeps_the_committed_value() {
    let (_server, lake) = started();
    lake.upload("repo", "main", "a", b"same");
    lake.upload("repo", "main", "b", b"other");
    lake.commit("repo", "main", &json!({"message": "one"}));
    let before = lake.stat("repo", "main", "a").json();
    lake.upload("repo", "main", "a", b"same");
    lake.upload("repo", "main", "b", b"changed");
    lake.commit("repo", "main", &json!({"message": "two"}));
    let after = lake.stat("repo", "main", "a").json();
    assert_eq!(after["physical_address"], before["physical_address"]);
    assert_eq!(after["mtime"], before["mtime"]);
}

#[test]
fn get_commit_resolves_any_ref() {
    let (server, lake) = started();
    let root = server.head("repo", "main").unwrap();
    lake.upload("repo", "main", "a", b"1");
    let c1 = lake.commit("repo", "main", &json!({"message": "1"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    lake.upload("repo", "main", "a", b"2");
    let c2 = lake.commit("repo", "main", &json!({"message": "2"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = |reference: &str| {
        lake.get_commit("repo", reference).json()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(id("main"), c2);
    assert_eq!(id("main@"), c2);
    assert_eq!(id(&c2), c2);
    assert_eq!(id(&c2[..12]), c2);
    assert_eq!(id("main~1"), c1);
    assert_eq!(id("main~"), c1);
    assert_eq!(id("main~2"), root);
    assert_eq!(id("main^"), c1);
    assert_eq!(id("main^1^1"), root);
    assert_eq!(id("main^0"), c2);
    assert_eq!(id(&format!("{c2}~1")), c1);
    lake.get_commit("repo", "main~3")
        .error(404, "commit not found");
    lake.get_commit("repo", "nope")
        .error(404, "commit not found");
    lake.get_commit("nope", "main")
        .error(404, "repository not found");
    // Everything but not-found is 500 here.
    assert_eq!(lake.get_commit("repo", "main^2").status, 500);
    assert_eq!(lake.get_commit("repo", "main$").status, 500);
    assert_eq!(lake.get_commit("repo", "main~x").status, 500);
    assert_eq!(lake.get_commit("Bad_Repo", "main").status, 500);
    // `@` belongs to branches only; modifiers chain elsewhere.
    assert_eq!(lake.stat("repo", &format!("{c2}@"), "a").status, 400);
    assert_eq!(lake.stat("repo", "main@~1", "a").status, 400);
    lake.stat("repo", "main~3", "a").error(404, "not found");
    assert_eq!(lake.stat("repo", "main~1", "a").status, 200);
    assert_eq!(
        &server.object("repo", "main~1", "a").unwrap()[..],
        b"1",
        "main~1 reads the parent's content"
    );
}

#[test]
fn hex_prefixes_must_be_unique_and_tags_resolve() {
    let (server, lake) = started();
    // Enough commits that some share a first hex digit.
    for i in 0..20 {
        lake.upload("repo", "main", "a", format!("{i}").as_bytes());
        lake.commit("repo", "main", &json!({"message": format!("{i}")}));
    }
    let all: Vec<String> = (0..=20)
        .map(|i| server.get_commit("repo", &format!("main~{i}")).unwrap().id)
        .collect();
    let shared_digit = (0..16)
        .map(|d| format!("{d:x}"))
        .find(|d| all.iter().filter(|id| id.starts_with(d.as_str())).count() > 1)
        .expect("20 commits share some first digit");
    lake.get_commit("repo", &shared_digit)
        .error(404, "commit not found");
    // Tags.
    let tag = lake.post_json(
        "/repositories/repo/tags",
        &json!({"id": "v1", "ref": "main~2"}),
    );
    assert_eq!(tag.status, 201, "{}", tag.text());
    assert_eq!(tag.json(), json!({"commit_id": all[2], "id": "v1"}));
    assert_eq!(lake.get_commit("repo", "v1").json()["id"], all[2].as_str());
    assert_eq!(
        lake.get_commit("repo", "v1~1").json()["id"],
        all[3].as_str()
    );
    lake.post_json(
        "/repositories/repo/tags",
        &json!({"id": "v1", "ref": "main"}),
    )
    .error(409, "tag already exists: not unique");
    lake.post_json(
        "/repositories/repo/branches",
        &json!({"name": "v1", "source": "main"}),
    )
    .error(409, "tag ID v1: conflict found");
    assert_eq!(
        lake.get("/repositories/repo/tags/v1").json()["commit_id"],
        all[2].as_str()
    );
    assert_eq!(lake.delete("/repositories/repo/tags/v1").status, 204);
    lake.get("/repositories/repo/tags/v1")
        .error(404, "tag not found");
}

// ---- log (§3.17) ----

#[test]
fn log_orders_pages_and_filters() {
    let (server, lake) = started();
    let mut ids = vec![server.head("repo", "main").unwrap()];
    for i in 0..5 {
        lake.upload("repo", "main", &format!("f{i}"), b"x");
        ids.push(
            lake.commit(
                "repo",
                "main",
                &json!({"message": format!("{i}"), "date": 2_000_000_000 + i}),
            )["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    ids.reverse();
    let log = |query: &str| lake.get(&format!("/repositories/repo/refs/main/commits?{query}"));
    let all = log("");
    let got: Vec<String> = all.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, ids);
    let page = log("amount=2").json();
    assert_eq!(page["pagination"]["has_more"], true);
    assert_eq!(page["pagination"]["next_offset"], ids[1].as_str());
    let next = log(&format!("amount=2&after={}", ids[1])).json();
    assert_eq!(next["results"][0]["id"], ids[2].as_str());
    let limited = log("amount=2&limit=true").json();
    assert_eq!(limited["pagination"]["has_more"], false);
    assert_eq!(limited["results"].as_array().unwrap().len(), 2);
    let touching = log("objects=f3").json();
    assert_eq!(touching["results"].as_array().unwrap().len(), 1);
    assert_eq!(touching["results"][0]["message"], "3");
    let under = log("prefixes=f").json();
    assert_eq!(under["results"].as_array().unwrap().len(), 5);
    let stop = log(&format!("stop_at={}", ids[2])).json();
    assert_eq!(stop["results"].as_array().unwrap().len(), 3);
    lake.get("/repositories/repo/refs/nope/commits")
        .error(404, "not found");
    assert_eq!(
        lake.get("/repositories/repo/refs/main$/commits").status,
        400
    );
}

#[test]
fn log_walks_merges_by_date_and_first_parent() {
    let (server, lake) = started();
    lake.create_branch("repo", "side", "main");
    lake.upload("repo", "side", "s", b"s");
    let side = lake.commit(
        "repo",
        "side",
        &json!({"message": "side", "date": 2_000_000_010}),
    );
    lake.upload("repo", "main", "m", b"m");
    let main = lake.commit(
        "repo",
        "main",
        &json!({"message": "main", "date": 2_000_000_020}),
    );
    let merged = lake.merge("repo", "side", "main", &json!({}));
    assert_eq!(merged.status, 200, "{}", merged.text());
    let merge_id = merged.json()["reference"].as_str().unwrap().to_owned();
    let root = server.get_commit("repo", "main~2").unwrap().id;
    let messages = |query: &str| -> Vec<String> {
        lake.get(&format!("/repositories/repo/refs/main/commits?{query}"))
            .json()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        messages(""),
        [
            merge_id.clone(),
            main["id"].as_str().unwrap().into(),
            side["id"].as_str().unwrap().into(),
            root.clone()
        ]
    );
    assert_eq!(
        messages("first_parent=true"),
        [merge_id, main["id"].as_str().unwrap().into(), root]
    );
}

// ---- diffs (§3.14, §3.15) ----

fn diff_rows(answer: &Resp) -> Vec<(String, String)> {
    assert_eq!(answer.status, 200, "{}", answer.text());
    answer.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn rows(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect()
}

#[test]
fn diff_branch_lists_staged_changes() {
    let (server, lake) = started();
    for p in ["keep", "change", "remove", "same"] {
        server
            .put_object("repo", "main", p, p.as_bytes().to_vec())
            .unwrap();
    }
    server.commit("repo", "main", "base").unwrap();
    let diff = || lake.get("/repositories/repo/branches/main/diff");
    assert_eq!(diff().json()["results"], json!([]));
    lake.upload("repo", "main", "add", b"new");
    lake.upload("repo", "main", "change", b"changed");
    lake.upload("repo", "main", "same", b"same");
    lake.delete("/repositories/repo/branches/main/objects?path=remove");
    server
        .put_object("repo", "main", "tmp", b"t".to_vec())
        .unwrap();
    server.delete_object("repo", "main", "tmp").unwrap();
    let answer = diff();
    assert_eq!(
        diff_rows(&answer),
        rows(&[
            ("add", "added"),
            ("change", "changed"),
            ("remove", "removed")
        ])
    );
    let removed = &answer.json()["results"][2];
    assert_eq!(removed["size_bytes"], 0);
    assert_eq!(removed["path_type"], "object");
    let page = lake.get("/repositories/repo/branches/main/diff?amount=1&after=add");
    assert_eq!(diff_rows(&page), rows(&[("change", "changed")]));
    assert_eq!(page.json()["pagination"]["next_offset"], "change");
    lake.get("/repositories/repo/branches/nope/diff")
        .error(404, "branch not found");
}

#[test]
fn diff_refs_two_dot_and_three_dot_with_conflicts() {
    let (server, lake) = started();
    for p in ["both", "dest-only", "src-only", "same-change", "dir/x"] {
        server
            .put_object("repo", "main", p, b"base".to_vec())
            .unwrap();
    }
    server.commit("repo", "main", "base").unwrap();
    lake.create_branch("repo", "src", "main");
    lake.upload("repo", "src", "both", b"S");
    lake.upload("repo", "src", "src-only", b"S");
    lake.upload("repo", "src", "same-change", b"C");
    lake.upload("repo", "src", "added", b"A");
    lake.upload("repo", "src", "dir/x", b"S");
    lake.commit("repo", "src", &json!({"message": "src"}));
    lake.upload("repo", "main", "both", b"D");
    lake.upload("repo", "main", "dest-only", b"D");
    lake.upload("repo", "main", "same-change", b"C");
    lake.commit("repo", "main", &json!({"message": "dest"}));
    let diff = |query: &str| lake.get(&format!("/repositories/repo/refs/main/diff/src?{query}"));
    // Three-dot (the default): what the merge would apply.
    assert_eq!(
        diff_rows(&diff("")),
        rows(&[
            ("added", "added"),
            ("both", "conflict"),
            ("dir/x", "changed"),
            ("src-only", "changed")
        ])
    );
    // Two-dot: a direct comparison.
    assert_eq!(
        diff_rows(&diff("type=two_dot")),
        rows(&[
            ("added", "added"),
            ("both", "changed"),
            ("dest-only", "changed"),
            ("dir/x", "changed"),
            ("src-only", "changed"),
        ])
    );
    let grouped = diff("type=two_dot&delimiter=%2F&prefix=d").json();
    assert_eq!(
        grouped["results"],
        json!([
            {"path": "dest-only", "path_type": "object", "size_bytes": 4, "type": "changed"},
            {"path": "dir/", "path_type": "common_prefix", "type": "prefix_changed"},
        ])
    );
    let with_right = diff("include_right_stats=true&prefix=added").json();
    assert_eq!(with_right["results"][0]["right"]["checksum"], md5_hex(b"A"));
    // `$` on the right of a two-dot diff includes staged writes.
    lake.upload("repo", "src", "staged", b"x");
    let staged = lake.get(&format!(
        "/repositories/repo/refs/main/diff/{}?type=two_dot&prefix=staged",
        enc("src$")
    ));
    assert_eq!(diff_rows(&staged), rows(&[("staged", "added")]));
    assert_eq!(diff_rows(&diff("type=two_dot&prefix=staged")), rows(&[]));
    // `$` on the left, or on either side of three-dot: 400.
    for path in [
        format!(
            "/repositories/repo/refs/{}/diff/src?type=two_dot",
            enc("main$")
        ),
        format!("/repositories/repo/refs/main/diff/{}", enc("src$")),
    ] {
        assert_eq!(lake.get(&path).status, 400, "{path}");
    }
    lake.get("/repositories/repo/refs/main/diff/nope")
        .error(404, "get commit by ref nope: not found");
    assert_eq!(diff("type=one_dot").status, 400);
    // Removals carry the left size in diffRefs.
    lake.delete("/repositories/repo/branches/src/objects?path=src-only");
    lake.commit("repo", "src", &json!({"message": "rm"}));
    let removed = diff("prefix=src-only").json();
    assert_eq!(removed["results"][0]["type"], "removed");
    assert_eq!(removed["results"][0]["size_bytes"], 4);
}

// ---- merge (§3.16) ----

#[derive(Clone, Copy, Debug)]
enum V {
    Absent,
    X,
    Y,
    Z,
}

impl V {
    fn bytes(self) -> Option<&'static [u8]> {
        match self {
            V::Absent => None,
            V::X => Some(b"X value"),
            V::Y => Some(b"Y value"),
            V::Z => Some(b"Z value"),
        }
    }
}

/// The table of §3.16: B, S, D, then the outcome with no strategy,
/// dest-wins and source-wins (`None` = conflict).
const TABLE: [(V, V, V, Option<V>, V, V); 14] = [
    (V::Absent, V::X, V::Absent, Some(V::X), V::X, V::X),
    (V::Absent, V::Absent, V::Y, Some(V::Y), V::Y, V::Y),
    (V::Absent, V::X, V::X, Some(V::X), V::X, V::X),
    (V::Absent, V::X, V::Y, None, V::Y, V::X),
    (V::Z, V::Z, V::Z, Some(V::Z), V::Z, V::Z),
    (V::Z, V::X, V::Z, Some(V::X), V::X, V::X),
    (V::Z, V::Z, V::Y, Some(V::Y), V::Y, V::Y),
    (V::Z, V::X, V::X, Some(V::X), V::X, V::X),
    (V::Z, V::X, V::Y, None, V::Y, V::X),
    (V::Z, V::Absent, V::Z, Some(V::Absent), V::Absent, V::Absent),
    (V::Z, V::Z, V::Absent, Some(V::Absent), V::Absent, V::Absent),
    (
        V::Z,
        V::Absent,
        V::Absent,
        Some(V::Absent),
        V::Absent,
        V::Absent,
    ),
    (V::Z, V::Absent, V::Y, None, V::Y, V::Absent),
    (V::Z, V::X, V::Absent, None, V::Absent, V::X),
];

/// Sets `path` to `value` on `branch` (staged).
fn set(lake: &Lake, branch: &str, path: &str, value: V) {
    match value.bytes() {
        Some(bytes) => {
            lake.upload("repo", branch, path, bytes);
        }
        None => {
            lake.delete(&format!(
                "/repositories/repo/branches/{branch}/objects?path={path}"
            ));
        }
    }
}

#[test]
fn every_row_of_the_merge_table_with_every_strategy() {
    for (row, &(b, s, d, none, dest_wins, source_wins)) in TABLE.iter().enumerate() {
        for (strategy, expected) in [
            ("", none),
            ("dest-wins", Some(dest_wins)),
            ("source-wins", Some(source_wins)),
        ] {
            let (server, lake) = started();
            let context = format!("row {} strategy {strategy:?}", row + 1);
            set(&lake, "main", "p", b);
            // Markers on both sides make both commits and the merge non-trivial.
            set(&lake, "main", "base-marker", V::Z);
            lake.commit("repo", "main", &json!({"message": "base"}));
            lake.create_branch("repo", "src", "main");
            set(&lake, "src", "p", s);
            set(&lake, "src", "src-marker", V::X);
            let source = lake.commit("repo", "src", &json!({"message": "source"}));
            set(&lake, "main", "p", d);
            set(&lake, "main", "dest-marker", V::Y);
            let dest = lake.commit("repo", "main", &json!({"message": "dest"}));
            let commits = server.commits_count("repo");
            let body = if strategy.is_empty() {
                json!({})
            } else {
                json!({"strategy": strategy})
            };
            let answer = lake.merge("repo", "src", "main", &body);
            match expected {
                None => {
                    assert_eq!(answer.status, 409, "{context}: {}", answer.text());
                    assert_eq!(answer.json(), json!({"reference": ""}), "{context}");
                    assert_eq!(
                        server.head("repo", "main").as_deref(),
                        dest["id"].as_str(),
                        "{context}"
                    );
                    assert_eq!(server.commits_count("repo"), commits, "{context}");
                }
                Some(value) => {
                    assert_eq!(answer.status, 200, "{context}: {}", answer.text());
                    let reference = answer.json()["reference"].as_str().unwrap().to_owned();
                    assert_eq!(
                        server.head("repo", "main").as_deref(),
                        Some(reference.as_str()),
                        "{context}"
                    );
                    let got = server.object("repo", "main", "p");
                    assert_eq!(got.as_deref(), value.bytes(), "{context}");
                    assert_eq!(
                        &server.object("repo", "main", "src-marker").unwrap()[..],
                        V::X.bytes().unwrap()
                    );
                    assert_eq!(
                        &server.object("repo", "main", "dest-marker").unwrap()[..],
                        V::Y.bytes().unwrap()
                    );
                    let commit = lake.get_commit("repo", &reference).json();
                    assert_eq!(
                        commit["parents"],
                        json!([dest["id"], source["id"]]),
                        "{context}"
                    );
                    let name = if strategy.is_empty() {
                        "default"
                    } else {
                        strategy
                    };
                    assert_eq!(
                        commit["metadata"][".lakefs.merge.strategy"], name,
                        "{context}"
                    );
                    assert_eq!(commit["message"], "Merge 'src' into 'main'");
                    assert_eq!(commit["committer"], "admin");
                    assert_eq!(commit["generation"], 4);
                    assert_eq!(spec_commit_id(&commit), reference, "{context}");
                }
            }
        }
    }
}

#[test]
fn merge_errors_and_quirks() {
    let (server, lake) = started();
    lake.upload("repo", "main", "a", b"1");
    lake.commit("repo", "main", &json!({"message": "base"}));
    lake.create_branch("repo", "src", "main");
    // A source without changes since the base: no changes.
    lake.merge("repo", "src", "main", &json!({}))
        .error(400, "update branch main: no changes");
    lake.upload("repo", "src", "b", b"2");
    // Staged writes on the source are ignored (still no changes).
    lake.merge("repo", "src", "main", &json!({}))
        .error(400, "update branch main: no changes");
    let source = lake.commit("repo", "src", &json!({"message": "src"}));
    // A dirty destination.
    lake.upload("repo", "main", "dirty", b"d");
    lake.merge("repo", "src", "main", &json!({}))
        .error(400, "uncommitted changes (dirty branch)");
    lake.delete("/repositories/repo/branches/main/objects?path=dirty");
    // Strategy, destination and source checks.
    lake.merge("repo", "src", "main", &json!({"strategy": "ours"}))
        .error(400, "argument strategy: invalid value: validation error");
    assert_eq!(lake.merge("repo", "src", "main@", &json!({})).status, 400);
    assert_eq!(lake.merge("repo", "src$", "main", &json!({})).status, 400);
    lake.merge("repo", "src", "nope", &json!({}))
        .error(404, "branch not found");
    lake.merge("repo", "nope", "main", &json!({}))
        .error(404, "update branch main: get commit by ref nope: not found");
    // An empty body is accepted; the destination did not move, still a merge commit.
    let head = server.head("repo", "main").unwrap();
    let merged = lake.send(
        "POST",
        "/repositories/repo/refs/src/merge/main",
        &[],
        Some(b""),
    );
    assert_eq!(merged.status, 200, "{}", merged.text());
    let reference = merged.json()["reference"].as_str().unwrap().to_owned();
    assert_ne!(reference, source["id"].as_str().unwrap());
    assert_eq!(
        lake.get_commit("repo", &reference).json()["parents"],
        json!([head, source["id"]])
    );
    // Merging again: the source is an ancestor now.
    lake.merge("repo", "src", "main", &json!({"message": "again"}))
        .error(400, "update branch main: no changes");
    let forced = lake.merge(
        "repo",
        "src",
        "main",
        &json!({"allow_empty": true, "metadata": {"k": "v"}}),
    );
    assert_eq!(forced.status, 200);
    let forced = lake
        .get_commit("repo", forced.json()["reference"].as_str().unwrap())
        .json();
    assert_eq!(
        forced["metadata"],
        json!({".lakefs.merge.strategy": "default", "k": "v"})
    );
    // The caller cannot override the strategy metadata.
    lake.upload("repo", "src", "c", b"3");
    lake.commit("repo", "src", &json!({"message": "c"}));
    let squashed = lake.merge(
        "repo",
        "src",
        "main",
        &json!({"squash_merge": true, "message": "sq", "metadata": {".lakefs.merge.strategy": "mine"}}),
    );
    assert_eq!(squashed.status, 200);
    let squashed = lake
        .get_commit("repo", squashed.json()["reference"].as_str().unwrap())
        .json();
    assert_eq!(squashed["parents"].as_array().unwrap().len(), 1);
    assert_eq!(squashed["message"], "sq");
    assert_eq!(squashed["metadata"][".lakefs.merge.strategy"], "default");
    assert_eq!(&server.object("repo", "main", "c").unwrap()[..], b"3");
    // findMergeBase.
    let base = lake.get("/repositories/repo/refs/src/merge/main").json();
    assert_eq!(
        base["source_commit_id"],
        server.head("repo", "src").unwrap().as_str()
    );
    assert_eq!(
        base["destination_commit_id"],
        server.head("repo", "main").unwrap().as_str()
    );
}

#[test]
fn a_merge_that_sees_the_head_move_recomputes_and_lands_on_top() {
    let (server, lake) = started();
    lake.upload("repo", "main", "base", b"b");
    lake.commit("repo", "main", &json!({"message": "base"}));
    lake.create_branch("repo", "src", "main");
    lake.upload("repo", "src", "from-src", b"s");
    let source = lake.commit("repo", "src", &json!({"message": "src"}));
    // While the merge is in flight, someone commits to main.
    let moved = Arc::new(std::sync::Mutex::new(String::new()));
    let record = Arc::clone(&moved);
    server.before_merge("repo", "main", move |handle| {
        handle
            .put_object("repo", "main", "concurrent", b"c".to_vec())
            .unwrap();
        *record.lock().unwrap() = handle.commit("repo", "main", "concurrent").unwrap().id;
    });
    let answer = lake.merge("repo", "src", "main", &json!({}));
    assert_eq!(answer.status, 200, "{}", answer.text());
    let merge = lake
        .get_commit("repo", answer.json()["reference"].as_str().unwrap())
        .json();
    let concurrent = moved.lock().unwrap().clone();
    assert_eq!(merge["parents"], json!([concurrent, source["id"]]));
    assert!(server.object("repo", "main", "concurrent").is_some());
    assert!(server.object("repo", "main", "from-src").is_some());

    // A concurrent change of the same path differently is a conflict.
    lake.upload("repo", "src", "from-src", b"s2");
    lake.commit("repo", "src", &json!({"message": "src2"}));
    server.before_merge("repo", "main", |handle| {
        handle
            .put_object("repo", "main", "from-src", b"other".to_vec())
            .unwrap();
        handle.commit("repo", "main", "clash").unwrap();
    });
    let answer = lake.merge("repo", "src", "main", &json!({}));
    assert_eq!(
        (answer.status, answer.json()),
        (409, json!({"reference": ""}))
    );
    assert_eq!(
        &server.object("repo", "main", "from-src").unwrap()[..],
        b"other"
    );
}

#[test]
fn a_merge_that_loses_ten_races_is_429() {
    let (server, lake) = started();
    lake.create_branch("repo", "src", "main");
    lake.upload("repo", "src", "s", b"s");
    lake.commit("repo", "src", &json!({"message": "src"}));
    for i in 0..10 {
        server.before_merge("repo", "main", move |handle| {
            handle
                .put_object("repo", "main", &format!("moved/{i}"), vec![i])
                .unwrap();
            handle.commit("repo", "main", "moved").unwrap();
        });
    }
    lake.merge("repo", "src", "main", &json!({}))
        .error(429, "Too many attempts, try again later");
    assert!(server.object("repo", "main", "s").is_none());
    assert!(server.object("repo", "main", "moved/9").is_some());
    // With no hooks left, the next try lands.
    assert_eq!(lake.merge("repo", "src", "main", &json!({})).status, 200);
    assert!(server.object("repo", "main", "s").is_some());
}

#[test]
fn concurrent_merges_into_one_branch_both_land() {
    let (server, lake) = started();
    lake.upload("repo", "main", "base", b"b");
    lake.commit("repo", "main", &json!({"message": "base"}));
    let workers = 4;
    for i in 0..workers {
        let branch = format!("ws-{i}");
        lake.create_branch("repo", &branch, "main");
        lake.upload(
            "repo",
            &branch,
            &format!("out/{i}"),
            format!("{i}").as_bytes(),
        );
        lake.commit("repo", &branch, &json!({"message": branch}));
    }
    let barrier = Arc::new(Barrier::new(workers));
    let answers: Vec<Resp> = (0..workers)
        .map(|i| {
            let lake = Lake::new(&server);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                lake.merge("repo", &format!("ws-{i}"), "main", &json!({}))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    for answer in &answers {
        assert_eq!(answer.status, 200, "{}", answer.text());
    }
    for i in 0..workers {
        assert!(server.object("repo", "main", &format!("out/{i}")).is_some());
    }
    // Each merge commit's first parent is the head it was applied to: a chain.
    let log = lake
        .get("/repositories/repo/refs/main/commits?first_parent=true&amount=5")
        .json();
    let merges: Vec<&Value> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .take(workers)
        .collect();
    for pair in merges.windows(2) {
        assert_eq!(pair[0]["parents"][0], pair[1]["id"]);
    }
}

#[test]
fn concurrent_conflicting_merges_let_one_land() {
    let (server, lake) = started();
    lake.upload("repo", "main", "shared", b"base");
    lake.commit("repo", "main", &json!({"message": "base"}));
    for i in 0..2 {
        let branch = format!("ws-{i}");
        lake.create_branch("repo", &branch, "main");
        lake.upload("repo", &branch, "shared", format!("{i}").as_bytes());
        lake.commit("repo", &branch, &json!({"message": branch}));
    }
    let barrier = Arc::new(Barrier::new(2));
    let mut statuses: Vec<u16> = (0..2)
        .map(|i| {
            let lake = Lake::new(&server);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                lake.merge("repo", &format!("ws-{i}"), "main", &json!({}))
                    .status
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409]);
}

// ---- faults, the request log, stop ----

#[test]
fn fail_next_aims_at_operations_methods_and_paths() {
    let (server, lake) = started();
    server.fail_next(Operation::UploadObject, 2, 500, "boom");
    // Other operations are unaffected.
    assert_eq!(lake.get("/repositories/repo").status, 200);
    for _ in 0..2 {
        lake.upload_with("repo", "main", "a", &[], b"1")
            .error(500, "boom");
        assert!(server.object("repo", "main", "a").is_none());
    }
    assert_eq!(lake.upload_with("repo", "main", "a", &[], b"1").status, 201);
    let statuses: Vec<u16> = server
        .requests()
        .iter()
        .filter(|r| r.operation == Some(Operation::UploadObject))
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [500, 500, 201]);

    server.fail_next(
        Target::any()
            .method("get")
            .path_prefix("/api/v1/repositories/repo/refs/"),
        1,
        503,
        "slow down",
    );
    lake.get("/repositories/repo/branches/main").json();
    lake.stat("repo", "main", "a").error(503, "slow down");
    assert_eq!(lake.stat("repo", "main", "a").status, 200);

    server.reply_next(
        Operation::GetRepository,
        1,
        RawReply::json(200, "{not json"),
    );
    assert_eq!(lake.get("/repositories/repo").text(), "{not json");
    server.drop_next(Operation::GetBranch, 1);
    assert!(
        lake.try_send("GET", "/repositories/repo/branches/main", &[], None, true)
            .is_err()
    );
    assert_eq!(lake.get("/repositories/repo/branches/main").status, 200);
    server.set_delay(Target::any(), Duration::from_millis(1));
    assert_eq!(lake.get("/repositories/repo").status, 200);
    server.slow_body_next(Operation::GetObject, 1, Duration::from_millis(20));
    assert_eq!(lake.get_object("repo", "main", "a", &[]).body, b"1");
    server.clear_faults();
    server.fail_next(Target::any(), 1, 502, "x");
    server.clear_faults();
    assert_eq!(lake.get("/repositories/repo").status, 200);
    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[test]
fn stop_refuses_connections_and_restart_keeps_state() {
    let (mut server, lake) = started();
    lake.upload("repo", "main", "a", b"1");
    server.stop();
    assert!(!server.is_running());
    assert!(
        lake.try_send("GET", "/repositories/repo", &[], None, true)
            .is_err()
    );
    server.restart();
    assert_eq!(lake.get_object("repo", "main", "a", &[]).body, b"1");
}

#[test]
fn wait_until_sees_requests_arrive() {
    let (server, _lake) = started();
    let handle = server.handle();
    let lake = Lake::new(&server);
    let worker = thread::spawn(move || lake.get("/repositories/repo").status);
    assert!(handle.wait_until(Duration::from_secs(30), |h| {
        h.requests().iter().any(|r| r.status == 200)
    }));
    assert_eq!(worker.join().unwrap(), 200);
}

// ---- large bodies ----

#[test]
fn a_hundred_megabyte_upload_round_trips() {
    let (server, lake) = started();
    let data: Vec<u8> = (0..100u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let stats = lake.upload("repo", "main", "big", &data);
    assert_eq!(stats["size_bytes"], data.len());
    assert_eq!(stats["checksum"], md5_hex(&data));
    let back = lake.get_object("repo", "main", "big", &[]);
    assert_eq!(back.body.len(), data.len());
    assert!(back.body == data);
    let tail = lake.get_object("repo", "main", "big", &[("range", "bytes=-10")]);
    assert_eq!(tail.body, data[data.len() - 10..]);
    drop(server);
}

#[test]
fn uploads_over_the_limit_are_413() {
    let server = LakeFsServer::start_with(LakeFsOptions {
        max_upload_bytes: 1000,
        ..LakeFsOptions::default()
    });
    server.create_repository("repo", "main").unwrap();
    let lake = Lake::new(&server);
    assert_eq!(
        lake.upload_with("repo", "main", "ok", &[], &[1; 1000])
            .status,
        201
    );
    lake.upload_with("repo", "main", "big", &[], &[1; 1001])
        .error(413, "request body too large");
    assert!(server.object("repo", "main", "big").is_none());
}

#[test]
fn identical_bodies_are_stored_once() {
    let (server, lake) = started();
    let data = vec![7u8; 4096];
    lake.upload("repo", "main", "one", &data);
    lake.upload("repo", "main", "two", &data);
    let one = server.object("repo", "main", "one").unwrap();
    let two = server.object("repo", "main", "two").unwrap();
    assert_eq!(one.as_ptr(), two.as_ptr());
}
