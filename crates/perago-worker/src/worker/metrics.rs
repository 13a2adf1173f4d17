//! The worker's metrics and probes, on when [`WorkerConfig::metrics_listen`] is set.
//!
//! Every series a task type can have is made at start, so a dashboard sees zeros rather than
//! gaps, and the engine records through handles held per task type: an increment is an atomic
//! add, with no lookup and no lock (`cargo bench -p perago-worker --bench worker` measures
//! the cost). Labels are the task type and fixed words, never a task id.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `perago_worker_polls_total` | counter | `task_type`, `outcome` (`tasks`, `empty`, `error`) |
//! | `perago_worker_tasks_total` | counter | `task_type`, `status` (`COMPLETED`, `FAILED`, `FAILED_WITH_TERMINAL_ERROR`) |
//! | `perago_worker_task_duration_seconds` | histogram | `task_type` |
//! | `perago_worker_in_flight` | gauge | `task_type` |
//! | `perago_worker_update_retries_total` | counter | `task_type` |
//! | `perago_worker_unreported_results_total` | counter | `task_type` |
//! | `perago_worker_lost_results_total` | counter | |
//! | `perago_worker_contract_violations_total` | counter | `task_type`, `stage` (`input`, `params`, `result`) |
//! | `perago_worker_lease_extensions_total` | counter | `task_type` |
//! | `perago_worker_workspace_bytes_total` | counter | `task_type`, `direction` (`download`, `upload`) |

use super::config::WorkerConfig;
use perago::runtime::{Failure, RuntimeTaskResult, TaskStatus};
use perago_conductor::Error;
use perago_metrics::prometheus_client::metrics::counter::Counter;
use perago_metrics::prometheus_client::metrics::family::Family;
use perago_metrics::prometheus_client::metrics::gauge::Gauge;
use perago_metrics::prometheus_client::metrics::histogram::Histogram;
use perago_metrics::prometheus_client::registry::Registry;
use perago_metrics::{Loop, Probes};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The task duration histogram's buckets, in seconds: from a no-op task to an hour.
const DURATION_BUCKETS: [f64; 18] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
    1800.0, 3600.0,
];

type Labels = [(&'static str, &'static str); 2];
type TypeLabel = [(&'static str, &'static str); 1];

/// The handles of one task type's series.
#[derive(Debug)]
pub(crate) struct TypeMetrics {
    polls_tasks: Counter,
    polls_empty: Counter,
    polls_error: Counter,
    completed: Counter,
    failed: Counter,
    terminal: Counter,
    duration: Histogram,
    in_flight: Gauge,
    update_retries: Counter,
    unreported: Counter,
    violations_input: Counter,
    violations_params: Counter,
    violations_result: Counter,
    lease_extensions: Counter,
    bytes_download: Counter,
    bytes_upload: Counter,
}

/// A worker's metrics, probes and (until `run`) its bound listener.
#[derive(Debug)]
pub(crate) struct Metrics {
    pub(crate) registry: Registry,
    pub(crate) types: Vec<TypeMetrics>,
    lost: Counter,
    pub(crate) probes: Arc<Probes>,
    /// A step of a loop is stuck past this: twice the longest a Conductor call may take.
    pub(crate) stuck_after: Duration,
    /// Bound in `Worker::new` (so a port in use is a start-up error), served from `run`.
    pub(crate) listener: Mutex<Option<TcpListener>>,
    pub(crate) addr: SocketAddr,
}

impl Metrics {
    /// The metrics of `task_types`, listening on `addr`.
    pub(crate) fn new(
        task_types: &[&'static str],
        config: &WorkerConfig,
        addr: SocketAddr,
    ) -> Result<Metrics, String> {
        let listener = perago_metrics::listener::bind(addr)?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let mut registry = Registry::default();
        let polls = Family::<Labels, Counter>::default();
        registry.register(
            "perago_worker_polls",
            "Batch polls, by outcome: tasks (the poll brought tasks), empty, error",
            polls.clone(),
        );
        let tasks = Family::<Labels, Counter>::default();
        registry.register(
            "perago_worker_tasks",
            "Task results, by the status reported to Conductor",
            tasks.clone(),
        );
        let duration =
            Family::<TypeLabel, Histogram, fn() -> Histogram>::new_with_constructor(|| {
                Histogram::new(DURATION_BUCKETS)
            });
        registry.register(
            "perago_worker_task_duration_seconds",
            "Time to run a task through the runtime: input checks, workspace stages, handler, \
             result checks, publication",
            duration.clone(),
        );
        let in_flight = Family::<TypeLabel, Gauge>::default();
        registry.register(
            "perago_worker_in_flight",
            "Tasks polled and not yet reported",
            in_flight.clone(),
        );
        let retries = Family::<TypeLabel, Counter>::default();
        registry.register(
            "perago_worker_update_retries",
            "Task result updates retried after a connection error, a 5xx or a 429",
            retries.clone(),
        );
        let unreported = Family::<TypeLabel, Counter>::default();
        registry.register(
            "perago_worker_unreported_results",
            "Task results not delivered within the retry horizon, written whole to the log \
             (update_failed)",
            unreported.clone(),
        );
        let lost = Counter::default();
        registry.register(
            "perago_worker_lost_results",
            "Task results neither delivered nor logged (written to standard error; the worker \
             stops polling and exits 1)",
            lost.clone(),
        );
        let violations = Family::<Labels, Counter>::default();
        registry.register(
            "perago_worker_contract_violations",
            "Tasks failed by their contract, by stage: input (the key set or the workspace \
             input), params, result",
            violations.clone(),
        );
        let leases = Family::<TypeLabel, Counter>::default();
        registry.register(
            "perago_worker_lease_extensions",
            "extendLease updates Conductor took",
            leases.clone(),
        );
        let bytes = Family::<Labels, Counter>::default();
        registry.register(
            "perago_worker_workspace_bytes",
            "Bytes workspace tasks moved: download (materialised), upload (published)",
            bytes.clone(),
        );
        let types = task_types
            .iter()
            .map(|&t| {
                let pair = |key, value| [("task_type", t), (key, value)];
                TypeMetrics {
                    polls_tasks: polls.get_or_create_owned(&pair("outcome", "tasks")),
                    polls_empty: polls.get_or_create_owned(&pair("outcome", "empty")),
                    polls_error: polls.get_or_create_owned(&pair("outcome", "error")),
                    completed: tasks.get_or_create_owned(&pair("status", "COMPLETED")),
                    failed: tasks.get_or_create_owned(&pair("status", "FAILED")),
                    terminal: tasks
                        .get_or_create_owned(&pair("status", "FAILED_WITH_TERMINAL_ERROR")),
                    duration: duration.get_or_create_owned(&[("task_type", t)]),
                    in_flight: in_flight.get_or_create_owned(&[("task_type", t)]),
                    update_retries: retries.get_or_create_owned(&[("task_type", t)]),
                    unreported: unreported.get_or_create_owned(&[("task_type", t)]),
                    violations_input: violations.get_or_create_owned(&pair("stage", "input")),
                    violations_params: violations.get_or_create_owned(&pair("stage", "params")),
                    violations_result: violations.get_or_create_owned(&pair("stage", "result")),
                    lease_extensions: leases.get_or_create_owned(&[("task_type", t)]),
                    bytes_download: bytes.get_or_create_owned(&pair("direction", "download")),
                    bytes_upload: bytes.get_or_create_owned(&pair("direction", "upload")),
                }
            })
            .collect();
        let call = config.poll_timeout + config.request_timeout;
        Ok(Metrics {
            registry,
            types,
            lost,
            probes: Probes::new(call),
            stuck_after: call * 2,
            listener: Mutex::new(Some(listener)),
            addr,
        })
    }

    /// A poll ended: it brought `tasks` tasks, or failed.
    pub(crate) fn poll(&self, type_idx: usize, failed: bool, tasks: usize) {
        let t = &self.types[type_idx];
        match (failed, tasks) {
            (true, _) => t.polls_error.inc(),
            (false, 0) => t.polls_empty.inc(),
            (false, _) => t.polls_tasks.inc(),
        };
    }

    /// `n` tasks became in flight.
    pub(crate) fn started(&self, type_idx: usize, n: usize) {
        self.types[type_idx]
            .in_flight
            .inc_by(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// A task is no longer in flight.
    pub(crate) fn ended(&self, type_idx: usize) {
        self.types[type_idx].in_flight.dec();
    }

    /// A run through the runtime: how long it took, its violations and workspace bytes.
    pub(crate) fn ran(&self, type_idx: usize, result: &RuntimeTaskResult, took: Duration) {
        let t = &self.types[type_idx];
        t.duration.observe(took.as_secs_f64());
        match result.failure() {
            Some(Failure::Input { .. } | Failure::WorkspaceInput { .. }) => {
                t.violations_input.inc();
            }
            Some(Failure::Params { .. }) => {
                t.violations_params.inc();
            }
            Some(Failure::Result { .. }) => {
                t.violations_result.inc();
            }
            _ => {}
        }
        let bytes = result.workspace_bytes();
        if bytes.downloaded > 0 {
            t.bytes_download.inc_by(bytes.downloaded);
        }
        if bytes.uploaded > 0 {
            t.bytes_upload.inc_by(bytes.uploaded);
        }
    }

    /// A result with `status` is reported (or, failing that, logged).
    pub(crate) fn result(&self, type_idx: usize, status: TaskStatus) {
        let t = &self.types[type_idx];
        match status {
            TaskStatus::Completed => t.completed.inc(),
            TaskStatus::Failed => t.failed.inc(),
            TaskStatus::FailedWithTerminalError => t.terminal.inc(),
        };
    }

    pub(crate) fn update_retry(&self, type_idx: usize) {
        self.types[type_idx].update_retries.inc();
    }

    pub(crate) fn unreported(&self, type_idx: usize) {
        self.types[type_idx].unreported.inc();
    }

    pub(crate) fn lost(&self) {
        self.lost.inc();
    }

    pub(crate) fn lease_extended(&self, type_idx: usize) {
        self.types[type_idx].lease_extensions.inc();
    }

    /// Records a call to Conductor for readiness: it failed with `error`, or not.
    pub(crate) fn called(&self, error: Option<&Error>) {
        self.probes.conductor().record(answered(error));
    }

    /// A watched loop named `name`.
    pub(crate) fn watch(&self, name: String) -> Arc<Loop> {
        self.probes.watch(name, self.stuck_after)
    }
}

/// Whether Conductor answered a call: any answer but a 5xx or a 429 (it is there and
/// working); `Err` says why not.
pub(crate) fn answered(error: Option<&Error>) -> Result<(), String> {
    match error {
        None => Ok(()),
        Some(e) if e.status().is_some_and(|s| s < 500 && s != 429) => Ok(()),
        Some(e) => Err(e.to_string()),
    }
}
