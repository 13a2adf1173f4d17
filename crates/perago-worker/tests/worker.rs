//! The worker end to end against the Conductor-compatible test server: the example tasks and
//! test tasks built from the same generated types, through `perago_worker::worker::Worker` (and once
//! through the binary's `worker` subcommand and SIGTERM).
//!
//! No test sleeps: they wait on the server's state, on the worker's log or on a handler's
//! gate, each with a generous timeout. Only the lease test's handler sleeps, on purpose, past
//! its task's response timeout.

use perago::task::{Registry, TaskError};
use perago_example::contracts::publish_features_params::PublishFeaturesParams;
use perago_example::contracts::publish_features_result::PublishFeaturesResult;
use perago_example::contracts::validate_song_params::ValidateSongParams;
use perago_example::contracts::validate_song_result::ValidateSongResult;
use perago_example::validate_song;
use perago_testserver::process::{Child, events, json_lines};
use perago_testserver::{Route, TaskSpec, TaskStatus, TestServer};
use perago_worker::worker::{Backoff, Summary, Worker, WorkerConfig};
use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, Store, transfer};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;
use support::{example_binary, example_dir, example_workspace};

mod support;

/// How long any wait may take before the test fails (never reached when things work).
const PATIENCE: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// Test tasks.

/// Blocks its handlers until a test opens it; counts them.
struct Gate {
    state: Mutex<(bool, usize, usize)>, // open, running, most running at once
    changed: Condvar,
}

impl Gate {
    const fn new() -> Gate {
        Gate {
            state: Mutex::new((false, 0, 0)),
            changed: Condvar::new(),
        }
    }

    fn pass(&self) {
        let mut st = self.state.lock().unwrap();
        st.1 += 1;
        st.2 = st.2.max(st.1);
        self.changed.notify_all();
        while !st.0 {
            st = self.changed.wait(st).unwrap();
        }
        st.1 -= 1;
        self.changed.notify_all();
    }

    fn open(&self) {
        self.state.lock().unwrap().0 = true;
        self.changed.notify_all();
    }

    /// Waits until `n` handlers are inside.
    fn wait_running(&self, n: usize) {
        let st = self.state.lock().unwrap();
        let (st, timeout) = self
            .changed
            .wait_timeout_while(st, PATIENCE, |st| st.1 < n)
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "{} handlers running, expected {n}",
            st.1
        );
    }

    fn max_running(&self) -> usize {
        self.state.lock().unwrap().2
    }
}

fn ok_result() -> ValidateSongResult {
    ValidateSongResult {
        valid: true,
        reason: None,
    }
}

#[perago::task(name = "panics")]
fn panics(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    panic!("no song {} in the index", params.song_id)
}

/// Runs until the test opens its gate: past its task's response timeout, as long as the test
/// needs to see the worker renew the lease.
static SLOW_GATE: Gate = Gate::new();
#[perago::task(name = "slow")]
fn slow(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    SLOW_GATE.pass();
    Ok(ok_result())
}

static SLOTS_GATE: Gate = Gate::new();
#[perago::task(name = "gated_slots")]
fn gated_slots(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    SLOTS_GATE.pass();
    Ok(ok_result())
}

static TRICKLE_GATE: Gate = Gate::new();
#[perago::task(name = "gated_trickle")]
fn gated_trickle(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    TRICKLE_GATE.pass();
    Ok(ok_result())
}

static SHUTDOWN_GATE: Gate = Gate::new();
#[perago::task(name = "gated_shutdown")]
fn gated_shutdown(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    SHUTDOWN_GATE.pass();
    Ok(ok_result())
}

static ABANDON_GATE: Gate = Gate::new();
#[perago::task(name = "gated_abandon")]
fn gated_abandon(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    ABANDON_GATE.pass();
    Ok(ok_result())
}

static PUBLISH_GATE: Gate = Gate::new();
/// A read-write task that writes a summary, then waits at its gate before it publishes.
#[perago::task(name = "gated_publisher", workspace(prefix = "features/", access = read_write))]
fn gated_publisher(
    ws: &mut perago::workspace::Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    std::fs::create_dir_all(ws.path("summaries"))?;
    std::fs::write(ws.path("summaries/gated.json"), &params.feature_set)?;
    PUBLISH_GATE.pass();
    Ok(PublishFeaturesResult {
        summary: "summaries/gated.json".to_owned(),
        files: 1,
        row_count: 0,
        feature_count: 0,
    })
}

/// Counts its calls (the 200-task test).
static NOOP_CALLS: AtomicUsize = AtomicUsize::new(0);
#[perago::task(name = "noop")]
fn noop(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    NOOP_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(ok_result())
}

// ---------------------------------------------------------------------------------------------
// Harness.

/// The worker's log, in memory; tests wait on it.
#[derive(Clone, Default)]
struct Log(Arc<(Mutex<Vec<u8>>, Condvar)>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.0.lock().unwrap().extend_from_slice(buf);
        self.0.1.notify_all();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn parse(bytes: &[u8]) -> Vec<Value> {
        json_lines(&String::from_utf8_lossy(bytes))
    }

    fn lines(&self) -> Vec<Value> {
        Log::parse(&self.0.0.lock().unwrap())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.0.lock().unwrap()).into_owned()
    }

    fn events(&self, event: &str) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["event"] == event)
            .collect()
    }

    /// Waits until a line's `event` is `event`.
    fn wait_for(&self, event: &str) {
        let buf = self.0.0.lock().unwrap();
        let (buf, timeout) = self
            .0
            .1
            .wait_timeout_while(buf, PATIENCE, |buf| {
                !Log::parse(buf).iter().any(|l| l["event"] == event)
            })
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "no {event} in the log:\n{}",
            String::from_utf8_lossy(&buf)
        );
    }
}

struct Running {
    shutdown: perago_worker::worker::ShutdownHandle,
    thread: std::thread::JoinHandle<Summary>,
    log: Log,
}

impl Running {
    fn stop(self) -> (Summary, Log) {
        self.shutdown.shutdown();
        (self.thread.join().unwrap(), self.log)
    }
}

/// The commit the example inputs name, which no store of these tests has.
const SEED_REF: &str = "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3";

/// One local store for this file's tests, under the target directory: the example's workspace
/// imported into `song-000123`. Its commit replaces the contract's example commit in every input.
fn example_store() -> &'static (PathBuf, Arc<dyn Store>, String) {
    static STORE: OnceLock<(PathBuf, Arc<dyn Store>, String)> = OnceLock::new();
    STORE.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worker-example-store");
        let _ = std::fs::remove_dir_all(&root);
        let store = LocalStore::open(&root).unwrap();
        store.create_repository("song-000123", "main").unwrap();
        let commit = transfer::import(
            &store,
            "song-000123",
            "main",
            &example_workspace(),
            "",
            "example",
            &Metadata::new(),
        )
        .unwrap()
        .unwrap();
        (root, Arc::new(store), commit.id.to_string())
    })
}

/// Fast settings for tests: short long polls, quick backoffs.
fn config(server: &TestServer) -> WorkerConfig {
    let mut config = WorkerConfig::new(server.base_url());
    config.worker_id = "test-worker".to_owned();
    config.poll_timeout = Duration::from_millis(200);
    config.poll_interval = Duration::from_millis(5);
    config.poll_backoff = Backoff {
        initial: Duration::from_millis(5),
        max: Duration::from_millis(50),
    };
    config.update_backoff = Backoff {
        initial: Duration::from_millis(5),
        max: Duration::from_millis(50),
    };
    config.shutdown_grace = Duration::from_secs(30);
    config.store = Some(Arc::clone(&example_store().1));
    config
}

fn start(registry: &Registry, config: WorkerConfig) -> Running {
    let log = Log::default();
    let worker = Worker::new(registry, config, Worker::log_to(log.clone())).unwrap();
    let shutdown = worker.shutdown_handle();
    let thread = std::thread::spawn(move || worker.run());
    Running {
        shutdown,
        thread,
        log,
    }
}

/// An example input, naming the commit of [`example_store`].
fn input(name: &str) -> Value {
    let path = example_dir().join("inputs").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text.replace(SEED_REF, &example_store().2)).unwrap()
}

fn params(song_id: &str) -> Value {
    json!({"params": {"song_id": song_id}})
}

fn wait_terminal(server: &TestServer, count: usize) {
    assert!(
        server.wait_terminal(count, PATIENCE),
        "fewer than {count} tasks are terminal: {:#?}",
        server
            .tasks()
            .iter()
            .map(|t| (&t.task_id, &t.task_type, t.status))
            .collect::<Vec<_>>()
    );
}

/// The `POST /api/tasks` bodies of a task that reported an outcome (not lease extensions).
fn results(server: &TestServer, task_id: &str) -> Vec<Value> {
    server
        .task(task_id)
        .unwrap()
        .updates
        .into_iter()
        .filter(|u| u.get("extendLease") != Some(&Value::Bool(true)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The contract's example payloads through a real poll/update cycle.

#[test]
fn valid_inputs_complete_with_the_seeds_output() {
    let server = TestServer::start();
    let song = server.enqueue("validate_song", input("validate_song.json"));
    let defaults = server.enqueue("validate_song", input("validate_song-defaults.json"));
    let features = server.enqueue("build_features", input("build_features.json"));
    let worker = start(&perago_example::registry(), config(&server));
    wait_terminal(&server, 3);
    let (summary, log) = worker.stop();

    let expect = [
        (&song, json!({"result": {"valid": true, "reason": null}})),
        (
            &defaults,
            json!({"result": {"valid": false, "reason": "duration 21s is below the minimum of 30s"}}),
        ),
        (
            &features,
            json!({
                "workspace": {
                    "repository": "song-000123",
                    "branch": "main",
                    "ref_type": "commit",
                    "ref": example_store().2,
                },
                "result": {"row_count": 100, "feature_count": 24}
            }),
        ),
    ];
    for (id, output) in expect {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, TaskStatus::Completed, "{id}");
        assert_eq!(task.output_data, output, "{id}");
        assert_eq!(task.reason_for_incompletion, None);
        let sent = results(&server, id);
        assert_eq!(sent.len(), 1, "{sent:?}");
        let body = &sent[0];
        assert_eq!(body["status"], "COMPLETED");
        assert_eq!(body["taskId"], id.as_str());
        assert_eq!(
            body["workflowInstanceId"],
            task.workflow_instance_id.as_str()
        );
        assert_eq!(body["workerId"], "test-worker");
        assert_eq!(body["outputData"], output);
        assert!(body.get("reasonForIncompletion").is_none(), "{body}");
    }
    assert_eq!(
        (summary.completed, summary.failed, summary.unreported),
        (3, 0, 0)
    );

    let records = log.events("task_result");
    assert_eq!(records.len(), 3);
    let ids: HashSet<&str> = records
        .iter()
        .filter_map(|r| r["task_id"].as_str())
        .collect();
    assert_eq!(
        ids,
        HashSet::from([song.as_str(), defaults.as_str(), features.as_str()])
    );
    let started = &log.events("worker_started")[0];
    assert_eq!(started["worker_id"], "test-worker");
    assert_eq!(
        started["tasks"],
        json!([{"task_type": "validate_song", "concurrency": 1},
               {"task_type": "build_features", "concurrency": 1},
               {"task_type": "publish_features", "concurrency": 1}])
    );
    assert_eq!(log.events("worker_stopped")[0]["completed"], 3);
    // Every poll names the worker and asks for at most the free slots, within Conductor's cap.
    for poll in server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/api/tasks/poll/batch/"))
    {
        assert_eq!(poll.query_param("workerid").as_deref(), Some("test-worker"));
        assert_eq!(poll.query_param("count").as_deref(), Some("1"));
        assert_eq!(poll.query_param("timeout").as_deref(), Some("200"));
    }
}

#[test]
fn each_input_error_fails_with_the_seeds_status_and_reason() {
    let cases = [
        (
            "build_features-empty-workspace-field.json",
            TaskStatus::Failed,
            "$.workspace.branch: must be at least 1 character long",
        ),
        (
            "build_features-extra-key.json",
            TaskStatus::Failed,
            "workspace task input must contain only workspace and params",
        ),
        (
            "build_features-missing-workspace.json",
            TaskStatus::Failed,
            "workspace task input must contain workspace and params; missing workspace",
        ),
        (
            "build_features-nested-extra.json",
            TaskStatus::Failed,
            "$.params.columns.include: unknown field",
        ),
        (
            "build_features-ref-type.json",
            TaskStatus::Failed,
            "$.workspace.ref_type: must be \"commit\"",
        ),
        (
            "build_features-too-few-rows.json",
            TaskStatus::FailedWithTerminalError,
            "feature set minimal has 10 rows; min_rows=100",
        ),
        (
            "validate_song-params-spread.json",
            TaskStatus::Failed,
            "workspace-free task input must contain only params",
        ),
        (
            "validate_song-params.json",
            TaskStatus::Failed,
            "$.params.strict: unknown field",
        ),
        (
            "validate_song-unknown-song.json",
            TaskStatus::FailedWithTerminalError,
            "song song-999999 is not in the catalog",
        ),
        (
            "validate_song-with-workspace.json",
            TaskStatus::Failed,
            "workspace-free task input must contain only params",
        ),
    ];
    let server = TestServer::start();
    let ids: Vec<String> = cases
        .iter()
        .map(|(file, _, _)| {
            let task_type = file.split('-').next().unwrap();
            server.enqueue(task_type, input(&format!("invalid/{file}")))
        })
        .collect();
    let mut config = config(&server);
    config.concurrency = 4;
    let worker = start(&perago_example::registry(), config);
    wait_terminal(&server, cases.len());
    let (summary, log) = worker.stop();

    for ((file, status, reason), id) in cases.iter().zip(&ids) {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, *status, "{file}");
        assert_eq!(
            task.reason_for_incompletion.as_deref(),
            Some(*reason),
            "{file}"
        );
        assert_eq!(task.output_data, json!({}), "{file}");
        let body = &results(&server, id)[0];
        assert_eq!(body["outputData"], json!({}), "{file}");
        assert_eq!(body["reasonForIncompletion"], *reason, "{file}");
    }
    // Every violation of validate_song-params.json is in the result's logs, beyond the reason.
    let params_id = &ids[7];
    let logs: Vec<Value> = results(&server, params_id)[0]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["log"].clone())
        .collect();
    assert_eq!(
        logs,
        [
            "$.params.strict: unknown field",
            "$.params.song_id: must be at least 1 character long",
            "$.params.min_duration_seconds: must be an integer, found a string"
        ]
    );
    assert_eq!(summary.failed, cases.len() as u64);
    // The log record has the full detail.
    let record = log
        .events("task_result")
        .into_iter()
        .find(|r| r["task_id"] == params_id.as_str())
        .unwrap();
    assert_eq!(record["detail"]["stage"], "params");
    assert_eq!(record["detail"]["violations"].as_array().unwrap().len(), 3);
}

// ---------------------------------------------------------------------------------------------
// Concurrency.

#[test]
fn two_hundred_tasks_of_two_types_with_concurrency_8_complete_exactly_once() {
    let server = TestServer::start();
    let songs = ["song-000123", "song-000124", "song-000125"];
    let mut ids = Vec::new();
    for i in 0..100 {
        ids.push(server.enqueue("noop", params(songs[i % 3])));
        ids.push(server.enqueue("validate_song", params(songs[i % 3])));
    }
    let mut config = config(&server);
    config.concurrency = 8;
    let registry = perago::tasks![noop, validate_song];
    let worker = start(&registry, config);
    wait_terminal(&server, 200);
    let (summary, log) = worker.stop();

    for id in &ids {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, TaskStatus::Completed, "{id}");
        assert_eq!(task.poll_count, 1, "{id} was handed out more than once");
        assert_eq!(
            results(&server, id).len(),
            1,
            "{id} was reported more than once"
        );
    }
    assert_eq!(NOOP_CALLS.load(Ordering::SeqCst), 100);
    assert_eq!(summary.completed, 200);
    let records = log.events("task_result");
    let unique: HashSet<&str> = records
        .iter()
        .filter_map(|r| r["task_id"].as_str())
        .collect();
    assert_eq!((records.len(), unique.len()), (200, 200));
    for poll in server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/api/tasks/poll/batch/"))
    {
        let count: usize = poll.query_param("count").unwrap().parse().unwrap();
        assert!((1..=8).contains(&count), "{poll:?}");
    }
}

#[test]
fn no_more_is_polled_than_can_run() {
    let server = TestServer::start();
    let ids: Vec<String> = (0..7)
        .map(|_| server.enqueue("gated_slots", params("song-000123")))
        .collect();
    let mut config = config(&server);
    config.concurrency = 3;
    let worker = start(&perago::tasks![gated_slots], config);
    SLOTS_GATE.wait_running(3);
    // Three handed out, four still queued: the poller waits for a slot instead of polling.
    assert!(server.wait_until(PATIENCE, |s| s.queue_size("gated_slots") == 4));
    SLOTS_GATE.open();
    wait_terminal(&server, ids.len());
    let (summary, _) = worker.stop();
    assert_eq!(summary.completed, 7);
    assert!(
        SLOTS_GATE.max_running() <= 3,
        "{}",
        SLOTS_GATE.max_running()
    );
    for poll in server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/api/tasks/poll/batch/"))
    {
        let count: usize = poll.query_param("count").unwrap().parse().unwrap();
        assert!((1..=3).contains(&count), "{poll:?}");
    }
}

#[test]
fn tasks_arriving_one_by_one_run_side_by_side() {
    let server = TestServer::start();
    let mut config = config(&server);
    config.concurrency = 3;
    let worker = start(&perago::tasks![gated_trickle], config);
    // Each arrives while the ones before it block their threads: an idle thread must poll.
    for n in 1..=3 {
        server.enqueue("gated_trickle", params("song-000123"));
        TRICKLE_GATE.wait_running(n);
    }
    TRICKLE_GATE.open();
    wait_terminal(&server, 3);
    let (summary, _) = worker.stop();
    assert_eq!(summary.completed, 3);
}

// ---------------------------------------------------------------------------------------------
// Failures: handlers, updates, the server.

#[test]
fn a_panicking_handler_fails_its_task_and_the_worker_goes_on() {
    let server = TestServer::start();
    let panicked = server.enqueue("panics", params("song-42"));
    let again = server.enqueue("panics", params("song-43"));
    let fine = server.enqueue("validate_song", params("song-000123"));
    let worker = start(&perago::tasks![panics, validate_song], config(&server));
    wait_terminal(&server, 3);
    let (summary, _) = worker.stop();
    for (id, song) in [(&panicked, "song-42"), (&again, "song-43")] {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, TaskStatus::Failed);
        assert_eq!(
            task.reason_for_incompletion.unwrap(),
            format!("task handler panicked: no song {song} in the index")
        );
    }
    assert_eq!(server.task(&fine).unwrap().status, TaskStatus::Completed);
    assert_eq!(
        (summary.completed, summary.failed, summary.internal_errors),
        (1, 2, 0)
    );
}

#[test]
fn updates_answered_500_or_dropped_for_a_while_lose_no_result() {
    let server = TestServer::start();
    server.fail_next(Route::UpdateTask, 4, 500);
    server.drop_next(Route::UpdateTask, 2);
    let ids: Vec<String> = (0..3)
        .map(|_| server.enqueue("validate_song", params("song-000123")))
        .collect();
    let worker = start(&perago::tasks![validate_song], config(&server));
    wait_terminal(&server, 3);
    let (summary, log) = worker.stop();
    for id in &ids {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(
            task.output_data,
            json!({"result": {"valid": true, "reason": null}})
        );
    }
    assert_eq!((summary.completed, summary.unreported), (3, 0));
    let retries = log.events("update_retry");
    assert_eq!(retries.len(), 6, "{retries:#?}");
    let errors: Vec<&str> = retries
        .iter()
        .map(|r| r["error"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors.iter().filter(|e| e.contains("HTTP 500")).count(),
        4,
        "{errors:#?}"
    );
    assert!(log.events("update_failed").is_empty());
}

#[test]
fn a_result_that_cannot_be_delivered_is_logged_whole() {
    let server = TestServer::start();
    server.fail_next(Route::UpdateTask, 1000, 503);
    let id = server.enqueue("validate_song", params("song-000123"));
    let mut config = config(&server);
    // Long enough for a second attempt on a loaded machine (the first fails at once, the next
    // comes 5 ms later); the backoff (5 ms doubling to 50 ms) makes ~25 attempts in it, far
    // fewer than the 1000 injected faults.
    config.update_horizon = Duration::from_secs(1);
    let worker = start(&perago::tasks![validate_song], config);
    worker.log.wait_for("update_failed");
    server.clear_faults();
    let (summary, log) = worker.stop();
    assert_eq!((summary.completed, summary.unreported), (1, 1));
    let failed = &log.events("update_failed")[0];
    assert_eq!(failed["task_id"], id.as_str());
    // Retried until the horizon: how often depends on the clock, each retry is logged.
    let attempts = failed["attempts"].as_u64().unwrap();
    assert!(attempts >= 2, "{failed}");
    assert_eq!(log.events("update_retry").len() as u64, attempts - 1);
    assert_eq!(failed["http_status"], 503);
    let task = server.task(&id).unwrap();
    assert_eq!(
        failed["result"],
        json!({
            "workflowInstanceId": task.workflow_instance_id,
            "taskId": id,
            "status": "COMPLETED",
            "outputData": {"result": {"valid": true, "reason": null}},
            "workerId": "test-worker"
        })
    );
    assert_eq!(task.status, TaskStatus::InProgress);
}

#[test]
fn the_server_down_at_start_and_coming_back() {
    let mut server = TestServer::start();
    let ids: Vec<String> = (0..4)
        .map(|_| server.enqueue("validate_song", params("song-000125")))
        .collect();
    server.stop();
    let worker = start(&perago::tasks![validate_song], config(&server));
    worker.log.wait_for("poll_error");
    server.restart();
    wait_terminal(&server, ids.len());
    let (summary, log) = worker.stop();
    assert_eq!(summary.completed, 4);
    let error = &log.events("poll_error")[0];
    assert_eq!(error["task_type"], "validate_song");
    assert!(
        error["error"].as_str().unwrap().contains("connection"),
        "{error}"
    );
    assert_eq!(log.events("poll_recovered").len(), 1);
}

#[test]
fn a_handler_running_past_its_response_timeout_keeps_its_lease() {
    let server = TestServer::start();
    let mut spec = TaskSpec::new("slow", params("song-000123"));
    spec.response_timeout_seconds = Some(2);
    let id = server.enqueue_with(spec);
    let mut config = config(&server);
    // Renew every half second: a renewal may come 1.5 s late on a busy machine and still
    // keep the lease.
    config.lease_fraction = 0.25;
    let worker = start(&perago::tasks![slow], config);
    // The handler runs on until the server has taken five renewals: 2.5 s, past the response
    // timeout.
    let renewed = server.wait_until(PATIENCE, |s| {
        s.task(&id).is_some_and(|t| {
            t.updates
                .iter()
                .filter(|u| u["extendLease"] == true)
                .count()
                >= 5
        })
    });
    SLOW_GATE.open();
    assert!(renewed, "{:#?}", server.task(&id).map(|t| t.updates));
    wait_terminal(&server, 1);
    let (summary, log) = worker.stop();
    let task = server.task(&id).unwrap();
    assert_eq!(task.status, TaskStatus::Completed, "{:#?}", task.updates);
    let leases: Vec<&Value> = task
        .updates
        .iter()
        .filter(|u| u["extendLease"] == true)
        .collect();
    assert!(leases.len() >= 5, "{:#?}", task.updates);
    for lease in &leases {
        assert_eq!(lease["status"], "IN_PROGRESS");
        assert_eq!(lease["taskId"], id.as_str());
        assert_eq!(lease["workerId"], "test-worker");
    }
    assert_eq!(task.updates.last().unwrap()["status"], "COMPLETED");
    assert_eq!(task.poll_count, 1);
    assert!(summary.lease_extensions >= 5);
    assert!(log.events("lease_error").is_empty());
}

// ---------------------------------------------------------------------------------------------
// Shutdown.

#[test]
fn shutdown_lets_the_tasks_in_flight_finish_and_report() {
    let server = TestServer::start();
    let first = server.enqueue("gated_shutdown", params("song-000123"));
    let second = server.enqueue("gated_shutdown", params("song-000124"));
    let mut config = config(&server);
    config.concurrency = 2;
    let worker = start(&perago::tasks![gated_shutdown], config);
    SHUTDOWN_GATE.wait_running(2);
    let queued = server.enqueue("gated_shutdown", params("song-000125"));
    worker.shutdown.shutdown();
    worker.log.wait_for("shutdown_requested");
    SHUTDOWN_GATE.open();
    let Running { thread, log, .. } = worker;
    let summary = thread.join().unwrap();

    for id in [&first, &second] {
        assert_eq!(server.task(id).unwrap().status, TaskStatus::Completed);
    }
    let queued = server.task(&queued).unwrap();
    assert_eq!(
        (queued.status, queued.poll_count),
        (TaskStatus::Scheduled, 0)
    );
    assert_eq!((summary.completed, summary.abandoned), (2, 0));
    let requested = &log.events("shutdown_requested")[0];
    assert_eq!(requested["reason"], "requested");
    assert_eq!(requested["in_flight"], 2);
    let events: Vec<String> = log
        .lines()
        .iter()
        .map(|l| l["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(events.last().unwrap(), "worker_stopped");
}

#[test]
fn shutdown_reports_a_task_still_running_after_the_grace_period_as_failed() {
    let server = TestServer::start();
    let id = server.enqueue("gated_abandon", params("song-000123"));
    let mut config = config(&server);
    config.shutdown_grace = Duration::from_millis(100);
    let worker = start(&perago::tasks![gated_abandon], config);
    ABANDON_GATE.wait_running(1);
    let (summary, log) = worker.stop();
    let task = server.task(&id).unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    assert_eq!(
        task.reason_for_incompletion.as_deref(),
        Some("worker test-worker shut down before the task finished (grace period 100ms)")
    );
    assert_eq!((summary.abandoned, summary.completed), (1, 0));
    let record = &log.events("task_result")[0];
    assert_eq!(record["status"], "FAILED");
    // The handler finishes later: its result is logged, not reported.
    ABANDON_GATE.open();
    log.wait_for("late_result");
    assert_eq!(results(&server, &id).len(), 1);
}

/// The attempt fence: an abandoned task's handler finishes after the worker gave the task
/// back, and its publication is refused before anything is merged.
#[test]
fn a_task_abandoned_at_shutdown_publishes_nothing() {
    let server = TestServer::start();
    let (_, store, commit) = example_store();
    let input = json!({
        "workspace": {"repository": "song-000123", "branch": "main", "ref_type": "commit",
                      "ref": commit},
        "params": {"feature_set": "default"},
    });
    let id = server.enqueue("gated_publisher", input);
    let mut config = config(&server);
    config.shutdown_grace = Duration::from_millis(100);
    let worker = start(&perago::tasks![gated_publisher], config);
    PUBLISH_GATE.wait_running(1);
    let head = store.get_commit("song-000123", "main").unwrap().id;
    let (summary, log) = worker.stop();
    assert_eq!(summary.abandoned, 1);
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Failed);
    PUBLISH_GATE.open();
    log.wait_for("late_result");
    let record = log
        .events("task_result")
        .into_iter()
        .find(|r| r["detail"]["stage"] == "publish")
        .expect("the late result's record");
    assert_eq!(record["detail"]["refused_by"], "attempt_fence");
    assert_eq!(
        record["reason"],
        "attempt fence: the task was abandoned at shutdown and reported FAILED; another \
         attempt may run it; nothing merged"
    );
    assert_eq!(store.get_commit("song-000123", "main").unwrap().id, head);
}

// ---------------------------------------------------------------------------------------------
// Settings.

#[test]
fn the_auth_token_is_sent_and_never_logged_and_the_domain_is_polled() {
    let server = TestServer::start();
    let mut spec = TaskSpec::new("validate_song", params("song-000123"));
    spec.domain = Some("blue".to_owned());
    let id = server.enqueue_with(spec);
    let mut config = config(&server);
    config.auth_token = Some(perago_worker::worker::AuthToken::new("s3cr3t-token"));
    config.domain = Some("blue".to_owned());
    let worker = start(&perago::tasks![validate_song], config);
    wait_terminal(&server, 1);
    let (_, log) = worker.stop();
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Completed);
    let requests = server.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(
            request.header("x-authorization"),
            Some("s3cr3t-token"),
            "{request:?}"
        );
        if request.path.starts_with("/api/tasks/poll/") {
            assert_eq!(request.query_param("domain").as_deref(), Some("blue"));
        }
    }
    assert!(!log.text().contains("s3cr3t"));
    assert_eq!(log.events("worker_started")[0]["auth_token"], true);
}

#[test]
fn a_workspace_task_needs_a_store() {
    let server = TestServer::start();
    let mut config = config(&server);
    config.store = None;
    let err = Worker::new(
        &perago_example::registry(),
        config,
        Worker::log_to(Log::default()),
    )
    .err()
    .unwrap();
    assert_eq!(
        err.to_string(),
        "`build_features` is a workspace task: give the worker a store (lakeFS or a local \
         store), or serve only workspace-free tasks (--task NAME)"
    );
}

// ---------------------------------------------------------------------------------------------
// The binary.

#[cfg(unix)]
#[test]
fn the_worker_subcommand_serves_until_sigterm_and_exits_0() {
    let server = TestServer::start();
    let ids: Vec<String> = (0..3)
        .map(|_| server.enqueue("validate_song", params("song-000123")))
        .collect();
    let features = server.enqueue("build_features", input("build_features.json"));
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("worker.jsonl");
    let mut cmd = std::process::Command::new(example_binary());
    cmd.args([
        "worker",
        "--concurrency",
        "2",
        "--poll-timeout",
        "200ms",
        "--log",
    ])
    .arg(&log_path)
    .arg("--store")
    .arg(&example_store().0)
    .env("CONDUCTOR_SERVER_URL", format!("{}/api", server.base_url()))
    .env("PERAGO_WORKER_ID", "cli-worker")
    .env("CONDUCTOR_AUTH_TOKEN", "cli-s3cr3t");
    let child = Child::start(cmd, None);
    wait_terminal(&server, 4);
    let done = child.stop(PATIENCE);
    assert_eq!(done.code(), Some(0), "{done}");
    for id in ids.iter().chain([&features]) {
        let task = server.task(id).unwrap();
        assert_eq!(task.status, TaskStatus::Completed, "{id}");
        assert_eq!(task.worker_id.as_deref(), Some("cli-worker"));
    }
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(!text.contains("cli-s3cr3t"));
    let lines = json_lines(&text);
    assert_eq!(events(&lines, "worker_started").len(), 1);
    assert_eq!(events(&lines, "task_result").len(), 4);
    let requested = events(&lines, "shutdown_requested")[0];
    assert_eq!(requested["reason"], "SIGTERM");
    assert_eq!(lines.last().unwrap()["event"], "worker_stopped");
}
