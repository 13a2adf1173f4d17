//! A Conductor-compatible HTTP server for tests.
//!
//! Conductor itself cannot run where perago is built and tested, so every
//! Conductor-facing test starts a [`TestServer`] on `127.0.0.1` instead. It
//! answers the metadata API (`docs/src/reference/conductor.md` §1, §3), WorkflowDef registration
//! (§10.3), the schema registry (§2.5) and the task worker API (§4) with the paths, bodies, status codes and quirks of
//! conductor-oss, keeps everything in memory, records every request, and can
//! inject faults for failure tests: error statuses ([`TestServer::fail_next`]),
//! any status, headers and raw body such as malformed JSON or a redirect
//! ([`TestServer::reply_next`]), dropped connections
//! ([`TestServer::drop_next`]), bodies trickled after the request took effect
//! ([`TestServer::slow_body_next`]), delays ([`TestServer::set_delay`]) and a
//! stopped server ([`TestServer::stop`]).
//!
//! The API is blocking so plain `#[test]`s can drive it; the HTTP side runs on
//! a private tokio runtime. Tests wait for state changes with
//! [`TestServer::wait_until`] (condition-variable based), never with sleeps.
//!
//! ```no_run
//! use perago_testserver::{TaskStatus, TestServer};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! let server = TestServer::start();
//! let id = server.enqueue("greet", json!({"name": "Ada"}));
//! // … run a worker against server.base_url() …
//! assert!(server.wait_terminal(1, Duration::from_secs(10)));
//! assert_eq!(server.task(&id).unwrap().status, TaskStatus::Completed);
//! ```
//!
//! # Where it differs from a real Conductor
//!
//! - No workflow runs: each enqueued task is one SIMPLE task of its own workflow
//!   instance, and nothing follows it; WorkflowDefs are stored and served, not run. `timeoutSeconds`, `timeoutPolicy`,
//!   `totalTimeoutSeconds`, `pollTimeoutSeconds`, rate and concurrency limits
//!   and schema enforcement are stored but not applied.
//! - The decider's retries are **off by default**: FAILED and TIMED_OUT tasks
//!   are final, so a test sees exactly the tasks it enqueued (a real server
//!   retries 3 times, 60 s apart, unless the TaskDef says otherwise).
//!   [`TestServer::enable_retries`] turns them on as Conductor does them
//!   (§4.3: a new task per retry, per the TaskDef's `retryCount` and
//!   retry delay), with the delay real, skipped or scaled down
//!   ([`RetryDelays`]); [`TestServer::wait_final`] then waits for last attempts.
//!   Opt-in rather than on by default: the existing tests, here and in the
//!   worker's suites, treat FAILED as final (they count tasks, terminal tasks
//!   and worker summaries), and with retries on each of their failures would
//!   queue another task, kept out of their sight only by the 60 s delay.
//! - The response timeout fires exactly `responseTimeoutSeconds` after the last
//!   poll or update (monotonic clock); a real server notices it on a later sweep.
//! - The retry delay's random `backoffJitterMs` part delays the retry but is
//!   not shown: `startDelayInSeconds`/`callbackAfterSeconds` carry whole seconds.
//! - An empty batch poll answers `200 []` as current OSS does;
//!   [`Options::empty_batch_poll_204`] gives older servers' `204`.
//! - Update-by-reference (`POST /api/tasks/{workflowId}/{ref}/{status}`) and the
//!   workflow execution endpoints are not served (404).

mod ids;
mod jackson;
mod metadata;
mod reply;
mod router;
mod schema;
mod service;
mod state;
mod tasks;
mod workflows;

use crate::faults::{self, RawReply};
use crate::server;
use serde_json::Value;
use state::Shared;
use std::fmt;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A Conductor-compatible server listening on `127.0.0.1:<ephemeral port>`.
///
/// It stops when dropped. [`stop`](Self::stop) and [`restart`](Self::restart)
/// simulate an outage: while stopped, connections are refused; after a
/// restart the server listens on the same port with the same state.
pub struct TestServer {
    shared: Arc<Shared>,
    /// `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    port: u16,
    /// `None` while stopped.
    listening: Option<server::Listening>,
}

impl fmt::Debug for TestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestServer")
            .field("port", &self.port)
            .field("running", &self.listening.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Closes the listener and connections before returning, so the port is
        // free at once; the wait runs on the server's own runtime threads.
        self.stop();
        if let Some(runtime) = self.runtime.take() {
            // Does not block, so dropping inside an async context is fine too.
            runtime.shutdown_background();
        }
    }
}

/// Server switches that differ between Conductor versions and configurations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `conductor.app.ownerEmailMandatory` (§1). The validator's own
    /// default and Conductor's test harness say `true`; the shipped OSS
    /// `application.properties` says `false`. Default: `true`.
    pub owner_email_mandatory: bool,
    /// Whether `/api/schema` exists (§2.5). `false` answers 404 on every
    /// schema path, like OSS servers up to 3.32 (before PR #1592). Default: `true`.
    pub schema_registry: bool,
    /// Whether `POST /api/metadata/taskdefs` accepts a bare TaskDef object as a
    /// one-element list. Servers with PR #1592 set Jackson's
    /// `accept-single-value-as-array` globally (§2.5, inference); older
    /// ones answer 500. Default: `false` (the older behaviour).
    pub accept_single_taskdef: bool,
    /// Whether an empty batch poll answers `204 No Content` (older servers;
    /// the Go SDK still handles it) instead of `200 []` (current OSS, spec
    /// §4.1). Default: `false`.
    pub empty_batch_poll_204: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            owner_email_mandatory: true,
            schema_registry: true,
            accept_single_taskdef: false,
            empty_batch_poll_204: false,
        }
    }
}

/// A group of endpoints, used to aim faults ([`TestServer::fail_next`],
/// [`TestServer::reply_next`], [`TestServer::drop_next`],
/// [`TestServer::slow_body_next`], [`TestServer::set_delay`]) at some
/// requests only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Route {
    /// Every request.
    Any,
    /// Every `/api/metadata/...` request.
    Metadata,
    /// `POST /api/metadata/taskdefs`.
    RegisterTaskDefs,
    /// `PUT /api/metadata/taskdefs`.
    UpdateTaskDef,
    /// `GET /api/metadata/taskdefs/{name}`.
    GetTaskDef,
    /// `GET /api/metadata/taskdefs`.
    ListTaskDefs,
    /// `DELETE /api/metadata/taskdefs/{name}`.
    DeleteTaskDef,
    /// Every `/api/schema...` request.
    Schema,
    /// `GET /api/tasks/poll/{type}` and `GET /api/tasks/poll/batch/{type}`.
    Poll,
    /// `POST /api/tasks` (task result updates, including lease extensions).
    UpdateTask,
    /// `GET /api/tasks/{taskId}`.
    GetTask,
    /// `GET /health` and `GET /api/health`.
    Health,
}

/// One request as the server received it, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path without the query string, e.g. `/api/metadata/taskdefs`.
    pub path: String,
    /// The raw query string without `?` (empty when absent).
    pub query: String,
    /// Header names (lower-case) and values, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The raw body (UTF-8, lossy).
    pub body: String,
    /// The status the server answered; 0 if no answer was sent (dropped
    /// connection, server stopped, or still in progress such as a long poll).
    pub status: u16,
}

impl RecordedRequest {
    /// The body parsed as JSON, `None` if it is not JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    /// The first value of a query parameter (percent-decoded).
    pub fn query_param(&self, name: &str) -> Option<String> {
        crate::url::query_param(&self.query, name)
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `Task.Status` (§4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Polled by a worker, result not yet reported.
    InProgress,
    /// Reported `CANCELED`.
    Canceled,
    /// Reported `FAILED`.
    Failed,
    /// Reported `FAILED_WITH_TERMINAL_ERROR`.
    FailedWithTerminalError,
    /// Reported `COMPLETED`.
    Completed,
    /// Not produced by this server; listed for completeness.
    CompletedWithErrors,
    /// Queued, waiting for a poll.
    Scheduled,
    /// No update within `responseTimeoutSeconds` while IN_PROGRESS.
    TimedOut,
    /// Not produced by this server; listed for completeness.
    Skipped,
}

/// How long the decider's retries wait before they can be polled
/// ([`TestServer::enable_retries`]).
///
/// The retry's Task JSON shows Conductor's delay in `startDelayInSeconds` and
/// `callbackAfterSeconds` whatever is chosen here, so tests can assert the
/// backoff without waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDelays {
    /// Conductor's delay, in real time (a stock TaskDef waits 60 s).
    Real,
    /// No wait: a retry can be polled at once.
    Immediate,
    /// Conductor's delay with each of its seconds lasting this long instead
    /// (e.g. 10 ms), so backoff and jitter keep their order but tests stay fast.
    Scaled(Duration),
}

/// What to enqueue with [`TestServer::enqueue_with`]; build it with
/// [`TaskSpec::new`] and set the public fields.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    /// The task type (= TaskDef name) workers poll for.
    pub task_type: String,
    /// The task's `inputData`.
    pub input_data: Value,
    /// The task domain; workers must poll with the same `domain` to get it.
    pub domain: Option<String>,
    /// `responseTimeoutSeconds`; `None` takes it from the registered TaskDef,
    /// or Conductor's ad-hoc default 3600 when none is registered (§1).
    pub response_timeout_seconds: Option<i64>,
    /// `referenceTaskName`; `None` gives `<task_type>_ref`.
    pub reference_task_name: Option<String>,
    /// `workflowInstanceId`; `None` gives a fresh id.
    pub workflow_instance_id: Option<String>,
    /// `workflowType`; `None` gives `<task_type>_workflow`.
    pub workflow_type: Option<String>,
    /// `correlationId`, if any.
    pub correlation_id: Option<String>,
    /// `retryCount` (which attempt this is; 0 for the first). With retries
    /// on, the TaskDef's `retryCount` bounds it: the last retry has
    /// `retryCount` equal to the TaskDef's.
    pub retry_count: i32,
}

impl TaskSpec {
    /// A task of `task_type` with `input_data` and every other field defaulted.
    pub fn new(task_type: impl Into<String>, input_data: Value) -> TaskSpec {
        TaskSpec {
            task_type: task_type.into(),
            input_data,
            domain: None,
            response_timeout_seconds: None,
            reference_task_name: None,
            workflow_instance_id: None,
            workflow_type: None,
            correlation_id: None,
            retry_count: 0,
        }
    }
}

/// A snapshot of one task, for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    /// `taskId`.
    pub task_id: String,
    /// `workflowInstanceId`.
    pub workflow_instance_id: String,
    /// `taskType`.
    pub task_type: String,
    /// `referenceTaskName` (shared by a task and its retries).
    pub reference_task_name: String,
    /// The domain it was enqueued in.
    pub domain: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// `retryCount`: 0 for a first attempt, +1 for each retry.
    pub retry_count: i32,
    /// `retriedTaskId`: the attempt this one retries.
    pub retried_task_id: Option<String>,
    /// `retried`: whether a retry of this attempt was scheduled.
    pub retried: bool,
    /// `inputData` as enqueued.
    pub input_data: Value,
    /// `outputData` from the last accepted update (`{}` before any).
    pub output_data: Value,
    /// `reasonForIncompletion` from the last accepted update (≤ 500 chars).
    pub reason_for_incompletion: Option<String>,
    /// `workerId` of the last poll or accepted update.
    pub worker_id: Option<String>,
    /// How many times the task was handed to a worker.
    pub poll_count: u32,
    /// `responseTimeoutSeconds` in force for this task.
    pub response_timeout_seconds: i64,
    /// Every `POST /api/tasks` body received for this task, in order,
    /// including lease extensions and updates ignored because the task was
    /// already terminal.
    pub updates: Vec<Value>,
    /// Execution logs (`TaskExecLog` objects) received with updates.
    pub logs: Vec<Value>,
    /// The Task JSON exactly as `GET /api/tasks/{taskId}` returns it.
    pub json: Value,
}

impl TestServer {
    /// Starts a server with default [`Options`].
    ///
    /// # Panics
    /// If no loopback port can be bound or the runtime cannot start.
    pub fn start() -> TestServer {
        TestServer::start_with(Options::default())
    }

    /// Starts a server with `options`.
    ///
    /// # Panics
    /// If no loopback port can be bound or the runtime cannot start.
    pub fn start_with(options: Options) -> TestServer {
        let runtime = server::runtime("perago-testserver");
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("perago-testserver: cannot bind 127.0.0.1:0");
        let port = listener
            .local_addr()
            .expect("a bound listener has an address")
            .port();
        let shared = Arc::new(Shared::new(options));
        let listening = server::Listening::start(runtime.handle(), Arc::clone(&shared), listener)
            .expect("perago-testserver: cannot listen");
        TestServer {
            shared,
            runtime: Some(runtime),
            port,
            listening: Some(listening),
        }
    }

    /// `http://127.0.0.1:PORT`; clients append `/api/...`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The port the server listens on (unchanged by restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server accepts connections (false between stop and restart).
    pub fn is_running(&self) -> bool {
        self.listening.is_some()
    }

    // ---- metadata (§1, §3) and schemas (§2.5) ----

    /// The TaskDef named `name` as `GET /api/metadata/taskdefs/{name}` returns
    /// it (server defaults and server-set fields included).
    pub fn taskdef(&self, name: &str) -> Option<Value> {
        self.shared
            .with(|s| s.task_defs.get(name).map(metadata::write_task_def))
    }

    /// All TaskDefs as `GET /api/metadata/taskdefs` returns them, by name.
    pub fn taskdefs(&self) -> Vec<Value> {
        self.shared
            .with(|s| s.task_defs.values().map(metadata::write_task_def).collect())
    }

    /// All stored SchemaDefs (every version) as `GET /api/schema` returns them,
    /// by name and version.
    pub fn schemas(&self) -> Vec<Value> {
        self.shared
            .with(|s| s.schemas.values().map(metadata::write_schema_def).collect())
    }

    /// All stored WorkflowDefs (every version) as `GET /api/metadata/workflow` returns them,
    /// by name and version.
    pub fn workflow_defs(&self) -> Vec<Value> {
        self.shared.with(|s| {
            s.workflow_defs
                .values()
                .map(|d| Value::Object(d.clone()))
                .collect()
        })
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.with(|s| s.requests.clone())
    }

    /// Forgets the recorded requests (state is kept).
    pub fn clear_requests(&self) {
        self.shared.with(|s| {
            s.requests_cleared += s.requests.len();
            s.requests.clear();
            s.touch();
        });
    }

    // ---- tasks (§4) ----

    /// Enqueues a SCHEDULED task of `task_type` in a new workflow instance and
    /// returns its `taskId`.
    pub fn enqueue(&self, task_type: &str, input_data: Value) -> String {
        self.enqueue_with(TaskSpec::new(task_type, input_data))
    }

    /// Enqueues a SCHEDULED task described by `spec` and returns its `taskId`.
    pub fn enqueue_with(&self, spec: TaskSpec) -> String {
        self.shared.with(|s| {
            let registered = s
                .task_defs
                .get(&spec.task_type)
                .map(metadata::write_task_def);
            let id = s.tasks.enqueue(spec, registered);
            s.touch();
            id
        })
    }

    /// A snapshot of the task `task_id`.
    pub fn task(&self, task_id: &str) -> Option<TaskState> {
        self.shared.with(|s| s.tasks.get(task_id))
    }

    /// Snapshots of every task, in enqueue order.
    pub fn tasks(&self) -> Vec<TaskState> {
        self.shared.with(|s| s.tasks.all())
    }

    /// How many tasks wait in `task_type`'s queue (no domain), delayed ones
    /// included, like `GET /api/tasks/queue/size`.
    pub fn queue_size(&self, task_type: &str) -> usize {
        self.shared.with(|s| s.tasks.queue_size(task_type, None))
    }

    /// Blocks until `pred` holds or `timeout` passes; returns whether it held.
    ///
    /// `pred` is re-evaluated after every state change (request, enqueue,
    /// update, response timeout, re-queue), so tests need no sleeps or polling
    /// loops. It must not block.
    pub fn wait_until(&self, timeout: Duration, pred: impl Fn(&TestServer) -> bool) -> bool {
        let now = Instant::now();
        // Far enough for any test, and cannot overflow.
        let deadline = now
            .checked_add(timeout)
            .unwrap_or(now + Duration::from_secs(86_400 * 365));
        loop {
            let seen = self.shared.generation();
            if pred(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.shared.wait_change(seen, deadline);
        }
    }

    /// Blocks until at least `count` tasks are terminal or `timeout` passes.
    /// With retries on, retried attempts count too; see [`wait_final`](Self::wait_final).
    pub fn wait_terminal(&self, count: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |server| {
            server.shared.with(|s| s.tasks.terminal_count()) >= count
        })
    }

    /// Blocks until at least `count` tasks are final (terminal, and no retry
    /// follows them: the last attempt of each enqueued task) or `timeout`
    /// passes. The same as [`wait_terminal`](Self::wait_terminal) while
    /// retries are off.
    pub fn wait_final(&self, count: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |server| {
            server.shared.with(|s| s.tasks.final_count()) >= count
        })
    }

    // ---- the decider's retries ----

    /// Turns the decider's retries on (they are off by default; see the crate
    /// docs), or changes `delays` for retries scheduled from now on.
    ///
    /// Then, like Conductor (§4.3), a task reported FAILED or timed out
    /// per `responseTimeoutSeconds` gets a retry while its `retryCount` is
    /// below the TaskDef's (default 3): a new SCHEDULED task with a new
    /// taskId, `retriedTaskId` pointing back, `retryCount`+1, `pollCount` 0,
    /// and the same `workflowInstanceId`, `referenceTaskName`, `inputData`
    /// and domain, queued after the TaskDef's retry delay (`retryLogic`,
    /// `retryDelaySeconds`, `backoffScaleFactor`, `maxRetryDelaySeconds`,
    /// `backoffJitterMs`) stretched as `delays` says. The failed attempt gets
    /// `retried: true`. FAILED_WITH_TERMINAL_ERROR and CANCELED are never
    /// retried. The TaskDef is the one registered when the first attempt was
    /// enqueued (Conductor snapshots it when the workflow starts); none means
    /// Conductor's ad-hoc TaskDef (retryCount 3, FIXED, 60 s).
    pub fn enable_retries(&self, delays: RetryDelays) {
        self.set_retries(Some(delays));
    }

    /// Turns retries off again: FAILED and TIMED_OUT are final from now on.
    /// Retries already queued stay queued.
    pub fn disable_retries(&self) {
        self.set_retries(None);
    }

    fn set_retries(&self, retries: Option<RetryDelays>) {
        self.shared.with(|s| {
            s.tasks.retries = retries;
            s.touch();
        });
    }

    /// The task `task_id` and the retries that followed it, in order (empty
    /// if there is no such task).
    pub fn attempts(&self, task_id: &str) -> Vec<TaskState> {
        self.shared.with(|s| s.tasks.attempts(task_id))
    }

    // ---- faults ----

    /// The next `times` requests matching `route` are answered with `status`
    /// and a Conductor error body, without touching the state (the request is
    /// still recorded).
    pub fn fail_next(&self, route: Route, times: usize, status: u16) {
        let message = format!("Injected fault: HTTP {status}");
        self.add_fault(route, times, faults::Action::Status(status, message));
    }

    /// The next `times` requests matching `route` are answered with `reply`
    /// exactly, without touching the state (the request is still recorded
    /// with `reply.status`). A status hyper cannot send (not 100..=999), or a
    /// header it cannot encode, gets a plain 500 instead.
    pub fn reply_next(&self, route: Route, times: usize, reply: RawReply) {
        self.add_fault(route, times, faults::Action::Reply(reply));
    }

    /// The next `times` requests matching `route` are handled as usual (a
    /// poll hands its tasks out: IN_PROGRESS, leases running), then the
    /// status and headers are sent at once and the body is sent in slices
    /// spread evenly over `over`. A client whose timeout is shorter loses the
    /// answer while the server has already acted on the request. Each fault
    /// is used by the next matching request whatever its answer, so enqueue
    /// tasks before the poll that should carry them.
    pub fn slow_body_next(&self, route: Route, times: usize, over: Duration) {
        self.add_fault(route, times, faults::Action::SlowBody(over));
    }

    /// The next `times` requests matching `route` get no answer: the
    /// connection is closed after the request is read (state untouched).
    pub fn drop_next(&self, route: Route, times: usize) {
        self.add_fault(route, times, faults::Action::Drop);
    }

    fn add_fault(&self, route: Route, times: usize, action: faults::Action) {
        self.shared.with(|s| {
            s.faults.add(route, times, action);
            s.touch();
        });
    }

    /// Every request matching `route` waits `delay` before it is handled;
    /// `Duration::ZERO` removes the delay.
    pub fn set_delay(&self, route: Route, delay: Duration) {
        self.shared.with(|s| {
            s.faults.set_delay(route, delay);
            s.touch();
        });
    }

    /// Removes every pending fault and delay.
    pub fn clear_faults(&self) {
        self.shared.with(|s| {
            s.faults.clear();
            s.touch();
        });
    }

    /// Stops listening and closes every open connection (long polls in flight
    /// get no answer): from return on, connections are refused. State is
    /// kept; IN_PROGRESS tasks keep their leases running. No-op when stopped.
    pub fn stop(&mut self) {
        if let Some(listening) = self.listening.take() {
            listening.stop();
        }
    }

    /// Listens again on the same port with the same state. No-op when running.
    ///
    /// # Panics
    /// If the port was taken by someone else in between.
    pub fn restart(&mut self) {
        if self.listening.is_some() {
            return;
        }
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        let port = self.port;
        let listener = server::Listening::rebind(runtime.handle(), port).unwrap_or_else(|e| {
            panic!("perago-testserver: cannot listen on 127.0.0.1:{port} again: {e}")
        });
        let listening =
            server::Listening::start(runtime.handle(), Arc::clone(&self.shared), listener)
                .expect("perago-testserver: cannot listen");
        self.listening = Some(listening);
    }
}
