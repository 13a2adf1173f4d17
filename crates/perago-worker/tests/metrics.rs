//! `worker --metrics-listen`: the example binary started with its default flags and a
//! metrics listener on a free port (found as a user finds it, in the `metrics_listening` log
//! record), against the Conductor test server and its faults. `/metrics` is read with an
//! independent parser of the Prometheus text format, and its counters are held to what the
//! test server saw; the probes follow the server's outages.

use perago_testserver::process::{Child, json_lines};
use perago_testserver::{Route, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{Backend, example_binary};

mod support;

const PATIENCE: Duration = Duration::from_secs(120);
const ADDRESS_SPACE: u64 = 3 << 30;

fn bin() -> Command {
    let mut cmd = Command::new(example_binary());
    for var in [
        "PERAGO_WORKER_LOG",
        "CONDUCTOR_SERVER_URL",
        "CONDUCTOR_AUTH_TOKEN",
        "PERAGO_METRICS_LISTEN",
        "PERAGO_STORE",
        "XDG_DATA_HOME",
        "LAKECTL_SERVER_ENDPOINT_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env(
        "HOME",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/metrics-home"),
    );
    cmd
}

/// The worker with its default flags, `extra`, and metrics on a free port.
fn worker(server: &TestServer, extra: &[&str]) -> (Child, SocketAddr) {
    let mut cmd = bin();
    cmd.args(["worker", "--conductor-url", &server.base_url()])
        .args(["--metrics-listen", "127.0.0.1:0"])
        .args(extra);
    let child = Child::start(cmd, Some(ADDRESS_SPACE));
    let addr = listening(&child);
    (child, addr)
}

/// The address in the `metrics_listening` record.
fn listening(child: &Child) -> SocketAddr {
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"metrics_listening\"")),
        "{}",
        child.stderr()
    );
    let stderr = child.stderr();
    let line = stderr
        .lines()
        .find(|l| l.contains("\"metrics_listening\""))
        .unwrap();
    let record = &json_lines(line)[0];
    record["addr"].as_str().unwrap().parse().unwrap()
}

/// `GET path` with `accept`: status and body.
fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

fn scrape(addr: SocketAddr) -> prometheus_parse::Scrape {
    let (status, body) = get(addr, "/metrics", None);
    assert_eq!(status, 200, "{body}");
    prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("it parses")
}

/// The value of the sample `name` with exactly `labels`.
fn value(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let sample = scrape
        .samples
        .iter()
        .find(|s| {
            s.metric == name
                && s.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
        })
        .unwrap_or_else(|| panic!("no {name} {labels:?}"));
    match sample.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => v,
        ref other => panic!("{name}: {other:?}"),
    }
}

/// Asks `path` until it answers `status`.
fn until(addr: SocketAddr, path: &str, status: u16) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (got, body) = get(addr, path, None);
        if got == status {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} stays {got}: {body}");
        std::thread::yield_now();
    }
}

fn song(id: &str) -> Value {
    json!({"params": {"song_id": id}})
}

fn vt(task_type: &'static str) -> [(&'static str, &'static str); 1] {
    [("task_type", task_type)]
}

#[test]
fn the_counters_are_what_conductor_saw() {
    let server = TestServer::start();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(server.enqueue("validate_song", song("song-000123")));
    }
    // Not in the catalog: FAILED_WITH_TERMINAL_ERROR.
    ids.push(server.enqueue("validate_song", song("song-999999")));
    // Input violations: a params field of the wrong type, a key beside params.
    ids.push(server.enqueue("validate_song", json!({"params": {"song_id": 7}})));
    ids.push(server.enqueue(
        "validate_song",
        json!({"params": {"song_id": "song-000123"}, "extra": true}),
    ));
    // Two updates answered 503 and retried.
    server.fail_next(Route::UpdateTask, 2, 503);
    let (child, addr) = worker(&server, &["--task", "validate_song"]);
    assert!(
        server.wait_terminal(ids.len(), PATIENCE),
        "{}",
        child.stderr()
    );

    let tasks = server.tasks();
    let seen = |status: TaskStatus| tasks.iter().filter(|t| t.status == status).count() as f64;
    let requests = server.requests();
    let updates_503 = requests
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/api/tasks" && r.status == 503)
        .count() as f64;
    let polls = |answered: bool| {
        server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/api/tasks/poll/batch/"))
            .filter(|r| !answered || r.status != 0)
            .count() as f64
    };
    // The server sees a result before the worker counts it: scrape until every task is
    // counted and none is in flight.
    let deadline = Instant::now() + PATIENCE;
    let (m, answered_before, polled_after) = loop {
        let answered_before = polls(true);
        let m = scrape(addr);
        let polled_after = polls(false);
        let counted: f64 = ["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]
            .iter()
            .map(|s| {
                value(
                    &m,
                    "perago_worker_tasks_total",
                    &[("task_type", "validate_song"), ("status", s)],
                )
            })
            .sum();
        let in_flight = value(&m, "perago_worker_in_flight", &vt("validate_song"));
        if counted == ids.len() as f64 && in_flight == 0.0 {
            break (m, answered_before, polled_after);
        }
        assert!(
            Instant::now() < deadline,
            "the worker counted {counted} of {} tasks, {in_flight} in flight",
            ids.len()
        );
        std::thread::yield_now();
    };

    let status = |s| [("task_type", "validate_song"), ("status", s)];
    assert_eq!(
        value(&m, "perago_worker_tasks_total", &status("COMPLETED")),
        seen(TaskStatus::Completed)
    );
    assert_eq!(
        value(&m, "perago_worker_tasks_total", &status("FAILED")),
        seen(TaskStatus::Failed)
    );
    assert_eq!(
        value(
            &m,
            "perago_worker_tasks_total",
            &status("FAILED_WITH_TERMINAL_ERROR")
        ),
        seen(TaskStatus::FailedWithTerminalError)
    );
    assert_eq!(seen(TaskStatus::Completed), 3.0);
    assert_eq!(seen(TaskStatus::Failed), 2.0);
    assert_eq!(seen(TaskStatus::FailedWithTerminalError), 1.0);
    assert_eq!(updates_503, 2.0);
    assert_eq!(
        value(
            &m,
            "perago_worker_update_retries_total",
            &vt("validate_song")
        ),
        updates_503
    );
    let stage = |s| [("task_type", "validate_song"), ("stage", s)];
    assert_eq!(
        value(
            &m,
            "perago_worker_contract_violations_total",
            &stage("input")
        ),
        1.0
    );
    assert_eq!(
        value(
            &m,
            "perago_worker_contract_violations_total",
            &stage("params")
        ),
        1.0
    );
    assert_eq!(
        value(
            &m,
            "perago_worker_contract_violations_total",
            &stage("result")
        ),
        0.0
    );
    assert_eq!(
        value(&m, "perago_worker_in_flight", &vt("validate_song")),
        0.0
    );
    assert_eq!(value(&m, "perago_worker_lost_results_total", &[]), 0.0);
    assert_eq!(
        value(
            &m,
            "perago_worker_unreported_results_total",
            &vt("validate_song")
        ),
        0.0
    );
    let outcome = |o| [("task_type", "validate_song"), ("outcome", o)];
    let polls_counted: f64 = ["tasks", "empty", "error"]
        .into_iter()
        .map(|o| value(&m, "perago_worker_polls_total", &outcome(o)))
        .sum();
    assert!(value(&m, "perago_worker_polls_total", &outcome("tasks")) >= 1.0);
    assert_eq!(
        value(&m, "perago_worker_polls_total", &outcome("error")),
        0.0
    );
    // Every poll the server answered before the scrape, and none it had not received.
    assert!(
        answered_before <= polls_counted && polls_counted <= polled_after,
        "{answered_before} <= {polls_counted} <= {polled_after}"
    );
    let duration_count = m
        .samples
        .iter()
        .find(|s| s.metric == "perago_worker_task_duration_seconds")
        .map(|s| match &s.value {
            prometheus_parse::Value::Histogram(h) => h.iter().map(|b| b.count).fold(0.0, f64::max),
            other => panic!("{other:?}"),
        })
        .expect("the histogram");
    assert_eq!(duration_count, ids.len() as f64);

    // No label carries a task id, and only these labels exist.
    for sample in &m.samples {
        for (key, label) in sample.labels.iter() {
            assert!(
                ["task_type", "outcome", "status", "stage", "direction"].contains(&key.as_str()),
                "{key}"
            );
            assert!(!ids.iter().any(|id| label.contains(id.as_str())), "{label}");
        }
    }
    // The scraper may ask for OpenMetrics.
    let (status_code, open) = get(addr, "/metrics", Some("application/openmetrics-text"));
    assert_eq!(status_code, 200);
    assert!(open.ends_with("# EOF\n"), "{open}");
    assert_eq!(
        get(addr, "/healthz", None),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    assert_eq!(get(addr, "/", None).0, 404);
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
}

#[test]
fn readiness_follows_conductor_and_liveness_the_loops() {
    let mut server = TestServer::start();
    let (child, addr) = worker(&server, &["--task", "validate_song"]);
    until(addr, "/readyz", 200);
    server.stop();
    let body = until(addr, "/readyz", 503);
    let why: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(why["status"], "unavailable", "{body}");
    assert!(
        why["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("the last call to Conductor, "),
        "{body}"
    );
    // Polls that fail fast are not a stuck loop.
    assert_eq!(get(addr, "/healthz", None).0, 200);
    server.restart();
    assert_eq!(until(addr, "/readyz", 200), r#"{"status":"ok"}"#);
    let m = scrape(addr);
    assert!(
        value(
            &m,
            "perago_worker_polls_total",
            &[("task_type", "validate_song"), ("outcome", "error")]
        ) >= 1.0
    );
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
}

#[test]
fn workspace_bytes_are_counted_both_ways() {
    let backend = Backend::local();
    let base = backend.import_example();
    let sizes: u64 = backend
        .store
        .list_objects(
            support::REPOSITORY,
            &perago_workspace::CommitId::parse(&base).unwrap(),
            "features/",
        )
        .unwrap()
        .iter()
        .map(|o| o.size)
        .sum();
    let workspace = json!({"repository": support::REPOSITORY, "branch": "main",
                           "ref_type": "commit", "ref": base});
    let server = TestServer::start();
    server.enqueue(
        "build_features",
        json!({"workspace": workspace, "params": {"feature_set": "default", "min_rows": 1}}),
    );
    let root = backend.local_root.clone().unwrap();
    let (child, addr) = worker(
        &server,
        &[
            "--task",
            "build_features",
            "--store",
            root.to_str().unwrap(),
        ],
    );
    assert!(server.wait_terminal(1, PATIENCE), "{}", child.stderr());
    assert_eq!(server.tasks()[0].status, TaskStatus::Completed);
    let m = scrape(addr);
    let direction = |d| [("task_type", "build_features"), ("direction", d)];
    assert_eq!(
        value(
            &m,
            "perago_worker_workspace_bytes_total",
            &direction("download")
        ),
        sizes as f64
    );
    assert_eq!(
        value(
            &m,
            "perago_worker_workspace_bytes_total",
            &direction("upload")
        ),
        0.0
    );
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
}

#[test]
fn a_bad_address_or_a_port_in_use_stops_the_worker_at_start() {
    let server = TestServer::start();
    let run = |addr: &str| {
        let mut cmd = bin();
        cmd.args([
            "worker",
            "--conductor-url",
            &server.base_url(),
            "--task",
            "validate_song",
        ])
        .args(["--metrics-listen", addr]);
        Child::start(cmd, Some(ADDRESS_SPACE)).wait(PATIENCE)
    };
    let done = run("not-an-address");
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(
        done.stderr
            .contains("--metrics-listen: expected an address to listen on such as 127.0.0.1:9464"),
        "{done}"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let done = run(&addr);
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(
        done.stderr
            .contains(&format!("cannot serve metrics: cannot listen on {addr}: ")),
        "{done}"
    );
    assert!(!done.stderr.contains("panicked"), "{done}");
    assert!(
        server.requests().is_empty(),
        "no poll before the listener is up"
    );
}
