//! The delivery threads: send the outbox to Conductor after commit.
//!
//! [`LANES`] threads each own the rows whose id falls in their lane (so a row has exactly one
//! sender) and a keep-alive connection of their own. Each reads its rows that are due (updates
//! first), sends each with the blocking Conductor client (on its thread, never on the HTTP
//! runtime), and records how each attempt ended
//! through the [`Writer`]: `delivered` (with a `conductor.update_delivered` audit event for an
//! update), a retry later (connection errors, 5xx and 429 back off from 250 ms to 8 s), or
//! given up (an update Conductor refuses with another 4xx is `rejected`, audited and logged;
//! a log line is dropped after [`outbox::LOG_ATTEMPTS`]). While Conductor is down nothing is
//! lost: the rows wait in the ledger, across restarts, and go out when it answers again.
//! The thread wakes when a commit queued something, or when the next retry is due.

use crate::ledger::outbox::{self, Attempt, Kind, Lane, OutboxRow};
use crate::ledger::{self, audit, now_ms};
use crate::log::EventLog;
use crate::metrics::GatewayMetrics;
use crate::writer::Writer;
use perago_conductor::{Backoff, Client, Error, Method, path_segment, tasks};
use perago_metrics::Loop;
use rusqlite::Connection;
use serde_json::json;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The waits between attempts at one row, and after Conductor did not answer at all.
pub const BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(250),
    max: Duration::from_secs(8),
};

/// How many due rows are read at once.
const BATCH: usize = 128;

/// Wakes the delivery threads, or stops them; and tells who waits for deliveries when a pass
/// was recorded.
#[derive(Debug, Default)]
pub struct Wake {
    /// How many notifications so far, and whether to stop.
    state: Mutex<(u64, bool)>,
    cv: Condvar,
    passes: Mutex<u64>,
    passed: Condvar,
}

impl Wake {
    /// Something was queued.
    pub fn notify(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
        self.cv.notify_all();
    }

    /// Stop after the attempts in progress.
    pub fn stop(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        self.cv.notify_all();
    }

    /// The notifications so far.
    fn seen(&self) -> u64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    /// Waits for a notification after `seen`, a stop or `timeout`; true when stopping.
    fn wait(&self, seen: u64, timeout: Duration) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.0 == seen && !st.1 {
            st = self
                .cv
                .wait_timeout(st, timeout)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        st.1
    }

    /// Waits `timeout` whatever is queued meanwhile (Conductor is down: new rows wait for the
    /// backoff too); true when stopping.
    fn pause(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = std::time::Instant::now();
            if st.1 || now >= deadline {
                return st.1;
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn stopping(&self) -> bool {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    /// How many passes were recorded so far.
    pub fn passes(&self) -> u64 {
        *self.passes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until more than `seen` passes were recorded, or `deadline`.
    pub fn wait_pass(&self, seen: u64, deadline: std::time::Instant) {
        let mut passes = self.passes.lock().unwrap_or_else(|p| p.into_inner());
        while *passes <= seen {
            let now = std::time::Instant::now();
            if now >= deadline {
                return;
            }
            passes = self
                .passed
                .wait_timeout(passes, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn pass_recorded(&self) {
        *self.passes.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.passed.notify_all();
    }
}

/// How many threads deliver, each its own lane of the outbox and its own connection.
pub const LANES: u32 = 4;

/// What a delivery thread reports to, with `--metrics-listen`: the metrics, and the loop the
/// liveness probe watches.
#[derive(Debug, Clone)]
pub struct Watched {
    /// The gateway's metrics.
    pub metrics: Arc<GatewayMetrics>,
    /// This thread's loop.
    pub watched: Arc<Loop>,
}

/// Starts the delivery thread of `lane`, reading through `reader`.
pub fn spawn(
    lane: Lane,
    reader: Connection,
    client: Client,
    writer: Writer,
    wake: Arc<Wake>,
    log: EventLog,
    watched: Option<Watched>,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("perago-gateway-delivery-{}", lane.lane))
        .spawn(move || {
            let _alive = watched.as_ref().map(|w| w.watched.guard());
            run(
                lane,
                &reader,
                &client,
                &writer,
                &wake,
                &log,
                watched.as_ref(),
            );
        })
        .expect("the delivery thread starts")
}

fn run(
    lane: Lane,
    reader: &Connection,
    client: &Client,
    writer: &Writer,
    wake: &Wake,
    log: &EventLog,
    watched: Option<&Watched>,
) {
    // Conductor's failures in a row: while it does not answer, the thread waits before each
    // new pass instead of trying every row.
    let mut outage = 0u32;
    loop {
        if wake.stopping() {
            return;
        }
        let seen = wake.seen();
        let now = now_ms();
        let rows = match outbox::due(reader, lane, now, BATCH) {
            Ok(rows) => rows,
            Err(e) => {
                log.event(
                    "internal_error",
                    json!({"error": format!("reading the outbox: {e}")}),
                );
                if wake.pause(BACKOFF.max) {
                    return;
                }
                continue;
            }
        };
        if rows.is_empty() {
            let next = outbox::next_due(reader, lane).ok().flatten();
            let wait = next.map_or(Duration::from_secs(60), |at| {
                Duration::from_millis(u64::try_from(at - now).unwrap_or(0).max(1))
            });
            if wake.wait(seen, wait) {
                return;
            }
            continue;
        }
        let mut results = Vec::with_capacity(rows.len());
        let mut down = false;
        for row in &rows {
            if wake.stopping() {
                break;
            }
            let (attempt, no_answer) = {
                let _busy = watched.map(|w| w.watched.busy());
                attempt(client, row, log, watched.map(|w| w.metrics.as_ref()))
            };
            down = no_answer;
            results.push((row.clone(), attempt));
            if down {
                break;
            }
        }
        let delivered: Vec<(String, i64)> = results
            .iter()
            .filter(|(row, attempt)| row.kind == Kind::Update && *attempt == Attempt::Delivered)
            .map(|(row, _)| (row.task_id.clone(), row.created_at_ms))
            .collect();
        match writer.write_blocking(move |conn| record(conn, &results)) {
            Ok(()) => {
                let now = now_ms();
                for (task_id, committed) in delivered {
                    if let Some(w) = watched {
                        w.metrics
                            .delivered(now.saturating_sub(committed) as f64 / 1000.0);
                    }
                    log.event("update_delivered", json!({"task_id": task_id}));
                }
            }
            Err(e) => log.event(
                "internal_error",
                json!({"error": format!("recording deliveries: {e}")}),
            ),
        }
        wake.pass_recorded();
        if down {
            outage += 1;
            if wake.pause(BACKOFF.delay(outage)) {
                return;
            }
        } else {
            outage = 0;
        }
    }
}

/// One attempt at a row, and whether Conductor gave no answer at all (it is down: the pass
/// stops there).
fn attempt(
    client: &Client,
    row: &OutboxRow,
    log: &EventLog,
    metrics: Option<&GatewayMetrics>,
) -> (Attempt, bool) {
    let sent = match row.kind {
        // The body is the TaskResult as committed, sent byte for byte.
        Kind::Update => client.send(Method::Post, "/api/tasks", &[], Some(row.body.as_bytes())),
        Kind::Log => client.send(
            Method::Post,
            &format!("/api/tasks/{}/log", path_segment(&row.task_id)),
            &[],
            Some(row.body.as_bytes()),
        ),
    };
    if let Some(m) = metrics {
        m.called(sent.as_ref().err());
    }
    let error = match sent {
        Ok(_) => return (Attempt::Delivered, false),
        Err(error) => error,
    };
    let retryable = error.is_retryable() || error.status() == Some(429);
    let attempts = row.attempts + 1;
    if !retryable || (row.kind == Kind::Log && attempts >= outbox::LOG_ATTEMPTS) {
        let event = if row.kind == Kind::Update {
            "delivery_rejected"
        } else {
            "log_dropped"
        };
        log.event(
            event,
            json!({"task_id": row.task_id, "attempts": attempts, "error": error.to_string()}),
        );
        return (
            Attempt::GivenUp {
                error: error.to_string(),
            },
            false,
        );
    }
    let wait = BACKOFF.delay(u32::try_from(attempts).unwrap_or(u32::MAX));
    if row.kind == Kind::Update {
        log.event(
            "delivery_retry",
            json!({"task_id": row.task_id, "attempt": attempts, "error": error.to_string(),
                   "retry_in_ms": wait.as_millis()}),
        );
    }
    let no_answer = matches!(error, Error::Transport { .. });
    let retry = Attempt::Retry {
        retry_at_ms: now_ms().saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
        error: error.to_string(),
    };
    (retry, no_answer)
}

/// Records the attempts of a pass in one transaction, auditing the updates' fates.
fn record(conn: &Connection, results: &[(OutboxRow, Attempt)]) -> rusqlite::Result<()> {
    let now = ledger::now_ms();
    for (row, attempt) in results {
        outbox::record(conn, row.id, attempt, now)?;
        if row.kind != Kind::Update {
            continue;
        }
        match attempt {
            Attempt::Delivered => {
                audit::append(
                    conn,
                    &row.task_id,
                    "conductor.update_delivered",
                    &json!({"outbox_id": row.id, "attempts": row.attempts + 1}),
                    now,
                )?;
            }
            Attempt::GivenUp { error } => {
                audit::append(
                    conn,
                    &row.task_id,
                    "conductor.update_rejected",
                    &json!({"outbox_id": row.id, "attempts": row.attempts + 1, "error": error}),
                    now,
                )?;
            }
            Attempt::Retry { .. } => {}
        }
    }
    Ok(())
}

/// Sends `extendLease` for a task (a heartbeat): whether Conductor took it.
pub fn extend_lease(
    client: &Client,
    task_id: &str,
    workflow_instance_id: &str,
    worker_id: &str,
) -> Result<(), Error> {
    let heartbeat = tasks::TaskResult {
        workflow_instance_id: workflow_instance_id.to_owned(),
        task_id: task_id.to_owned(),
        status: tasks::TaskResultStatus::InProgress,
        output_data: serde_json::Map::new(),
        reason_for_incompletion: None,
        callback_after_seconds: None,
        worker_id: Some(worker_id.to_owned()),
        logs: Vec::new(),
        extend_lease: true,
    };
    tasks::update(client, &heartbeat).map(drop)
}
