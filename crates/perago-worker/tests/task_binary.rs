//! A task binary whose handlers misbehave, started as users start one: this test program is
//! also that binary (with `PERAGO_TEST_AS_TASK_BINARY` set it is `perago_worker::cli::main` over its
//! tasks), so the tests run it as a child process with default flags, signal it, and read
//! what it writes. `harness = false`: `main` runs the tests.
//!
//! - `panics`: the handler panics. Its run is `FAILED`, and standard error holds only JSON
//!   Lines: the default panic hook prints nothing.
//! - `blocks`: the handler never returns. A second SIGTERM ends the worker at once and names
//!   the task it leaves `IN_PROGRESS`; until then, through the grace period, `/healthz` and
//!   `/readyz` say 503.

use perago::task::TaskError;
use perago_example::contracts::validate_song_params::ValidateSongParams;
use perago_example::contracts::validate_song_result::ValidateSongResult;
use perago_testserver::process::{Child, events, json_lines};
use perago_testserver::{TaskStatus, TestServer};
use serde_json::{Value, json};
use std::process::{Command, ExitCode};
use std::time::Duration;

const AS_TASK_BINARY: &str = "PERAGO_TEST_AS_TASK_BINARY";
const PATIENCE: Duration = Duration::from_secs(60);
/// The address-space limit of the worker: generous, since virtual memory runs far ahead of
/// what is resident (thread stacks, allocator arenas).
const ADDRESS_SPACE: u64 = 2 << 30;

#[perago::task(name = "panics")]
fn panics(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    panic!("the catalog is on fire");
}

#[perago::task(name = "blocks", response_timeout_seconds = 3600)]
fn blocks(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    if std::env::var_os(AS_TASK_BINARY).is_some() {
        return perago_worker::cli::main(perago::tasks![panics, blocks]);
    }
    let tests: [(&str, fn()); 4] = [
        (
            "a_panicking_handler_fails_its_run_and_stderr_holds_only_its_record",
            a_panicking_handler_fails_its_run_and_stderr_holds_only_its_record,
        ),
        (
            "the_worker_logs_a_panicking_handler_in_json_lines_only",
            the_worker_logs_a_panicking_handler_in_json_lines_only,
        ),
        (
            "a_second_sigterm_names_the_task_left_in_progress",
            a_second_sigterm_names_the_task_left_in_progress,
        ),
        (
            "the_probes_say_503_while_the_worker_shuts_down",
            the_probes_say_503_while_the_worker_shuts_down,
        ),
    ];
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        failed += usize::from(outcome.is_err());
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// This program as the task binary, with `args`.
fn task_binary(args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(args)
        .env(AS_TASK_BINARY, "1")
        .env_remove("PERAGO_WORKER_LOG")
        .env_remove("CONDUCTOR_SERVER_URL");
    cmd
}

fn a_panicking_handler_fails_its_run_and_stderr_holds_only_its_record() {
    let mut child = Child::start(task_binary(&["run", "panics", "--input", "-"]), None);
    assert!(child.write_stdin(br#"{"params": {"song_id": "song-000123"}}"#));
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(1), "{done:?}");
    let payload: Value = serde_json::from_str(&done.stdout).expect("the payload");
    assert_eq!(
        payload,
        json!({"status": "FAILED", "reasonForIncompletion": "task handler panicked: the catalog is on fire"})
    );
    let lines = json_lines(&done.stderr);
    assert_eq!(lines.len(), 1, "{}", done.stderr);
    let detail = &lines[0]["detail"];
    assert_eq!(detail["stage"], "panic");
    assert_eq!(detail["message"], "the catalog is on fire");
    assert!(
        detail["location"]
            .as_str()
            .is_some_and(|l| l.contains("task_binary.rs")),
        "{detail}"
    );
}

/// The worker with its default flags (log on standard error).
fn worker(server: &TestServer) -> Child {
    Child::start(
        task_binary(&["worker", "--conductor-url", &server.base_url()]),
        Some(ADDRESS_SPACE),
    )
}

fn the_worker_logs_a_panicking_handler_in_json_lines_only() {
    let server = TestServer::start();
    let id = server.enqueue("panics", json!({"params": {"song_id": "song-000123"}}));
    let child = worker(&server);
    assert!(server.wait_terminal(1, PATIENCE), "{}", child.stderr());
    let task = server.task(&id).expect("the task");
    assert_eq!(task.status, TaskStatus::Failed);
    assert_eq!(
        task.reason_for_incompletion.as_deref(),
        Some("task handler panicked: the catalog is on fire")
    );
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
    let lines = json_lines(&done.stderr);
    let records = events(&lines, "task_result");
    assert_eq!(records.len(), 1, "{}", done.stderr);
    assert_eq!(records[0]["detail"]["stage"], "panic");
    assert_eq!(events(&lines, "internal_error").len(), 0);
}

fn a_second_sigterm_names_the_task_left_in_progress() {
    let server = TestServer::start();
    let id = server.enqueue("blocks", json!({"params": {"song_id": "song-000123"}}));
    let child = worker(&server);
    assert!(
        server.wait_until(PATIENCE, |s| s
            .task(&id)
            .is_some_and(|t| t.status == TaskStatus::InProgress)),
        "{}",
        child.stderr()
    );
    child.signal("TERM");
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"shutdown_requested\"")),
        "{}",
        child.stderr()
    );
    child.signal("TERM");
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(128 + 15), "{}", done.stderr);
    let lines = json_lines(&done.stderr);
    let left = events(&lines, "task_left_in_progress");
    assert_eq!(left.len(), 1, "{}", done.stderr);
    assert_eq!(left[0]["task_id"], id.as_str());
    assert_eq!(left[0]["task_type"], "blocks");
    assert_eq!(left[0]["reason"], "a second SIGTERM ended the worker");
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::InProgress);
}

/// `GET path` on the metrics listener: status and body.
fn get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.to_owned(),
    )
}

fn the_probes_say_503_while_the_worker_shuts_down() {
    let server = TestServer::start();
    let id = server.enqueue("blocks", json!({"params": {"song_id": "song-000123"}}));
    let child = Child::start(
        task_binary(&[
            "worker",
            "--conductor-url",
            &server.base_url(),
            "--metrics-listen",
            "127.0.0.1:0",
            "--shutdown-grace",
            "1h",
        ]),
        Some(ADDRESS_SPACE),
    );
    assert!(
        server.wait_until(PATIENCE, |s| s
            .task(&id)
            .is_some_and(|t| t.status == TaskStatus::InProgress)),
        "{}",
        child.stderr()
    );
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"metrics_listening\"")),
        "{}",
        child.stderr()
    );
    let stderr = child.stderr();
    let line = stderr
        .lines()
        .find(|l| l.contains("\"metrics_listening\""))
        .expect("the listener's address");
    let addr = json_lines(line)[0]["addr"].as_str().unwrap().to_owned();
    assert_eq!(
        get(&addr, "/healthz"),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    // The server hands the task out before the worker has it in flight: ask until it has.
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let (_, metrics) = get(&addr, "/metrics");
        if metrics.contains("perago_worker_in_flight{task_type=\"blocks\"} 1\n") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{metrics}");
    }
    child.signal("TERM");
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"shutdown_requested\"")),
        "{}",
        child.stderr()
    );
    // The blocked task holds the worker in its grace period: the probes say so.
    let shutting_down =
        r#"{"status":"shutting_down","reasons":["the process is shutting down"]}"#.to_owned();
    assert_eq!(get(&addr, "/healthz"), (503, shutting_down.clone()));
    assert_eq!(get(&addr, "/readyz"), (503, shutting_down));
    child.signal("TERM");
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(128 + 15), "{}", done.stderr);
}
