//! The worker: serves every task of a [`Registry`] against a Conductor server.
//!
//! ```no_run
//! use perago_worker::worker::{Worker, WorkerConfig};
//! # fn registry() -> perago::task::Registry { perago::task::Registry::default() }
//!
//! let mut config = WorkerConfig::new("http://localhost:8080");
//! config.concurrency = 8;
//! let worker = Worker::new(&registry(), config, Worker::stderr_log())?;
//! let shutdown = worker.shutdown_handle(); // e.g. for a signal handler
//! let summary = worker.run(); // until shutdown.shutdown()
//! # Ok::<(), perago_worker::worker::WorkerError>(())
//! ```
//!
//! For each task type, `concurrency` threads take turns batch-polling
//! `GET /api/tasks/poll/batch/{type}?workerid=&domain=&count=&timeout=` with `count` = the free
//! slots (so no more is polled than can run), run the tasks through
//! [`perago::runtime::execute_json`] and report each with `POST /api/tasks`. A task's
//! `inputData` is kept as text when the poll answer is read, and the runtime reads that text
//! once, with the task's generated readers (no `Value` of the input is built):
//!
//! - **results**: `outputData` is the runtime payload's `output` (`{}` for a failure),
//!   `reasonForIncompletion` its reason, `logs` the failure's further detail. Every outcome is
//!   also a `task_result` record in the JSON Lines log.
//! - **blocked or panicking handlers**: a panic is a `FAILED` result (the runtime catches it);
//!   a handler that blocks holds one slot of its type and nothing else.
//! - **updates** are retried on connection errors, 5xx and 429 with exponential backoff
//!   ([`WorkerConfig::update_backoff`]) until [`WorkerConfig::update_horizon`]; a result still
//!   undelivered then is written whole to the log as an `update_failed` event. If the log
//!   cannot take it either, it goes to standard error, counts as [`Summary::lost`], and the
//!   worker stops polling: never dropped silently.
//! - **polls** that fail back off ([`WorkerConfig::poll_backoff`]) and resume when the server
//!   answers again. An answer is read as it arrives, however long it takes while it keeps
//!   coming; when it breaks off, the tasks read whole still run and what it may have left with
//!   the server is logged as `task_left_in_progress`.
//! - **leases**: a task whose Task JSON has a `responseTimeoutSeconds` gets `extendLease: true`
//!   updates every [`WorkerConfig::lease_fraction`] of it while its handler runs.
//! - **shutdown** ([`ShutdownHandle::shutdown`], or SIGINT/SIGTERM in the `worker` command):
//!   polling stops, the tasks in flight get [`WorkerConfig::shutdown_grace`] to finish and be
//!   reported; those still running then are reported `FAILED` (Conductor retries them per
//!   their TaskDef), and [`Worker::run`] returns.
//!
//! Worker events in the log: `worker_started`, `metrics_listening`, `poll_error`, `poll_recovered`,
//! `invalid_task`, `task_left_in_progress`, `update_retry`, `update_failed`, `lease_error`,
//! `late_result`, `internal_error`, `shutdown_requested`, `worker_stopped` (see [`Event`]).
//! A log write that fails is counted ([`Summary::log_errors`]) and said once on standard
//! error. The auth token is never logged.

mod config;
mod engine;
mod events;
mod metrics;

pub use config::WorkerConfig;
pub use events::{Event, LogSink, ServedTask};
pub use perago_conductor::tasks::default_worker_id;
pub use perago_conductor::{AuthToken, Backoff};

use engine::{Shared, State, TaskType, TypeState};
use perago::runtime::{ExecutionContext, TaskStatus};
use perago::task::Registry;
use perago_conductor::tasks::TaskResultStatus;
use perago_conductor::{Client, Retry};
use serde::Serialize;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A worker that cannot start: a bad setting or server URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WorkerError(pub String);

/// What a worker did, returned by [`Worker::run`] and logged as `worker_stopped`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Tasks whose run gave `COMPLETED`.
    pub completed: u64,
    /// Tasks whose run gave `FAILED` or `FAILED_WITH_TERMINAL_ERROR`.
    pub failed: u64,
    /// Tasks still running at the end of the grace period, reported `FAILED`.
    pub abandoned: u64,
    /// Results that could not be delivered (each is in the log as `update_failed`).
    pub unreported: u64,
    /// Results neither delivered nor logged (each was written to standard error; the worker
    /// stopped polling and exits non-zero).
    pub lost: u64,
    /// Log lines that could not be written.
    pub log_errors: u64,
    /// Abandoned tasks whose handler finished later (logged, not reported).
    pub late: u64,
    /// `extendLease` updates delivered.
    pub lease_extensions: u64,
    /// Tasks the worker's own code failed on (a bug; logged as `internal_error`).
    pub internal_errors: u64,
}

/// Asks a running [`Worker`] to shut down; cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct ShutdownHandle {
    shared: Arc<Shared>,
}

impl ShutdownHandle {
    /// Stops polling and lets the tasks in flight finish within the grace period.
    pub fn shutdown(&self) {
        self.shutdown_because("requested");
    }

    /// [`shutdown`](Self::shutdown), logging `reason` (e.g. `SIGTERM`). Only the first request
    /// counts.
    pub fn shutdown_because(&self, reason: &str) {
        self.shared.request_shutdown(reason);
    }

    /// For a forced exit (a second signal): logs each task in flight as
    /// `task_left_in_progress`, with the result it was reporting if it had one, so that every
    /// task the server still holds `IN_PROGRESS` for this worker is named. Returns how many.
    pub fn leave_in_flight(&self, reason: &str) -> usize {
        engine::leave_in_flight(&self.shared, reason)
    }

    /// Whether a shutdown was requested.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.lock().shutdown.is_some()
    }
}

/// A worker over a registry's tasks; [`run`](Worker::run) serves them until shut down.
#[derive(Debug)]
pub struct Worker {
    shared: Arc<Shared>,
}

impl Worker {
    /// A worker serving `registry` (or the tasks `config.tasks` names) with `config`, logging
    /// to `log`. Fails on a bad setting, an unknown task name, or a workspace task without a
    /// workspace directory.
    pub fn new(
        registry: &Registry,
        config: WorkerConfig,
        log: Arc<LogSink>,
    ) -> Result<Worker, WorkerError> {
        config.check().map_err(WorkerError)?;
        let unknown = |name: &String| registry.get(name).is_none();
        if let Some(name) = config
            .tasks
            .iter()
            .chain(config.task_concurrency.keys())
            .find(|n| unknown(n))
        {
            return Err(WorkerError(format!(
                "unknown task `{name}`; this binary has: {}",
                registry.names().join(", ")
            )));
        }
        let types: Vec<TaskType> = registry
            .iter()
            .filter(|t| config.tasks.is_empty() || config.tasks.iter().any(|n| n == t.name))
            .map(|task| TaskType {
                task,
                concurrency: config.concurrency_of(task.name),
            })
            .collect();
        if types.is_empty() {
            return Err(WorkerError("there is no task to serve".to_owned()));
        }
        if config.store.is_none()
            && let Some(t) = types.iter().find(|t| t.task.workspace().is_some())
        {
            return Err(WorkerError(format!(
                "`{}` is a workspace task: give the worker a store (lakeFS or a local store), \
                 or serve only workspace-free tasks (--task NAME)",
                t.task.name
            )));
        }
        let metrics = match config.metrics_listen {
            None => None,
            Some(addr) => {
                let names: Vec<&'static str> = types.iter().map(|t| t.task.name).collect();
                Some(
                    metrics::Metrics::new(&names, &config, addr)
                        .map_err(|e| WorkerError(format!("cannot serve metrics: {e}")))?,
                )
            }
        };
        let mut client = Client::new(&config.server_url)
            .map_err(|e| WorkerError(e.to_string()))?
            .with_retry(Retry::NONE)
            .with_max_body(config.max_poll_bytes)
            .with_timeout(config.poll_timeout + config.request_timeout);
        if let Some(token) = &config.auth_token {
            client = client.with_auth_token(token.expose());
        }
        let state = State {
            types: types
                .iter()
                .map(|t| TypeState {
                    free: t.concurrency as isize,
                    ..TypeState::default()
                })
                .collect(),
            ..State::default()
        };
        let context = ExecutionContext {
            store: config.store.clone(),
            config: config.runtime,
            ..ExecutionContext::default()
        };
        Ok(Worker {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                run_cv: Condvar::new(),
                lease_cv: Condvar::new(),
                type_cvs: types.iter().map(|_| Condvar::new()).collect(),
                types,
                client,
                config,
                context,
                log,
                metrics,
            }),
        })
    }

    /// A log on standard error.
    pub fn stderr_log() -> Arc<LogSink> {
        Arc::new(LogSink::new(Box::new(std::io::stderr())))
    }

    /// A log on `out`.
    pub fn log_to(out: impl Write + Send + 'static) -> Arc<LogSink> {
        Arc::new(LogSink::new(Box::new(out)))
    }

    /// The handle that shuts this worker down.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The worker's id.
    pub fn worker_id(&self) -> &str {
        &self.shared.config.worker_id
    }

    /// Where `/metrics`, `/healthz` and `/readyz` are served, when
    /// [`WorkerConfig::metrics_listen`] is set (the port chosen for port 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.shared.metrics.as_ref().map(|m| m.addr)
    }

    /// The task types served and their concurrency.
    pub fn served(&self) -> Vec<ServedTask> {
        self.shared
            .types
            .iter()
            .map(|t| ServedTask {
                task_type: t.task.name,
                concurrency: t.concurrency,
            })
            .collect()
    }

    /// Serves until shutdown is requested and the tasks in flight are finished (or abandoned
    /// at the end of the grace period) and reported. Handler threads still blocked then are
    /// left behind, detached.
    pub fn run(self) -> Summary {
        let shared = &self.shared;
        let started = Instant::now();
        let config = &shared.config;
        let served = self.served();
        shared.event(&events::Event::WorkerStarted {
            worker_id: &config.worker_id,
            server_url: shared.client.base_url(),
            domain: config.domain.as_deref(),
            auth_token: config.auth_token.is_some(),
            tasks: &served,
            poll_timeout_ms: events::ms(config.poll_timeout),
            poll_interval_ms: events::ms(config.poll_interval),
            request_timeout_ms: events::ms(config.request_timeout),
            update_horizon_ms: events::ms(config.update_horizon),
            max_poll_bytes: config.max_poll_bytes,
        });

        let serving = shared.metrics.as_ref().map(|m| serve_metrics(shared, m));
        let watch = |name: String| shared.metrics.as_ref().map(|m| m.watch(name));
        let lease_thread = {
            let shared = Arc::clone(shared);
            let watched = watch("the lease thread".to_owned());
            std::thread::Builder::new()
                .name("perago-lease".to_owned())
                .spawn(move || engine::leases(&shared, watched))
                .expect("spawning the lease thread")
        };
        // Detached: a thread whose handler never returns must not hold up the end of `run`.
        for (type_idx, t) in shared.types.iter().enumerate() {
            for n in 0..t.concurrency {
                let shared = Arc::clone(shared);
                let name = format!("perago-{}-{n}", t.task.name);
                let watched = watch(format!("executor thread {name}"));
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || engine::executor(&shared, type_idx, watched))
                    .expect("spawning an executor thread");
            }
        }

        // Serve until asked to stop.
        let (shutdown_at, reason, in_flight) = {
            let mut st = shared.lock();
            loop {
                if let Some((at, reason)) = &st.shutdown {
                    break (*at, reason.clone(), st.in_flight.len());
                }
                st = shared.run_cv.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        };
        shared.event(&events::Event::ShutdownRequested {
            reason: &reason,
            in_flight,
            grace_ms: events::ms(config.shutdown_grace),
        });
        // No more polls: wait for a poll in progress (what it brings runs like the others),
        // then the grace period for the tasks in flight.
        let deadline = engine::after(shutdown_at, config.shutdown_grace);
        {
            let mut st = shared.lock();
            while st.types.iter().any(|t| t.polling) {
                st = shared.run_cv.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            loop {
                let now = Instant::now();
                if st.in_flight.is_empty() || now >= deadline {
                    break;
                }
                st = shared
                    .run_cv
                    .wait_timeout(st, deadline.saturating_duration_since(now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        engine::abandon_running(shared);
        // Results being reported: their retries end by the deadline (plus one request).
        {
            let mut st = shared.lock();
            while !st.in_flight.is_empty() {
                st = shared.run_cv.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            st.stopped = true;
        }
        shared.lease_cv.notify_all();
        let _ = lease_thread.join();
        let summary = shared.lock().summary.clone();
        shared.event(&events::Event::WorkerStopped {
            summary: &summary,
            uptime_ms: events::ms(started.elapsed()),
        });
        // Answering 503 until here: the process ends next. The prober ends after its probe in
        // progress, if any, without holding up the return.
        if let (Some(metrics), Some(listener)) = (&shared.metrics, serving) {
            metrics.probes.stop();
            listener.stop();
        }
        summary
    }
}

/// Serves `metrics` on the listener bound at start, and asks Conductor's `GET /health` when
/// the worker made no call for a while (every slot busy), so readiness never waits on polls.
fn serve_metrics(
    shared: &Arc<Shared>,
    metrics: &metrics::Metrics,
) -> perago_metrics::listener::Listener {
    let listener = metrics
        .listener
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .expect("bound in Worker::new, served once");
    let answers = Arc::clone(shared);
    let handler: Arc<perago_metrics::listener::Handler> = Arc::new(move |route, accept| {
        let m = answers.metrics.as_ref().expect("metrics are on");
        perago_metrics::answer(route, accept, &m.registry, &m.probes, Vec::new())
    });
    let limits = perago_metrics::listener::Limits {
        head_timeout: shared.config.request_timeout,
        ..perago_metrics::listener::Limits::default()
    };
    let listener = perago_metrics::listener::Listener::serve(listener, limits, handler)
        .expect("spawning the metrics listener");
    shared.event(&events::Event::MetricsListening {
        addr: &metrics.addr.to_string(),
    });
    let probe = shared
        .client
        .clone()
        .with_timeout(shared.config.request_timeout);
    metrics
        .probes
        .probe_when_idle(move || metrics::answered(probe.get("/health", &[]).err().as_ref()))
        .expect("spawning the readiness prober");
    listener
}

/// What `--metrics-listen` adds to each task, measured in process: the metrics' own work for
/// one task (a poll, a run, its result, its report) done `n` times over `result`, through the
/// same handles the engine records with. For `cargo bench -p perago-worker --bench worker`.
#[doc(hidden)]
pub fn metrics_cost(result: &perago::runtime::RuntimeTaskResult, n: u32) -> Duration {
    let config = WorkerConfig::new("http://127.0.0.1:1");
    let m = metrics::Metrics::new(&["bench"], &config, ([127, 0, 0, 1], 0).into())
        .expect("a loopback port");
    let watched = m.watch("bench".to_owned());
    let start = Instant::now();
    for _ in 0..n {
        drop(watched.busy());
        m.called(None);
        m.poll(0, false, 1);
        m.started(0, 1);
        let ran = Instant::now();
        m.ran(0, std::hint::black_box(result), ran.elapsed());
        m.result(0, result.status());
        drop(watched.busy());
        m.called(None);
        m.ended(0);
    }
    start.elapsed()
}

/// The status a run's result is reported with.
pub fn result_status(status: TaskStatus) -> TaskResultStatus {
    match status {
        TaskStatus::Completed => TaskResultStatus::Completed,
        TaskStatus::Failed => TaskResultStatus::Failed,
        TaskStatus::FailedWithTerminalError => TaskResultStatus::FailedWithTerminalError,
    }
}

/// The reason of a task abandoned at shutdown.
fn shutdown_reason(config: &WorkerConfig) -> String {
    format!(
        "worker {} shut down before the task finished (grace period {})",
        config.worker_id,
        humantime::format_duration(Duration::from_millis(
            config.shutdown_grace.as_millis() as u64
        ))
    )
}
