//! The example binary as users run it: built, started with its default flags first (the log on
//! standard error), against the Conductor test server and its faults, fed hostile inputs,
//! signalled. Time is bounded by generous waits (never sleeps), memory by an address-space
//! limit and the child's peak resident size.

use perago_testserver::process::{Child, Finished, events, json_lines};
use perago_testserver::{Options, RawReply, RetryDelays, Route, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Duration;
use support::{example_binary, example_workspace};

mod support;

const PATIENCE: Duration = Duration::from_secs(120);
/// The address-space limit of every child: generous, since virtual memory runs far ahead of
/// what is resident (thread stacks, allocator arenas).
const ADDRESS_SPACE: u64 = 3 << 30;

fn bin() -> Command {
    let mut cmd = Command::new(example_binary());
    for var in [
        "PERAGO_WORKER_LOG",
        "CONDUCTOR_SERVER_URL",
        "CONDUCTOR_AUTH_TOKEN",
        "PERAGO_MAX_DOCUMENT_BYTES",
        "PERAGO_FAILURE_REASON_MAX_LENGTH",
        "PERAGO_STORE",
        "XDG_DATA_HOME",
        "LAKECTL_SERVER_ENDPOINT_URL",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/e2e-home"));
    cmd
}

/// `perago-example worker --conductor-url URL` and `extra` flags; the log goes where it goes
/// by default, to standard error, and the workspace tasks' store is the default local store
/// (under a `HOME` of the tests' own).
fn worker(server: &TestServer, extra: &[&str]) -> Child {
    let mut cmd = bin();
    cmd.args(["worker", "--conductor-url", &server.base_url()])
        .args(extra);
    Child::start(cmd, Some(ADDRESS_SPACE))
}

fn song(id: &str) -> Value {
    json!({"params": {"song_id": id}})
}

/// A task input whose params hold a million keys `k0`, `k1`, … that validate_song does not
/// know.
fn million_unknown_keys() -> Value {
    let many: serde_json::Map<String, Value> = (0..1_000_000)
        .map(|i| (format!("k{i}"), Value::from(i)))
        .collect();
    json!({"params": many})
}

// ---------------------------------------------------------------------------------------------
// The worker.

/// The documented command, as a newcomer runs it: it once hung on its first task, blocked on
/// the standard error lock that `main` held.
#[test]
fn the_worker_with_default_flags_completes_tasks_and_stops_on_sigterm() {
    let server = TestServer::start();
    let ids: Vec<String> = (0..3)
        .map(|_| server.enqueue("validate_song", song("song-000123")))
        .collect();
    let child = worker(&server, &[]);
    assert!(server.wait_terminal(3, PATIENCE), "{}", child.stderr());
    for id in &ids {
        assert_eq!(server.task(id).unwrap().status, TaskStatus::Completed);
    }
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
    let lines = json_lines(&done.stderr);
    for event in ["worker_started", "shutdown_requested", "worker_stopped"] {
        assert_eq!(events(&lines, event).len(), 1, "{event}\n{}", done.stderr);
    }
    assert_eq!(events(&lines, "task_result").len(), 3);
    assert_eq!(events(&lines, "worker_stopped")[0]["completed"], 3);
}

/// A workspace task end to end, as a deployment runs it: the worker with its default flags
/// and lakeFS configured through lakectl's variables, against the Conductor test server and
/// the lakeFS test server together. The read-write task publishes, the read-only one keeps its
/// ref, and the secret shows nowhere.
#[test]
fn workspace_tasks_against_conductor_and_lakefs_together() {
    use perago_testserver::lakefs::LakeFsServer;
    use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
    use perago_workspace::{Metadata, Store, transfer};

    let lakefs = LakeFsServer::start();
    lakefs.create_repository("song-000123", "main").unwrap();
    let settings = LakeFsSettings::new(
        &lakefs.base_url(),
        lakefs.access_key_id(),
        lakefs.secret_access_key(),
    )
    .unwrap();
    let client = LakeFs::new(settings).unwrap();
    let base = transfer::import(
        &client,
        "song-000123",
        "main",
        &example_workspace(),
        "",
        "example",
        &Metadata::new(),
    )
    .unwrap()
    .unwrap()
    .id
    .to_string();
    let workspace = json!({"repository": "song-000123", "branch": "main", "ref_type": "commit",
                           "ref": base});
    let server = TestServer::start();
    let publish = server.enqueue(
        "publish_features",
        json!({"workspace": workspace, "params": {"feature_set": "default"}}),
    );
    let build = server.enqueue(
        "build_features",
        json!({"workspace": workspace, "params": {"feature_set": "default", "min_rows": 100}}),
    );
    let secret = lakefs.secret_access_key().to_owned();
    let mut cmd = bin();
    cmd.args(["worker", "--conductor-url", &server.base_url()])
        .env("LAKECTL_SERVER_ENDPOINT_URL", lakefs.base_url())
        .env("LAKECTL_CREDENTIALS_ACCESS_KEY_ID", lakefs.access_key_id())
        .env("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY", &secret);
    let child = Child::start(cmd, Some(ADDRESS_SPACE));
    assert!(server.wait_terminal(2, PATIENCE), "{}", child.stderr());
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);

    let published = server.task(&publish).unwrap();
    assert_eq!(published.status, TaskStatus::Completed, "{}", done.stderr);
    let head = lakefs.head("song-000123", "main").unwrap();
    assert_ne!(head, base);
    assert_eq!(published.output_data["workspace"]["ref"], head.as_str());
    let merge = client.get_commit("song-000123", &head).unwrap();
    assert_eq!(merge.parents[0].as_str(), base);
    assert!(
        lakefs
            .object("song-000123", &head, "features/summaries/default.json")
            .is_some()
    );
    let built = server.task(&build).unwrap();
    assert_eq!(built.status, TaskStatus::Completed);
    assert_eq!(built.output_data["workspace"]["ref"], base.as_str());
    assert!(!done.stderr.contains(&secret));
    for task in [&published, &built] {
        assert!(!task.output_data.to_string().contains(&secret));
    }
}

/// When neither Conductor nor the log takes a result, the worker says so on standard error,
/// with the result, stops polling and exits non-zero.
#[test]
fn a_result_neither_delivered_nor_logged_stops_the_worker_loudly() {
    let server = TestServer::start();
    server.fail_next(Route::UpdateTask, 100_000, 500);
    let first = server.enqueue("validate_song", song("song-000123"));
    let second = server.enqueue("validate_song", song("song-000124"));
    let child = worker(
        &server,
        &["--log", "/dev/full", "--update-retry-horizon", "300ms"],
    );
    let done = child.wait(PATIENCE);
    assert_eq!(done.code(), Some(1), "{}", done.stderr);
    assert!(
        done.stderr
            .contains("cannot write the log (No space left on device"),
        "{}",
        done.stderr
    );
    let lost = done
        .stderr
        .lines()
        .find(|l| l.contains("neither delivered to Conductor nor logged"))
        .unwrap_or_else(|| panic!("{}", done.stderr));
    let event: Value = serde_json::from_str(&lost[lost.find('{').unwrap()..]).unwrap();
    assert_eq!(event["event"], "update_failed");
    assert_eq!(event["task_id"], first.as_str());
    assert_eq!(event["result"]["status"], "COMPLETED");
    assert_eq!(event["result"]["outputData"]["result"]["valid"], true);
    // Polling stopped: the second task was never handed out.
    assert_eq!(server.task(&second).unwrap().status, TaskStatus::Scheduled);
}

/// A poll answer that takes longer than the request timeout to arrive, but keeps arriving, is
/// read whole: its task runs.
#[test]
fn a_slow_poll_answer_is_read_whole() {
    let server = TestServer::start();
    let id = server.enqueue("validate_song", song("song-000123"));
    server.slow_body_next(Route::Poll, 1, Duration::from_secs(3));
    let child = worker(
        &server,
        &["--task", "validate_song", "--request-timeout", "1s"],
    );
    assert!(server.wait_terminal(1, PATIENCE), "{}", child.stderr());
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Completed);
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
    assert!(events(&json_lines(&done.stderr), "poll_error").is_empty());
}

/// A poll answer that stalls is given up after the request timeout, and the worker goes on.
/// The tasks the server handed out in it are left `IN_PROGRESS`; the log says so, by id when
/// the ids were read (Conductor sends a task's inputData before its ids).
#[test]
fn a_poll_answer_that_stalls_is_logged_with_what_it_left() {
    let server = TestServer::start();
    let id = server.enqueue("validate_song", song("song-000123"));
    server.slow_body_next(Route::Poll, 1, Duration::from_secs(600));
    // One task type, so that the stalled answer is the one handing out the task.
    let child = worker(
        &server,
        &["--task", "validate_song", "--request-timeout", "500ms"],
    );
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"task_left_in_progress\"")),
        "{}",
        child.stderr()
    );
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{}", done.stderr);
    let lines = json_lines(&done.stderr);
    let error = events(&lines, "poll_error")[0];
    assert!(
        error["error"].as_str().unwrap().contains("timed out"),
        "{error}"
    );
    let left = events(&lines, "task_left_in_progress")[0];
    assert_eq!(left["task_type"], error["task_type"]);
    assert!(
        left["reason"]
            .as_str()
            .unwrap()
            .starts_with("the poll reached the server but its answer was not read whole"),
        "{left}"
    );
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::InProgress);
}

/// Eight tasks of 16 MB input each, in one poll answer, all run; the worker's memory stays
/// within a small multiple of the answer.
#[test]
fn eight_large_tasks_in_one_poll_answer_all_run() {
    let server = TestServer::start();
    let big = "x".repeat(16 << 20);
    for _ in 0..8 {
        server.enqueue("validate_song", json!({"params": {"song_id": big}}));
    }
    drop(big);
    let child = worker(&server, &["--concurrency", "8"]);
    assert!(
        server.wait_terminal(8, PATIENCE),
        "{:.2000}",
        child.stderr()
    );
    let peak = child.peak_rss_kib();
    for task in server.tasks() {
        // The song is not in the catalog: a terminal error, whose reason is cut to 500.
        assert_eq!(task.status, TaskStatus::FailedWithTerminalError);
        assert!(task.reason_for_incompletion.unwrap().chars().count() <= 500);
    }
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{:.2000}", done.stderr);
    let peak = peak.expect("the worker's peak memory");
    assert!(peak < 1_500_000, "peak resident memory {peak} KiB");
}

/// Hostile inputs fail their task with a short reason; the log record stays small.
#[test]
fn hostile_task_inputs_fail_their_task_with_bounded_records() {
    let server = TestServer::start();
    let wide = server.enqueue("validate_song", million_unknown_keys());
    let deep = server.enqueue(
        "validate_song",
        json!({"params": {"song_id": "song-000123", "x": (0..100).fold(json!(1), |v, _| json!([v]))}}),
    );
    let child = worker(&server, &[]);
    assert!(
        server.wait_terminal(2, PATIENCE),
        "{:.2000}",
        child.stderr()
    );
    let peak = child.peak_rss_kib().expect("the worker's peak memory");
    let task = server.task(&wide).unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    assert_eq!(
        task.reason_for_incompletion.as_deref(),
        Some("$.params.k0: unknown field")
    );
    assert_eq!(server.task(&deep).unwrap().status, TaskStatus::Failed);
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0));
    let longest = done.stderr.lines().map(str::len).max().unwrap();
    assert!(longest <= 1 << 20, "a log line of {longest} bytes");
    let lines = json_lines(&done.stderr);
    let record = events(&lines, "task_result")
        .into_iter()
        .find(|r| r["task_id"] == wide.as_str())
        .expect("the wide task's record");
    assert_eq!(
        record["detail"]["violations"].as_array().unwrap().len(),
        100
    );
    assert_eq!(record["detail"]["violations_omitted"], 1_000_001 - 100);
    assert!(peak < 1_000_000, "peak resident memory {peak} KiB");
}

/// A repeated key in inputData fails the task at its path (the server's answer is written
/// by hand: a JSON value cannot hold one).
#[test]
fn a_repeated_key_in_the_input_fails_the_task_at_its_path() {
    let server = TestServer::start();
    server.reply_next(
        Route::Poll,
        1,
        RawReply::json(
            200,
            r#"[{"taskId": "t-dup", "workflowInstanceId": "w-dup", "taskType": "validate_song",
                 "inputData": {"params": {"song_id": "song-000124", "song_id": "song-000123"}}}]"#,
        ),
    );
    let child = worker(&server, &[]);
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"t-dup\"")
            && e.contains("task_result")),
        "{}",
        child.stderr()
    );
    let done = child.stop(PATIENCE);
    let lines = json_lines(&done.stderr);
    let record = events(&lines, "task_result")[0];
    assert_eq!(record["status"], "FAILED");
    assert_eq!(
        record["reason"],
        "task input: $.params.song_id: duplicate field"
    );
}

/// Odd poll answers are logged as what they are, and polling goes on.
#[test]
fn odd_poll_answers_are_logged_and_polling_goes_on() {
    let server = TestServer::start_with(Options {
        empty_batch_poll_204: true,
        ..Options::default()
    });
    server.reply_next(Route::Poll, 1, RawReply::json(200, "null"));
    server.reply_next(Route::Poll, 1, RawReply::json(200, ""));
    server.reply_next(
        Route::Poll,
        1,
        RawReply::new(302).header("Location", "https://sso.example/login"),
    );
    let child = worker(&server, &[]);
    assert!(
        child.wait_stderr(PATIENCE, |e| e.matches("\"poll_error\"").count() >= 3),
        "{}",
        child.stderr()
    );
    // 204s (an empty queue on older servers) are not errors.
    let id = server.enqueue("validate_song", song("song-000125"));
    assert!(server.wait_terminal(1, PATIENCE), "{}", child.stderr());
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Completed);
    let done = child.stop(PATIENCE);
    let lines = json_lines(&done.stderr);
    let errors: Vec<&str> = events(&lines, "poll_error")
        .iter()
        .map(|e| e["error"].as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    // Both task types poll: which one met which answer, and logged it first, varies.
    for said in [
        "null is not a poll answer (expected a JSON array of tasks, or 204)",
        "an empty body is not a poll answer (expected a JSON array of tasks, or 204)",
        "HTTP 302 (a redirect to https://sso.example/login; perago does not follow redirects: \
         give the Conductor server's own URL)",
    ] {
        assert_eq!(
            errors.iter().filter(|e| e.ends_with(said)).count(),
            1,
            "{said}: {errors:#?}"
        );
    }
    assert!(!events(&lines, "poll_recovered").is_empty());
}

/// Conductor's decider retries a FAILED task as a new task; each attempt runs and fails.
#[test]
fn each_retry_of_a_failed_task_runs() {
    let server = TestServer::start();
    server.enable_retries(RetryDelays::Immediate);
    let id = server.enqueue("validate_song", json!({"params": {}}));
    let child = worker(&server, &[]);
    assert!(server.wait_final(1, PATIENCE), "{}", child.stderr());
    let attempts = server.attempts(&id);
    // No TaskDef is registered: Conductor's ad-hoc one retries 3 times.
    assert_eq!(attempts.len(), 4);
    assert!(attempts.iter().all(|t| t.status == TaskStatus::Failed));
    assert_eq!(attempts[3].retry_count, 3);
    let done = child.stop(PATIENCE);
    assert_eq!(events(&json_lines(&done.stderr), "task_result").len(), 4);
}

// ---------------------------------------------------------------------------------------------
// run, taskdefs, publish.

fn run(input: &[u8]) -> Finished {
    let mut cmd = bin();
    cmd.args(["run", "validate_song", "--input", "-"]);
    Child::run(cmd, Some(ADDRESS_SPACE), input, PATIENCE)
}

#[test]
fn run_refuses_hostile_input_files_with_exit_2_and_a_reason() {
    let deep = "[".repeat(100_000);
    for (name, input, reason) in [
        (
            "invalid UTF-8",
            &b"{\"params\": {\"song_id\": \"\xff\"}}"[..],
            "invalid unicode",
        ),
        (
            "NaN",
            &b"{\"params\": {\"song_id\": NaN}}"[..],
            "expected value",
        ),
        ("100k nesting", deep.as_bytes(), "recursion limit exceeded"),
        (
            "a BOM",
            "\u{feff}{\"params\": {}}".as_bytes(),
            "byte order mark",
        ),
        (
            "a repeated key",
            &br#"{"params": {"song_id": "a", "song_id": "b"}}"#[..],
            "the key \"song_id\" appears twice",
        ),
    ] {
        let done = run(input);
        assert_eq!(done.code(), Some(2), "{name}: {}", done.stderr);
        assert!(
            done.stderr.contains("-: not a JSON document: ") && done.stderr.contains(reason),
            "{name}: {}",
            done.stderr
        );
    }
}

#[test]
fn run_reads_at_most_the_document_limit() {
    let mut cmd = bin();
    cmd.args(["run", "validate_song", "--input", "/dev/zero"]);
    let done = Child::start(cmd, Some(ADDRESS_SPACE)).wait(PATIENCE);
    assert_eq!(done.code(), Some(2), "{}", done.stderr);
    assert_eq!(
        done.stderr,
        "perago-example: /dev/zero: the document is larger than the limit of 64 MiB (raise it \
         with --max-document-bytes or PERAGO_MAX_DOCUMENT_BYTES)\n"
    );
    let mut cmd = bin();
    cmd.args(["run", "validate_song", "--input", "-"])
        .env("PERAGO_MAX_DOCUMENT_BYTES", "10");
    let done = Child::run(
        cmd,
        Some(ADDRESS_SPACE),
        br#"{"params": {"song_id": "song-000123"}}"#,
        PATIENCE,
    );
    assert_eq!(done.code(), Some(2));
    assert!(done.stderr.contains("limit of 10 bytes"), "{}", done.stderr);
}

#[test]
fn run_fails_a_million_unknown_keys_with_a_bounded_record() {
    let done = run(million_unknown_keys().to_string().as_bytes());
    assert_eq!(done.code(), Some(1), "{:.2000}", done.stderr);
    assert!(done.stderr.len() < 1 << 20, "{} bytes", done.stderr.len());
    let record: Value = serde_json::from_str(&done.stderr).unwrap();
    assert_eq!(record["detail"]["violations_omitted"], 1_000_001 - 100);
}

/// `taskdefs | head`: a reader that stops early ends the command quietly.
#[test]
fn taskdefs_into_a_closed_pipe_ends_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = bin()
        .arg("taskdefs")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `publish` finds the server where the worker does: `CONDUCTOR_SERVER_URL`.
#[test]
fn publish_reads_the_server_from_the_environment() {
    let server = TestServer::start();
    let out = bin()
        .args(["publish", "--dry-run"])
        .env("CONDUCTOR_SERVER_URL", server.base_url())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.method == "GET" && r.path.starts_with("/api/metadata/taskdef")),
        "{:?}",
        server.requests()
    );
    let out = bin().args(["publish", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("give --conductor-url URL or set CONDUCTOR_SERVER_URL")
    );
}
