//! The threads of a running worker and the state they share.
//!
//! Per task type: `concurrency` executor threads that take turns polling (see [`executor`]).
//! One lease thread for all types. One mutex guards the shared [`State`]; each waiter has its
//! own condition variable so a change wakes only who cares (a type's idle threads when tasks
//! are queued, the lease thread when an earlier lease is due, `run` while it drains at
//! shutdown).

use super::config::WorkerConfig;
use super::events::{self, Event, LogSink, ms};
use super::metrics::Metrics;
use super::{Summary, result_status, shutdown_reason};
use perago::log::TaskRecord;
use perago::runtime::{
    Attempt, ExecutionContext, Failure, RuntimeTaskResult, TaskStatus, execute_json, panic_message,
};
use perago::task::Task;
use perago_conductor::tasks::{
    self as tasks, InvalidTask, Lost, PollError, PollRequest, PolledTask, TaskExecLog, TaskResult,
};
use perago_conductor::{Client, Error};
use perago_metrics::Loop;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Response timeouts are taken up to a year (a far-off lease needs no renewal).
const MAX_LEASE_SECONDS: u64 = 365 * 24 * 3600;
/// Leases are renewed at most this often.
const MIN_LEASE_INTERVAL: Duration = Duration::from_millis(100);

/// `now + d`, or far in the future when that does not fit.
pub(crate) fn after(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(MAX_LEASE_SECONDS)))
        .unwrap_or(now)
}

/// The most `logs` lines sent with one result (Conductor keeps 10 per update).
const MAX_LOG_LINES: usize = 10;
/// The longest `logs` line sent, in characters.
const MAX_LOG_LINE: usize = 2000;

/// One task type served.
#[derive(Debug)]
pub(crate) struct TaskType {
    pub(crate) task: &'static Task,
    pub(crate) concurrency: usize,
}

/// What every worker thread shares.
pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// `run` waits here: for the shutdown request, then for the tasks in flight.
    pub(crate) run_cv: Condvar,
    /// The lease thread waits here.
    pub(crate) lease_cv: Condvar,
    /// Per task type: its idle threads wait here for a task, the poll token or a shutdown.
    pub(crate) type_cvs: Vec<Condvar>,
    pub(crate) types: Vec<TaskType>,
    /// The client settings; each thread makes its own copy ([`Shared::connection`]).
    pub(crate) client: Client,
    pub(crate) config: WorkerConfig,
    pub(crate) context: ExecutionContext,
    pub(crate) log: Arc<LogSink>,
    /// On with `--metrics-listen`.
    pub(crate) metrics: Option<Metrics>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("types", &self.types)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The mutable part.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Set once, by the first shutdown request: when, and why.
    pub(crate) shutdown: Option<(Instant, String)>,
    /// Set with `shutdown`: update retries that would wait past it give up and log the result.
    pub(crate) report_deadline: Option<Instant>,
    /// Tells the lease thread to end.
    pub(crate) stopped: bool,
    /// Per task type: slots, queue, poll token.
    pub(crate) types: Vec<TypeState>,
    pub(crate) in_flight: HashMap<u64, InFlight>,
    pub(crate) next_key: u64,
    /// Whether the lease thread is waiting, and until when (`None`: until told).
    pub(crate) lease_waiting: Option<Option<Instant>>,
    pub(crate) summary: Summary,
}

/// The executor threads' shared state of one task type.
#[derive(Debug, Default)]
pub(crate) struct TypeState {
    /// Slots free: `concurrency` less the tasks in flight (negative if a server handed out
    /// more than asked).
    pub(crate) free: isize,
    /// Whether a thread holds the poll token (polls, or waits after a failed or empty poll).
    pub(crate) polling: bool,
    /// Polled tasks no thread has taken yet.
    pub(crate) queue: VecDeque<Job>,
    /// Failed polls in a row.
    pub(crate) failures: u32,
}

/// A task between its poll and its report.
#[derive(Debug)]
pub(crate) struct InFlight {
    pub(crate) type_idx: usize,
    pub(crate) task: Arc<PolledTask>,
    pub(crate) phase: Phase,
    pub(crate) lease: Option<Lease>,
}

#[derive(Debug, Clone)]
pub(crate) enum Phase {
    /// The handler runs (or is about to).
    Running,
    /// This result is being reported.
    Reporting(Arc<TaskResult>),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Lease {
    every: Duration,
    next: Instant,
    /// The task's `responseTimeoutSeconds`.
    timeout: Duration,
    /// When Conductor stops waiting for this worker: the poll or the last successful
    /// extension, plus the timeout. Past it, the attempt fence is down.
    expires: Instant,
}

/// A task handed to an executor.
#[derive(Debug)]
pub(crate) struct Job {
    key: u64,
    task: Arc<PolledTask>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `event` to the log; false when the log failed.
    pub(crate) fn event(&self, event: &Event<'_>) -> bool {
        self.logged(events::write(&self.log, event))
    }

    /// Writes a task's record to the log; false when the log failed.
    fn record(&self, record: &TaskRecord) -> bool {
        self.logged(self.log.write(record))
    }

    /// Counts a log that could not be written, and says so on standard error the first time:
    /// the worker goes on, since Conductor still gets every result.
    fn logged(&self, written: std::io::Result<()>) -> bool {
        let Err(error) = written else {
            return true;
        };
        let first = {
            let mut st = self.lock();
            st.summary.log_errors += 1;
            st.summary.log_errors == 1
        };
        if first {
            stderr_line(&format!(
                "perago worker: cannot write the log ({error}); results are still reported to \
                 Conductor, and one that cannot be delivered is written here"
            ));
        }
        false
    }

    /// A result neither Conductor nor the log took (`event` holds it whole): it goes to
    /// standard error, the last place left, it is counted as lost (the worker exits non-zero),
    /// and the worker stops taking work, since the next result would meet the same fate.
    fn lose(&self, event: &Event<'_>) {
        stderr_line(&format!(
            "perago worker: a task result was neither delivered to Conductor nor logged; no \
             more tasks are polled: {}",
            events::line(event)
        ));
        self.lock().summary.lost += 1;
        if let Some(m) = &self.metrics {
            m.lost();
        }
        self.request_shutdown("a task result was lost");
    }

    /// Stops polling and starts the grace period; only the first request counts.
    pub(crate) fn request_shutdown(&self, reason: &str) {
        let mut st = self.lock();
        if st.shutdown.is_none() {
            let now = Instant::now();
            st.shutdown = Some((now, reason.to_owned()));
            st.report_deadline = Some(after(now, self.config.shutdown_grace));
        }
        drop(st);
        if let Some(m) = &self.metrics {
            m.probes.shutting_down();
        }
        self.wake_all();
    }

    /// Waits up to `wait` (on the type's condition), or until shutdown is requested.
    fn pause(&self, type_idx: usize, wait: Duration) {
        let deadline = after(Instant::now(), wait);
        let mut st = self.lock();
        loop {
            let now = Instant::now();
            if st.shutdown.is_some() || now >= deadline {
                return;
            }
            st = self.type_cvs[type_idx]
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A client with its own connection pool: each executor thread (and the lease thread)
    /// keeps its own keep-alive connection, so polls and updates never wait for one or open
    /// a new one.
    pub(crate) fn connection(&self) -> Client {
        self.client
            .clone()
            .with_timeout(self.config.poll_timeout + self.config.request_timeout)
    }

    /// The attempt fence of in-flight task `key`: held while the task was not abandoned and
    /// its lease has not lapsed.
    pub(crate) fn attempt_fence(&self, key: u64) -> Result<(), String> {
        let st = self.lock();
        let Some(entry) = st.in_flight.get(&key) else {
            return Err(
                "the task was abandoned at shutdown and reported FAILED; another attempt may \
                 run it"
                    .to_owned(),
            );
        };
        match entry.lease {
            Some(lease) if Instant::now() >= lease.expires => Err(format!(
                "the task's lease lapsed (responseTimeoutSeconds={}, not extended in time); \
                 Conductor may have handed it to another worker",
                lease.timeout.as_secs()
            )),
            _ => Ok(()),
        }
    }

    /// Wakes every waiter: a shutdown was requested.
    pub(crate) fn wake_all(&self) {
        for cv in &self.type_cvs {
            cv.notify_all();
        }
        self.run_cv.notify_all();
        self.lease_cv.notify_all();
    }
}

/// One executor thread of a task type. The type's threads share its queue and one poll
/// token: an idle thread takes a queued task, else takes the token (when no one holds it and
/// slots are free) and polls `count` = the free slots, queueing what came and running the first
/// itself. With one task in flight a task therefore never changes threads; with more, the
/// others run on the threads that were idle. Ends at shutdown once the queue is empty.
pub(crate) fn executor(shared: &Shared, type_idx: usize, watched: Option<Arc<Loop>>) {
    // Seen by the liveness probe if this thread ends before shutdown.
    let _alive = watched.as_ref().map(Loop::guard);
    let watched = watched.as_deref();
    let client = shared.connection();
    let mut st = shared.lock();
    loop {
        if let Some(job) = st.types[type_idx].queue.pop_front() {
            drop(st);
            run_guarded(shared, &client, type_idx, job, watched);
            st = shared.lock();
            continue;
        }
        if st.shutdown.is_some() {
            return;
        }
        let slot = &mut st.types[type_idx];
        if !slot.polling && slot.free > 0 {
            slot.polling = true;
            let count = slot.free as usize;
            drop(st);
            let polled = panic::catch_unwind(AssertUnwindSafe(|| {
                poll_once(shared, &client, type_idx, count, watched);
            }));
            if let Err(payload) = polled {
                // A bug in the worker's own code: give the token back, so polling goes on.
                shared.event(&Event::InternalError {
                    task_type: shared.types[type_idx].task.name,
                    task_id: None,
                    error: panic_message(payload.as_ref()),
                });
                shared.lock().types[type_idx].polling = false;
                shared.run_cv.notify_all();
            }
            st = shared.lock();
            continue;
        }
        st = shared.type_cvs[type_idx]
            .wait(st)
            .unwrap_or_else(|p| p.into_inner());
    }
}

/// One poll by the holder of the type's poll token: on success the tasks are queued (and
/// become in flight); after a failure or an empty answer the holder waits (backoff or poll
/// interval, cut short by a shutdown). The token is released at the end.
fn poll_once(
    shared: &Shared,
    client: &Client,
    type_idx: usize,
    count: usize,
    watched: Option<&Loop>,
) {
    let task_type = shared.types[type_idx].task.name;
    let config = &shared.config;
    let request = PollRequest {
        task_type,
        worker_id: &config.worker_id,
        domain: config.domain.as_deref(),
        count,
        timeout: config.poll_timeout,
    };
    let polled = {
        let _busy = watched.map(Loop::busy);
        tasks::poll_batch(client, &request)
    };
    if let Some(m) = &shared.metrics {
        m.called(polled.as_ref().err().map(|e| &e.error));
        m.poll(
            type_idx,
            polled.is_err(),
            polled.as_ref().map_or_else(|e| e.received.len(), Vec::len),
        );
    }
    let (items, failed) = match polled {
        Ok(items) => (items, None),
        Err(e) => {
            let PollError {
                error,
                received,
                lost,
                bytes_read,
            } = *e;
            (received, Some((error, lost, bytes_read)))
        }
    };
    let failures = count_failures(shared, type_idx, failed.is_some());
    let mut pause = Duration::ZERO;
    if let Some((error, lost, bytes_read)) = failed {
        pause = config.poll_backoff.delay(failures);
        shared.event(&Event::PollError {
            task_type,
            error: error.to_string(),
            failures,
            retry_in_ms: ms(pause),
            tasks_received: items.len(),
            bytes_read,
        });
        report_lost(shared, task_type, &lost);
    }
    let received = runnable(shared, task_type, items);
    if received.is_empty() {
        if pause.is_zero() {
            pause = config.poll_interval;
        }
    } else {
        // What came is run at once, even from an answer that broke off.
        pause = Duration::ZERO;
        queue(shared, type_idx, received);
    }
    if !pause.is_zero() {
        shared.pause(type_idx, pause);
    }
    release_poll_token(shared, type_idx, pause);
}

/// The type's failed polls in a row, this one counted (0 after a success); a success after
/// failures is logged.
fn count_failures(shared: &Shared, type_idx: usize, failed: bool) -> u32 {
    let (failures, recovered) = {
        let mut st = shared.lock();
        let slot = &mut st.types[type_idx];
        if failed {
            slot.failures = slot.failures.saturating_add(1);
            (slot.failures, 0)
        } else {
            (0, std::mem::take(&mut slot.failures))
        }
    };
    if recovered > 0 {
        shared.event(&Event::PollRecovered {
            task_type: shared.types[type_idx].task.name,
            failures: recovered,
        });
    }
    failures
}

/// Logs what a failed poll may have left `IN_PROGRESS` with the server: a task it was handing
/// out, or, when its answer was not read whole, whatever it handed out.
fn report_lost(shared: &Shared, task_type: &str, lost: &Lost) {
    let (task_id, workflow_id, reason) = match lost {
        Lost::Nothing => (None, None, None),
        Lost::Task(task) => (
            task.task_id.as_deref(),
            task.workflow_instance_id.as_deref(),
            Some("the poll answer broke off while handing out this task"),
        ),
        Lost::Unknown => (
            None,
            None,
            Some(
                "the poll reached the server but its answer was not read whole: tasks it \
                 handed out to this worker, if any, are unknown",
            ),
        ),
    };
    if let Some(reason) = reason {
        shared.event(&Event::TaskLeftInProgress {
            task_type,
            task_id,
            workflow_id,
            reason,
            result: None,
        });
    }
}

/// The polled tasks that can be run; the others are logged.
fn runnable(
    shared: &Shared,
    task_type: &str,
    items: Vec<Result<PolledTask, InvalidTask>>,
) -> Vec<Arc<PolledTask>> {
    let mut received = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Ok(task) => received.push(Arc::new(task)),
            Err(invalid) => {
                shared.event(&Event::InvalidTask {
                    task_type,
                    error: &invalid.reason,
                    task: &invalid.value,
                });
            }
        }
    }
    received
}

/// Gives the type's poll token back once the poller's `pause` is over, waking whoever should
/// take it up.
fn release_poll_token(shared: &Shared, type_idx: usize, pause: Duration) {
    let mut st = shared.lock();
    let slot = &mut st.types[type_idx];
    slot.polling = false;
    // This thread runs the first task it queued: an idle one takes over the polling.
    let hand_over = pause.is_zero() && slot.free > 0;
    let draining = st.shutdown.is_some();
    drop(st);
    if hand_over {
        shared.type_cvs[type_idx].notify_one();
    }
    if draining {
        shared.run_cv.notify_all();
    }
}

/// Makes polled tasks in flight (taking their slots, starting their leases) and queues them
/// for the type's threads; the polling thread takes the first itself.
fn queue(shared: &Shared, type_idx: usize, received: Vec<Arc<PolledTask>>) {
    let config = &shared.config;
    let mut wake_lease = false;
    let n = received.len();
    {
        let mut st = shared.lock();
        let now = Instant::now();
        for task in received {
            let key = st.next_key;
            st.next_key += 1;
            let lease = task.response_timeout_seconds.map(|secs| {
                let timeout = Duration::from_secs(secs.min(MAX_LEASE_SECONDS));
                let every = timeout
                    .mul_f64(config.lease_fraction)
                    .max(MIN_LEASE_INTERVAL);
                Lease {
                    every,
                    next: after(now, every),
                    timeout,
                    expires: after(now, timeout),
                }
            });
            if let (Some(lease), Some(waiting)) = (&lease, st.lease_waiting) {
                wake_lease |= waiting.is_none_or(|until| lease.next < until);
            }
            st.in_flight.insert(
                key,
                InFlight {
                    type_idx,
                    task: Arc::clone(&task),
                    phase: Phase::Running,
                    lease,
                },
            );
            let slot = &mut st.types[type_idx];
            slot.free -= 1;
            slot.queue.push_back(Job { key, task });
        }
    }
    if let Some(m) = &shared.metrics {
        m.started(type_idx, n);
    }
    for _ in 1..n {
        shared.type_cvs[type_idx].notify_one();
    }
    if wake_lease {
        shared.lease_cv.notify_one();
    }
}

/// Runs one job; the runtime already turns a handler's panic into a result, this catches the
/// worker's own bugs so that a slot is never lost.
fn run_guarded(
    shared: &Shared,
    client: &Client,
    type_idx: usize,
    job: Job,
    watched: Option<&Loop>,
) {
    let key = job.key;
    let task = Arc::clone(&job.task);
    let run = || run_job(shared, client, job, watched);
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(run)) {
        shared.event(&Event::InternalError {
            task_type: shared.types[type_idx].task.name,
            task_id: Some(&task.task_id),
            error: panic_message(payload.as_ref()),
        });
        finish(shared, key, type_idx, None);
    }
}

/// Runs one task through the runtime, logs its record and reports it.
fn run_job(shared: &Shared, client: &Client, job: Job, watched: Option<&Loop>) {
    let Job { key, task } = job;
    let type_idx = shared.lock().in_flight.get(&key).map(|f| f.type_idx);
    let Some(type_idx) = type_idx else {
        return; // abandoned before it started: reported FAILED at shutdown
    };
    let spec = shared.types[type_idx].task;
    let fence = || shared.attempt_fence(key);
    let attempt = Attempt {
        task_id: &task.task_id,
        workflow_id: &task.workflow_instance_id,
        attempt: task
            .retry_count
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        worker_id: &shared.config.worker_id,
        fence: &fence,
    };
    let started = Instant::now();
    let result = execute_json(spec, task.input_data.get(), &shared.context, &attempt);
    if let Some(m) = &shared.metrics {
        m.ran(type_idx, &result, started.elapsed());
    }
    let record = TaskRecord::of(
        &result,
        spec.name,
        Some(&task.task_id),
        Some(&task.workflow_instance_id),
    );
    let report = Arc::new(task_result(&task, &result, &shared.config.worker_id));
    let late = match shared.lock().in_flight.get_mut(&key) {
        Some(entry) => {
            entry.phase = Phase::Reporting(Arc::clone(&report));
            false
        }
        None => true,
    };
    shared.record(&record);
    if late {
        shared.event(&Event::LateResult {
            task_type: spec.name,
            task_id: &task.task_id,
            workflow_id: &task.workflow_instance_id,
            status: result.status().as_str(),
        });
        shared.lock().summary.late += 1;
        return;
    }
    if let Some(m) = &shared.metrics {
        m.result(type_idx, result.status());
    }
    let delivered = report_result(shared, client, type_idx, &report, watched);
    finish(shared, key, type_idx, Some((result.status(), delivered)));
}

/// Frees the task's slot and counts its outcome.
fn finish(shared: &Shared, key: u64, type_idx: usize, outcome: Option<(TaskStatus, bool)>) {
    let mut st = shared.lock();
    if st.in_flight.remove(&key).is_some()
        && let Some(m) = &shared.metrics
    {
        m.ended(type_idx);
    }
    st.types[type_idx].free += 1;
    match outcome {
        Some((status, delivered)) => {
            match status {
                TaskStatus::Completed => st.summary.completed += 1,
                TaskStatus::Failed | TaskStatus::FailedWithTerminalError => st.summary.failed += 1,
            }
            if !delivered {
                st.summary.unreported += 1;
            }
        }
        None => st.summary.internal_errors += 1,
    }
    // The finishing thread polls or takes the next task itself: no one else to wake.
    let draining = st.shutdown.is_some();
    drop(st);
    if draining {
        shared.run_cv.notify_all();
    }
}

/// The TaskResult of a runtime result: `outputData` is the payload's `output` (`{}` for a
/// failure); a failure's detail goes in `logs` too.
pub(crate) fn task_result(
    task: &PolledTask,
    result: &RuntimeTaskResult,
    worker_id: &str,
) -> TaskResult {
    let output_data = match result.output() {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    let now = epoch_ms();
    let logs = result
        .failure()
        .map(failure_lines)
        .unwrap_or_default()
        .into_iter()
        .map(|log| TaskExecLog {
            log,
            task_id: task.task_id.clone(),
            created_time: now,
        })
        .collect();
    TaskResult {
        output_data,
        reason_for_incompletion: result.reason().map(str::to_owned),
        logs,
        ..TaskResult::new(task, result_status(result.status())).with_worker_id(worker_id)
    }
}

/// The lines of a failure's detail that its one-line reason does not show: every violation
/// (the reason shows the first), or the error's chain of sources.
fn failure_lines(failure: &Failure) -> Vec<String> {
    let mut lines: Vec<String> = match failure {
        Failure::Task { chain, .. } if chain.len() > 1 => vec![chain.join(": ")],
        _ => {
            let violations = failure.violations();
            if violations.len() > 1 {
                violations.iter().map(|v| v.to_string()).collect()
            } else {
                Vec::new()
            }
        }
    };
    if lines.len() > MAX_LOG_LINES {
        let more = lines.len() - (MAX_LOG_LINES - 1);
        lines.truncate(MAX_LOG_LINES - 1);
        lines.push(format!("… and {more} more (see the worker's log)"));
    }
    for line in &mut lines {
        if let Some((cut, _)) = line.char_indices().nth(MAX_LOG_LINE) {
            line.truncate(cut);
            line.push('…');
        }
    }
    lines
}

fn epoch_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn retryable(error: &Error) -> bool {
    error.is_retryable() || error.status() == Some(429)
}

/// Reports `result`, retrying connection errors, 5xx and 429 with the update backoff until
/// the update horizon (or the shutdown deadline) would pass; then the result is logged whole
/// as `update_failed`, and if the log fails too, [`Shared::lose`] has it. Returns whether it
/// was delivered.
pub(crate) fn report_result(
    shared: &Shared,
    client: &Client,
    type_idx: usize,
    result: &TaskResult,
    watched: Option<&Loop>,
) -> bool {
    let config = &shared.config;
    let task_type = shared.types[type_idx].task.name;
    let metrics = shared.metrics.as_ref();
    let horizon = after(Instant::now(), config.update_horizon);
    let mut attempt = 1;
    loop {
        let updated = {
            let _busy = watched.map(Loop::busy);
            tasks::update(client, result)
        };
        if let Some(m) = metrics {
            m.called(updated.as_ref().err());
        }
        let error = match updated {
            Ok(_) => return true,
            Err(error) => error,
        };
        let wait = config.update_backoff.delay(attempt);
        let deadline = shared
            .lock()
            .report_deadline
            .map_or(horizon, |d| d.min(horizon));
        if !retryable(&error) || after(Instant::now(), wait) >= deadline {
            let event = Event::UpdateFailed {
                task_type,
                task_id: &result.task_id,
                workflow_id: &result.workflow_instance_id,
                attempts: attempt,
                http_status: error.status(),
                error: error.to_string(),
                result,
            };
            if let Some(m) = metrics {
                m.unreported(type_idx);
            }
            if !shared.event(&event) {
                shared.lose(&event);
            }
            return false;
        }
        if let Some(m) = metrics {
            m.update_retry(type_idx);
        }
        shared.event(&Event::UpdateRetry {
            task_type,
            task_id: &result.task_id,
            workflow_id: &result.workflow_instance_id,
            status: result.status.as_str(),
            attempt,
            error: error.to_string(),
            retry_in_ms: ms(wait),
        });
        std::thread::sleep(wait);
        attempt += 1;
    }
}

/// The lease thread: sends `extendLease` for every running task whose lease is due.
pub(crate) fn leases(shared: &Shared, watched: Option<Arc<Loop>>) {
    let _alive = watched.as_ref().map(Loop::guard);
    let watched = watched.as_deref();
    let client = shared.connection();
    loop {
        let due: Vec<(u64, usize, Arc<PolledTask>)> = {
            let mut st = shared.lock();
            loop {
                if st.stopped {
                    return;
                }
                let now = Instant::now();
                let mut due = Vec::new();
                let mut next: Option<Instant> = None;
                for (key, entry) in st.in_flight.iter_mut() {
                    let (Phase::Running, Some(lease)) = (&entry.phase, entry.lease.as_mut()) else {
                        continue;
                    };
                    if lease.next <= now {
                        due.push((*key, entry.type_idx, Arc::clone(&entry.task)));
                        lease.next = after(now, lease.every);
                    }
                    next = Some(next.map_or(lease.next, |n| n.min(lease.next)));
                }
                if !due.is_empty() {
                    break due;
                }
                st.lease_waiting = Some(next);
                st = match next {
                    Some(until) => {
                        shared
                            .lease_cv
                            .wait_timeout(st, until - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                    None => shared.lease_cv.wait(st).unwrap_or_else(|p| p.into_inner()),
                };
                st.lease_waiting = None;
            }
        };
        for (key, type_idx, task) in due {
            let extend = TaskResult::extend_lease(&task, &shared.config.worker_id);
            let sent = Instant::now();
            let extended = {
                let _busy = watched.map(Loop::busy);
                tasks::update(&client, &extend)
            };
            if let Some(m) = &shared.metrics {
                m.called(extended.as_ref().err());
                if extended.is_ok() {
                    m.lease_extended(type_idx);
                }
            }
            match extended {
                Ok(_) => {
                    let mut st = shared.lock();
                    st.summary.lease_extensions += 1;
                    if let Some(lease) = st.in_flight.get_mut(&key).and_then(|f| f.lease.as_mut()) {
                        lease.expires = after(sent, lease.timeout);
                    }
                }
                Err(error) => {
                    shared.event(&Event::LeaseError {
                        task_type: shared.types[type_idx].task.name,
                        task_id: &task.task_id,
                        workflow_id: &task.workflow_instance_id,
                        error: error.to_string(),
                    });
                }
            }
        }
    }
}

/// At the end of the grace period: the tasks still running are taken from their executors and
/// reported `FAILED` (the executors' late results are logged, not reported).
pub(crate) fn abandon_running(shared: &Shared) {
    let abandoned: Vec<(usize, Arc<PolledTask>)> = {
        let mut st = shared.lock();
        let keys: Vec<u64> = st
            .in_flight
            .iter()
            .filter(|(_, f)| matches!(f.phase, Phase::Running))
            .map(|(k, _)| *k)
            .collect();
        keys.into_iter()
            .filter_map(|k| st.in_flight.remove(&k))
            .map(|f| (f.type_idx, f.task))
            .collect()
    };
    if abandoned.is_empty() {
        return;
    }
    if let Some(m) = &shared.metrics {
        for (type_idx, _) in &abandoned {
            m.ended(*type_idx);
            m.result(*type_idx, TaskStatus::Failed);
        }
    }
    let reason = perago::runtime::truncate_reason(
        &shutdown_reason(&shared.config),
        shared.config.runtime.reason_max_length,
    );
    std::thread::scope(|scope| {
        for (type_idx, task) in &abandoned {
            let reason = &reason;
            scope.spawn(move || {
                let name = shared.types[*type_idx].task.name;
                let record = TaskRecord::new(
                    name,
                    Some(&task.task_id),
                    Some(&task.workflow_instance_id),
                    TaskStatus::Failed,
                    Some(reason.clone()),
                    None,
                );
                shared.record(&record);
                let result = TaskResult {
                    reason_for_incompletion: Some(reason.clone()),
                    ..TaskResult::new(task, tasks::TaskResultStatus::Failed)
                        .with_worker_id(&shared.config.worker_id)
                };
                let delivered = report_result(shared, &shared.client, *type_idx, &result, None);
                let mut st = shared.lock();
                st.summary.abandoned += 1;
                if !delivered {
                    st.summary.unreported += 1;
                }
            });
        }
    });
}

/// At a forced exit: every task in flight is logged as `task_left_in_progress`, with the
/// result it was reporting if it had one. Returns how many.
pub(crate) fn leave_in_flight(shared: &Shared, reason: &str) -> usize {
    let in_flight: Vec<(usize, Arc<PolledTask>, Phase)> = shared
        .lock()
        .in_flight
        .values()
        .map(|f| (f.type_idx, Arc::clone(&f.task), f.phase.clone()))
        .collect();
    for (type_idx, task, phase) in &in_flight {
        shared.event(&Event::TaskLeftInProgress {
            task_type: shared.types[*type_idx].task.name,
            task_id: Some(&task.task_id),
            workflow_id: Some(&task.workflow_instance_id),
            reason,
            result: match phase {
                Phase::Running => None,
                Phase::Reporting(result) => Some(result),
            },
        });
    }
    in_flight.len()
}

/// One line on standard error, whatever becomes of it: the worker's last resort.
fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use perago::Violation;

    #[test]
    fn failure_lines_show_what_the_reason_does_not() {
        let one = Failure::Params {
            violations: vec![Violation::new(
                "$.params.a",
                perago::Code::Required,
                "missing",
            )],
            violations_omitted: 0,
        };
        assert!(failure_lines(&one).is_empty());
        let many = Failure::Params {
            violations: (0..12)
                .map(|i| Violation::new(format!("$.params.a{i}"), perago::Code::Required, "x"))
                .collect(),
            violations_omitted: 0,
        };
        let lines = failure_lines(&many);
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[0], "$.params.a0: x");
        assert_eq!(lines[9], "… and 3 more (see the worker's log)");
        let chain = Failure::Task {
            kind: perago::runtime::ErrorKind::Unknown,
            chain: vec!["catalog unavailable".into(), "connection refused".into()],
        };
        assert_eq!(
            failure_lines(&chain),
            ["catalog unavailable: connection refused"]
        );
    }
}
