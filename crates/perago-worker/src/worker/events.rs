//! The worker's own log events, written beside the runtime's `task_result` records: one JSON
//! object per line, `time` and `event` first.

use perago::log::{JsonLines, rfc3339_now};
use perago_conductor::tasks::TaskResult;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

/// Where a worker writes its JSON Lines: task outcomes and worker events.
pub type LogSink = JsonLines<Box<dyn Write + Send>>;

/// One task type a worker serves, as `worker_started` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ServedTask {
    /// The task type.
    pub task_type: &'static str,
    /// Tasks in flight at most.
    pub concurrency: usize,
}

/// A worker event. The `event` field is the variant's name in snake case.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// The worker is about to poll.
    WorkerStarted {
        /// `workerid`.
        worker_id: &'a str,
        /// The server root.
        server_url: &'a str,
        /// The polled domain.
        domain: Option<&'a str>,
        /// Whether requests carry an `X-Authorization` token (never the token).
        auth_token: bool,
        /// The task types and their concurrency.
        tasks: &'a [ServedTask],
        /// The long-poll wait, ms.
        poll_timeout_ms: u64,
        /// The pause after an empty poll, ms.
        poll_interval_ms: u64,
        /// The request timeout (on top of the long-poll wait), ms.
        request_timeout_ms: u64,
        /// How long a result is retried, ms.
        update_horizon_ms: u64,
        /// The largest poll answer read, bytes.
        max_poll_bytes: u64,
    },
    /// `/metrics`, `/healthz` and `/readyz` are served at `addr` (`--metrics-listen`; the port
    /// chosen when it was 0).
    MetricsListening {
        /// The address, e.g. `127.0.0.1:9464`.
        addr: &'a str,
    },
    /// A poll failed; the next one waits `retry_in_ms`. When its answer broke off, the tasks
    /// read whole before the break still run (`tasks_received`), and the one it broke off in
    /// is logged as `task_left_in_progress`.
    PollError {
        /// The task type.
        task_type: &'a str,
        /// What failed.
        error: String,
        /// Failures in a row, this one included.
        failures: u32,
        /// The wait before the next poll, ms.
        retry_in_ms: u64,
        /// Tasks read whole from the answer before it broke off.
        tasks_received: usize,
        /// Bytes of the answer read before it broke off.
        bytes_read: u64,
    },
    /// A task the server handed to this worker and holds `IN_PROGRESS`, which the worker
    /// leaves without reporting a result: cut off in a poll answer, or still in flight at a
    /// forced exit. Conductor retries it when its response timeout passes; `result` is what
    /// the worker was reporting, if it had one.
    TaskLeftInProgress {
        /// The task type.
        task_type: &'a str,
        /// The task, if its id was read.
        task_id: Option<&'a str>,
        /// Its workflow, if read.
        workflow_id: Option<&'a str>,
        /// Why it is left.
        reason: &'a str,
        /// The `POST /api/tasks` body being delivered, if there was one.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<&'a TaskResult>,
    },
    /// A poll succeeded after failures.
    PollRecovered {
        /// The task type.
        task_type: &'a str,
        /// The failures in a row before it.
        failures: u32,
    },
    /// A polled element that cannot be run or reported (no task id): skipped.
    InvalidTask {
        /// The task type.
        task_type: &'a str,
        /// What is wrong.
        error: &'a str,
        /// The element as polled.
        task: &'a Value,
    },
    /// An update failed and is retried.
    UpdateRetry {
        /// The task type.
        task_type: &'a str,
        /// The task.
        task_id: &'a str,
        /// Its workflow.
        workflow_id: &'a str,
        /// The status being reported.
        status: &'static str,
        /// The failed attempt (1-based).
        attempt: u32,
        /// What failed.
        error: String,
        /// The wait before the next attempt, ms.
        retry_in_ms: u64,
    },
    /// A result could not be delivered: it is here in full, so that nothing is lost.
    UpdateFailed {
        /// The task type.
        task_type: &'a str,
        /// The task.
        task_id: &'a str,
        /// Its workflow.
        workflow_id: &'a str,
        /// Attempts made.
        attempts: u32,
        /// The last error.
        error: String,
        /// The HTTP status of the last answer, if there was one.
        http_status: Option<u16>,
        /// The whole `POST /api/tasks` body that was not delivered.
        result: &'a TaskResult,
    },
    /// An `extendLease` update failed (the next one is due after another lease period).
    LeaseError {
        /// The task type.
        task_type: &'a str,
        /// The task.
        task_id: &'a str,
        /// Its workflow.
        workflow_id: &'a str,
        /// What failed.
        error: String,
    },
    /// A task finished after it had been reported `FAILED` at shutdown; its result is not
    /// reported (its `task_result` record precedes this line).
    LateResult {
        /// The task type.
        task_type: &'a str,
        /// The task.
        task_id: &'a str,
        /// Its workflow.
        workflow_id: &'a str,
        /// What the handler's run gave.
        status: &'static str,
    },
    /// The worker's own code panicked while handling a task or polling (a bug); the slot or
    /// the poll token is freed.
    InternalError {
        /// The task type.
        task_type: &'a str,
        /// The task, unless it happened while polling.
        task_id: Option<&'a str>,
        /// The panic message.
        error: String,
    },
    /// Shutdown was requested: polling stops, tasks in flight get `grace_ms` to finish.
    ShutdownRequested {
        /// Why (`SIGTERM`, `SIGINT`, `requested`).
        reason: &'a str,
        /// Tasks in flight at that moment.
        in_flight: usize,
        /// The grace period, ms.
        grace_ms: u64,
    },
    /// The worker stopped.
    WorkerStopped {
        /// What happened while it ran.
        #[serde(flatten)]
        summary: &'a super::Summary,
        /// How long it ran, ms.
        uptime_ms: u64,
    },
}

#[derive(Serialize)]
struct Record<'a> {
    time: String,
    #[serde(flatten)]
    event: &'a Event<'a>,
}

/// Writes `event` as one line, shortened to the log's line limit unless it carries a result
/// that exists nowhere else (an undelivered update, a task left with its result).
pub(crate) fn write(log: &LogSink, event: &Event<'_>) -> std::io::Result<()> {
    let record = Record {
        time: rfc3339_now(),
        event,
    };
    match event {
        Event::UpdateFailed { .. }
        | Event::TaskLeftInProgress {
            result: Some(_), ..
        } => log.write_whole(&record),
        _ => log.write(&record),
    }
}

/// `event` as the one line [`write`] would write, for standard error when the log fails.
pub(crate) fn line(event: &Event<'_>) -> String {
    serde_json::to_string(&Record {
        time: rfc3339_now(),
        event,
    })
    .unwrap_or_else(|e| format!("(cannot be serialised: {e})"))
}

/// A duration in whole milliseconds, for the log.
pub(crate) fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
