//! `perago gateway --metrics-listen`: the built binary with its default flags, a free port for
//! its API and one for its metrics (found as a user finds them, in the log), agents claiming
//! and completing tasks of every outcome against the Conductor test server and its faults.
//! `/metrics` is read with an independent parser of the Prometheus text format and held to
//! what the test server saw; the probes follow the server's outages and the shutdown.

#[path = "../../perago-gateway/tests/common/agent.rs"]
mod agent;

use agent::Agent;
use perago_testserver::process::{Child, json_lines};
use perago_testserver::{Route, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TOKEN: &str = "metrics-token-0a1b2c3d4e5f";
const PATIENCE: Duration = Duration::from_secs(60);
const TYPE: &str = "agent_task";

fn perago(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago"));
    cmd.current_dir(dir)
        .env("PERAGO_GATEWAY_TOKEN", TOKEN)
        .env_remove("CONDUCTOR_SERVER_URL")
        .env_remove("CONDUCTOR_AUTH_TOKEN")
        .env_remove("PERAGO_METRICS_LISTEN");
    cmd
}

/// The `field` of the first log record of `event`, once it is written.
fn logged(child: &Child, event: &str, field: &str) -> String {
    let needle = format!("\"{event}\"");
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains(&needle)),
        "no {event}:\n{}",
        child.stderr()
    );
    let stderr = child.stderr();
    let line = stderr.lines().find(|l| l.contains(&needle)).unwrap();
    json_lines(line)[0][field].as_str().unwrap().to_owned()
}

/// `perago gateway` serving `agent_task=SLOTS` with metrics on a free port: the child, the
/// API's URL and the metrics address.
fn gateway(dir: &Path, server: &TestServer, slots: usize) -> (Child, String, SocketAddr) {
    let mut cmd = perago(dir);
    cmd.args(["gateway", "--conductor-url", &server.base_url()])
        .args(["--task-type", &format!("{TYPE}={slots}")])
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"]);
    let child = Child::start(cmd, None);
    let api = format!("http://{}", logged(&child, "gateway_started", "listen"));
    let metrics = logged(&child, "metrics_listening", "addr").parse().unwrap();
    (child, api, metrics)
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.to_owned(),
    )
}

fn scrape(addr: SocketAddr) -> prometheus_parse::Scrape {
    let (status, body) = get(addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("it parses")
}

fn find<'a>(
    scrape: &'a prometheus_parse::Scrape,
    name: &str,
    labels: &[(&str, &str)],
) -> &'a prometheus_parse::Value {
    &scrape
        .samples
        .iter()
        .find(|s| {
            s.metric == name
                && s.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
        })
        .unwrap_or_else(|| {
            let all: Vec<_> = scrape.samples.iter().filter(|s| s.metric == name).collect();
            panic!("no {name} {labels:?} in {all:?}")
        })
        .value
}

fn value(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    match find(scrape, name, labels) {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

/// The number of observations of histogram `name`.
fn observations(scrape: &prometheus_parse::Scrape, name: &str) -> f64 {
    match find(scrape, name, &[]) {
        prometheus_parse::Value::Histogram(buckets) => {
            buckets.iter().map(|b| b.count).fold(0.0, f64::max)
        }
        other => panic!("{name}: {other:?}"),
    }
}

/// Asks `path` until it answers `status`; the body.
fn until(addr: SocketAddr, path: &str, status: u16) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (got, body) = get(addr, path);
        if got == status {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} stays {got}: {body}");
    }
}

#[test]
fn the_counters_are_what_conductor_saw() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..6)
        .map(|i| server.enqueue(TYPE, json!({"params": {"title": format!("task {i}")}})))
        .collect();
    let (child, api, addr) = gateway(dir.path(), &server, 6);
    let agent = Agent::new(&api, TOKEN, "agent-7");
    server.fail_next(Route::Poll, 1, 503);
    assert_eq!(agent.claim(TYPE).status, 503);
    for id in &ids {
        assert_eq!(&agent.claim_one(TYPE), id);
    }
    assert_eq!(agent.claim(TYPE).status, 429, "every slot is held");
    let completion = json!({"payload": {"summary": "Added tests", "files_changed": ["t.rs"]}});
    let submissions = [
        (&ids[0], completion.clone(), 200),
        (
            &ids[1],
            json!({"payload": {"kind": "underspecified", "detail": "Which API?", "question": "v1?"}}),
            200,
        ),
        (
            &ids[2],
            json!({"result_summary": "Fixed the flaky test."}),
            200,
        ),
        (&ids[3], json!({"result_summary": " "}), 422),
        (
            &ids[4],
            json!({"payload": {"summary": "", "files_changed": []}}),
            422,
        ),
        (&ids[0], completion, 409),
    ];
    for (id, body, status) in &submissions {
        let reply = agent.complete(id, body);
        assert_eq!(reply.status, *status, "{}", reply.text);
    }
    assert_eq!(
        agent.claim(TYPE).status,
        204,
        "a free slot, nothing waiting"
    );
    assert_eq!(
        get(addr, "/nowhere").0,
        404,
        "the metrics listener serves three routes"
    );
    assert_eq!(agent.task("no-such-task").status, 404);
    assert!(server.wait_terminal(5, PATIENCE), "{}", child.stderr());
    // Delivered: the outbox is empty once the last delivery is recorded.
    let deadline = Instant::now() + PATIENCE;
    while value(&scrape(addr), "perago_gateway_outbox_pending", &[]) != 0.0 {
        assert!(Instant::now() < deadline, "the outbox stays pending");
    }
    let m = scrape(addr);

    let tasks = server.tasks();
    let seen = |status| tasks.iter().filter(|t| t.status == status).count() as f64;
    let claims = |o| {
        value(
            &m,
            "perago_gateway_claims_total",
            &[("task_type", TYPE), ("outcome", o)],
        )
    };
    let handed_out = tasks.iter().filter(|t| t.poll_count > 0).count() as f64;
    assert_eq!(claims("claimed"), handed_out);
    assert_eq!(handed_out, 6.0);
    assert_eq!(claims("no_slot"), 1.0);
    assert_eq!(claims("empty"), 1.0);
    assert_eq!(claims("conductor_unavailable"), 1.0);
    assert_eq!(claims("error"), 0.0);
    let sub = |o| {
        value(
            &m,
            "perago_gateway_submissions_total",
            &[("task_type", TYPE), ("outcome", o)],
        )
    };
    // What Conductor saw: completions, refusals and prose are COMPLETED, the rest FAILED.
    assert_eq!(
        sub("completion") + sub("refusal") + sub("legacy_prose"),
        seen(TaskStatus::Completed)
    );
    assert_eq!(
        sub("contract_violation") + sub("empty_result_summary"),
        seen(TaskStatus::Failed)
    );
    for outcome in [
        "completion",
        "refusal",
        "legacy_prose",
        "contract_violation",
        "empty_result_summary",
        "conflict",
    ] {
        assert_eq!(sub(outcome), 1.0, "{outcome}");
    }
    assert_eq!(
        value(&m, "perago_gateway_slots_in_use", &[("task_type", TYPE)]),
        tasks
            .iter()
            .filter(|t| t.status == TaskStatus::InProgress)
            .count() as f64
    );
    assert_eq!(seen(TaskStatus::InProgress), 1.0, "ids[5] is still claimed");
    assert_eq!(
        observations(&m, "perago_gateway_delivery_seconds"),
        seen(TaskStatus::Completed) + seen(TaskStatus::Failed)
    );
    assert!(observations(&m, "perago_gateway_ledger_commit_seconds") >= 12.0);
    let http = |route, status| {
        value(
            &m,
            "perago_gateway_http_requests_total",
            &[("route", route), ("status", status)],
        )
    };
    assert_eq!(http("/v1/claims", "200"), 6.0);
    assert_eq!(http("/v1/claims", "429"), 1.0);
    assert_eq!(http("/v1/claims", "204"), 1.0);
    assert_eq!(http("/v1/claims", "503"), 1.0);
    assert_eq!(http("/v1/tasks/:task_id/complete", "200"), 3.0);
    assert_eq!(http("/v1/tasks/:task_id/complete", "422"), 2.0);
    assert_eq!(http("/v1/tasks/:task_id/complete", "409"), 1.0);
    assert_eq!(http("/v1/tasks/:task_id", "404"), 1.0);

    // No label carries a task id, the agent's id or the token.
    for sample in &m.samples {
        for (_, label) in sample.labels.iter() {
            assert!(!ids.iter().any(|id| label.contains(id.as_str())), "{label}");
            assert!(
                !label.contains("agent-7") && !label.contains(TOKEN),
                "{label}"
            );
        }
    }
    assert_eq!(
        get(addr, "/healthz"),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    assert_eq!(get(addr, "/readyz"), (200, r#"{"status":"ok"}"#.to_owned()));
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{done}");
    assert!(!done.stderr.contains(TOKEN));
}

#[test]
fn readiness_follows_conductor() {
    let mut server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (child, _, addr) = gateway(dir.path(), &server, 1);
    // No agent calls: the gateway asks Conductor itself.
    until(addr, "/readyz", 200);
    server.stop();
    let body = until(addr, "/readyz", 503);
    let why: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(why["status"], "unavailable", "{body}");
    assert!(
        why["reasons"][0].as_str().unwrap().contains("Conductor"),
        "{body}"
    );
    assert_eq!(
        get(addr, "/healthz").0,
        200,
        "Conductor's outage is no dead loop"
    );
    server.restart();
    until(addr, "/readyz", 200);
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{done}");
}

#[test]
fn the_probes_say_503_while_the_gateway_stops() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let id = server.enqueue(TYPE, json!({"params": {"title": "t"}}));
    let (child, api, addr) = gateway(dir.path(), &server, 1);
    let agent = Agent::new(&api, TOKEN, "agent-1");
    assert_eq!(agent.claim_one(TYPE), id);
    // Conductor holds the update: the delivery thread is in its attempt when the signal
    // comes, and the gateway waits for it (up to its Conductor timeout) before it exits.
    server.set_delay(Route::UpdateTask, Duration::from_secs(3600));
    let reply = agent.complete(&id, &json!({"result_summary": "done"}));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(server.wait_until(PATIENCE, |s| {
        s.requests()
            .iter()
            .any(|r| r.path == "/api/tasks" && r.method == "POST")
    }));
    assert_eq!(get(addr, "/healthz").0, 200);
    child.signal("TERM");
    let shutting_down = r#"{"status":"shutting_down","reasons":["the process is shutting down"]}"#;
    assert_eq!(until(addr, "/healthz", 503), shutting_down);
    assert_eq!(get(addr, "/readyz"), (503, shutting_down.to_owned()));
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(0), "{done}");
}

#[test]
fn a_bad_address_or_a_port_in_use_stops_the_gateway_at_start() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |addr: &str| {
        let mut cmd = perago(dir.path());
        cmd.args(["gateway", "--conductor-url", &server.base_url()])
            .args(["--task-type", TYPE, "--listen", "127.0.0.1:0"])
            .args(["--metrics-listen", addr]);
        Child::start(cmd, None).wait(PATIENCE)
    };
    let done = run("9464");
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(
        done.stderr.contains(
            "perago: --metrics-listen: expected an address to listen on such as 127.0.0.1:9464"
        ),
        "{done}"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let done = run(&addr);
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(
        done.stderr.contains(&format!(
            "perago: cannot serve metrics: cannot listen on {addr}: "
        )),
        "{done}"
    );
    assert!(server.requests().is_empty());
}
