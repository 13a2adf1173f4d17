//! The worker's overhead against the test server on loopback, with a no-op handler.
//!
//! ```sh
//! cargo bench -p perago-worker --bench worker
//! ```
//!
//! Side by side, in the same run, each measured over `TASKS` tasks per round, rounds
//! interleaved, medians reported:
//!
//! - `raw`: the HTTP work a task needs and nothing else: `in_flight` threads, each with its own
//!   connection, polling one task (`GET /api/tasks/poll/batch/...?count=1`) and posting a fixed
//!   `COMPLETED` result (`POST /api/tasks`), with the same client code the worker uses;
//! - `worker`: `perago_worker::worker::Worker` with `concurrency = in_flight` serving a no-op task
//!   through the runtime (input and result validated, the JSON Lines record serialised), from
//!   its start (threads spawned) to the last result on the server;
//! - `worker, metrics on`: the same with `metrics_listen` set (`--metrics-listen`): every poll,
//!   result, duration and call to Conductor recorded. Its cost is the median over rounds of
//!   `metrics on / metrics off - 1` (target: within 2%).
//!
//! The worker's overhead per task is `worker - raw` time per task, relative to `raw` (the
//! loopback round trips). A third line measures the worker's own CPU work per task in process
//! (run through the runtime, build and serialise the TaskResult and the log record), without
//! HTTP or threads. `PERAGO_BENCH_TASKS` and `PERAGO_BENCH_ROUNDS` change the sizes.

use perago::log::TaskRecord;
use perago::task::TaskError;
use perago_conductor::tasks::{self as tasks, PollRequest, TaskResult, TaskResultStatus};
use perago_conductor::{Client, Retry};
use perago_example::contracts::validate_song_params::ValidateSongParams;
use perago_example::contracts::validate_song_result::ValidateSongResult;
use perago_testserver::TestServer;
use perago_worker::worker::{Worker, WorkerConfig, result_status};
use serde_json::{Value, json};
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The no-op task.
#[perago::task(name = "bench_noop")]
fn bench_noop(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    Ok(ValidateSongResult {
        valid: true,
        reason: None,
    })
}

fn input() -> Value {
    json!({"params": {"song_id": "song-000123"}})
}

fn setting(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The worker's log: counts `task_result` records and tells a waiter when the `n`th is written
/// (waking it only then, so that waiting takes no CPU from the server and the worker measured).
#[derive(Clone)]
struct Counter(Arc<(Mutex<usize>, Condvar)>, usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        const NEEDLE: &[u8] = br#""event":"task_result""#;
        if buf.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
            let mut count = self.0.0.lock().unwrap();
            *count += 1;
            if *count == self.1 {
                self.0.1.notify_all();
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Counter {
    fn wait(&self) {
        let count = self.0.0.lock().unwrap();
        drop(self.0.1.wait_while(count, |c| *c < self.1).unwrap());
    }
}

/// Total time and the time spent in polls and updates.
struct Raw {
    total: Duration,
    poll: Duration,
    update: Duration,
}

fn raw(n: usize, in_flight: usize) -> Raw {
    let server = TestServer::start();
    for _ in 0..n {
        server.enqueue("bench_noop", input());
    }
    let client = Client::new(&server.base_url())
        .unwrap()
        .with_retry(Retry::NONE);
    let taken = AtomicUsize::new(0);
    let output = json!({"result": {"valid": true, "reason": null}});
    let output = output.as_object().unwrap();
    let start = Instant::now();
    let times: Vec<(Duration, Duration)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..in_flight)
            .map(|_| {
                // Its own connection pool, like each worker thread.
                let client = client.clone().with_timeout(Duration::from_secs(10));
                let taken = &taken;
                scope.spawn(move || {
                    let (mut poll, mut update) = (Duration::ZERO, Duration::ZERO);
                    while taken.fetch_add(1, Ordering::Relaxed) < n {
                        let task = loop {
                            let t0 = Instant::now();
                            let mut polled = tasks::poll_batch(
                                &client,
                                &PollRequest {
                                    task_type: "bench_noop",
                                    worker_id: "raw",
                                    domain: None,
                                    count: 1,
                                    timeout: Duration::from_millis(100),
                                },
                            )
                            .unwrap();
                            poll += t0.elapsed();
                            if let Some(task) = polled.pop() {
                                break task.unwrap();
                            }
                        };
                        let result = TaskResult {
                            output_data: output.clone(),
                            ..TaskResult::new(&task, TaskResultStatus::Completed)
                                .with_worker_id("raw")
                        };
                        let t0 = Instant::now();
                        tasks::update(&client, &result).unwrap();
                        update += t0.elapsed();
                    }
                    (poll, update)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total = start.elapsed();
    if !server.wait_terminal(n, Duration::ZERO) {
        let mut statuses = std::collections::BTreeMap::new();
        for t in server.tasks() {
            *statuses
                .entry(format!(
                    "{:?} polls={} updates={}",
                    t.status,
                    t.poll_count,
                    t.updates.len()
                ))
                .or_insert(0) += 1;
        }
        panic!("not all terminal: {statuses:?}");
    }
    Raw {
        total,
        poll: times.iter().map(|t| t.0).sum(),
        update: times.iter().map(|t| t.1).sum(),
    }
}

fn worker(n: usize, in_flight: usize, metrics: bool) -> Duration {
    let server = TestServer::start();
    let mut config = WorkerConfig::new(server.base_url());
    config.concurrency = in_flight;
    config.poll_interval = Duration::ZERO;
    config.poll_timeout = Duration::from_millis(100);
    if metrics {
        config.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    }
    let log = Counter(Arc::default(), n);
    let worker = Worker::new(
        &perago::tasks![bench_noop],
        config,
        Worker::log_to(log.clone()),
    )
    .unwrap();
    let shutdown = worker.shutdown_handle();
    for _ in 0..n {
        server.enqueue("bench_noop", input());
    }
    let start = Instant::now();
    let running = std::thread::spawn(move || worker.run());
    // Every task ran; then the last results reach the server (a few state changes to watch).
    log.wait();
    assert!(server.wait_terminal(n, Duration::from_secs(60)));
    let total = start.elapsed();
    shutdown.shutdown();
    let summary = running.join().unwrap();
    assert_eq!(summary.completed as usize, n);
    total
}

/// The worker's CPU work per task without HTTP: runtime, TaskResult, log record.
fn in_process(n: usize) -> Duration {
    let task = tasks::PolledTask::from_value(&json!({
        "taskId": "t", "workflowInstanceId": "w", "inputData": input(),
        "responseTimeoutSeconds": 30
    }))
    .unwrap();
    let log = Worker::log_to(std::io::sink());
    let context = perago::runtime::ExecutionContext::default();
    let start = Instant::now();
    for _ in 0..n {
        let result = perago::runtime::execute_json(
            &bench_noop::TASK,
            task.input_data.get(),
            &context,
            &perago::runtime::Attempt::LOCAL,
        );
        let _ = log.write(&TaskRecord::of(&result, "bench_noop", Some("t"), Some("w")));
        let report = TaskResult {
            output_data: result.output().and_then(Value::as_object).cloned().unwrap(),
            ..TaskResult::new(&task, result_status(result.status())).with_worker_id("bench")
        };
        black_box(serde_json::to_vec(&report).unwrap());
    }
    start.elapsed()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once with small sizes.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = setting("PERAGO_BENCH_TASKS", if quick { 20 } else { 1000 });
    let rounds = setting("PERAGO_BENCH_ROUNDS", if quick { 1 } else { 9 });
    println!(
        "worker overhead: {n} no-op tasks per round, {rounds} rounds of raw then worker, medians \
         (the added time is the median of each round's worker - raw)"
    );
    for in_flight in [1, 8] {
        let mut raw_us = Vec::new();
        let mut poll_us = Vec::new();
        let mut update_us = Vec::new();
        let mut worker_us = Vec::new();
        let mut added_us = Vec::new();
        let mut metrics_us = Vec::new();
        let mut metrics_ratio = Vec::new();
        for round in 0..rounds {
            let r = raw(n, in_flight);
            // Which of off and on goes first alternates, so neither always runs warmer.
            let (w, m) = if round % 2 == 0 {
                let w = worker(n, in_flight, false);
                (w, worker(n, in_flight, true))
            } else {
                let m = worker(n, in_flight, true);
                (worker(n, in_flight, false), m)
            };
            let (w, m) = (
                w.as_secs_f64() * 1e6 / n as f64,
                m.as_secs_f64() * 1e6 / n as f64,
            );
            metrics_us.push(m);
            metrics_ratio.push(m / w - 1.0);
            let per_task = r.total.as_secs_f64() * 1e6 / n as f64;
            raw_us.push(per_task);
            poll_us.push(r.poll.as_secs_f64() * 1e6 / n as f64);
            update_us.push(r.update.as_secs_f64() * 1e6 / n as f64);
            worker_us.push(w);
            added_us.push(w - per_task);
        }
        let (raw_t, worker_t, added) = (median(raw_us), median(worker_us), median(added_us));
        println!(
            "in flight {in_flight}: raw {:.0} tasks/s, {raw_t:.1} us/task (poll {:.1} us + update \
             {:.1} us per task, summed over threads) | worker {:.0} tasks/s, {worker_t:.1} \
             us/task | added {added:+.1} us/task = {:+.1}% of the round trips",
            1e6 / raw_t,
            median(poll_us),
            median(update_us),
            1e6 / worker_t,
            added / raw_t * 100.0
        );
        println!(
            "in flight {in_flight}: worker with metrics on {:.1} us/task | metrics on vs off: \
             {:+.2}% per task (median of the rounds' ratios; target within 2%)",
            median(metrics_us),
            median(metrics_ratio) * 100.0
        );
    }
    let m = if quick { 100 } else { 100_000 };
    let cpu: Vec<f64> = (0..rounds.min(5))
        .map(|_| in_process(m).as_secs_f64() * 1e6 / m as f64)
        .collect();
    println!(
        "in process (runtime + TaskResult + log record, no HTTP, no threads): {:.2} us/task",
        median(cpu)
    );
    let result = perago::runtime::execute_json(
        &bench_noop::TASK,
        r#"{"params": {"song_id": "song-000123"}}"#,
        &perago::runtime::ExecutionContext::default(),
        &perago::runtime::Attempt::LOCAL,
    );
    let recorded: Vec<f64> = (0..rounds.min(5))
        .map(|_| {
            perago_worker::worker::metrics_cost(&result, m as u32).as_secs_f64() * 1e9 / m as f64
        })
        .collect();
    println!(
        "in process, the metrics' own work per task (--metrics-listen: a poll, a run, its \
         result, its report): {:.0} ns/task",
        median(recorded)
    );
}
