//! Completions per second and p50/p99 latency through the gateway with 8 concurrent agents,
//! beside the bare Conductor update round trip, against the same Conductor test server in the
//! same run:
//!
//! ```sh
//! cargo bench -p perago-gateway --bench gateway
//! # PERAGO_BENCH_GATEWAY_TASKS (default 2000 per round), PERAGO_BENCH_GATEWAY_ROUNDS (5)
//! # each task's input with a description of N bytes (none by default), as agents' tasks
//! # carry their instructions: PERAGO_BENCH_GATEWAY_INPUT_BYTES=N
//! # each completion naming N changed files (2 by default): PERAGO_BENCH_GATEWAY_FILES_CHANGED=N
//! ```
//!
//! - `bare`: 8 threads, each with its own connection, post a `COMPLETED` result with the same
//!   output (`POST /api/tasks`) for tasks polled beforehand: the round trip an agent would
//!   make if it reported to Conductor itself.
//! - `gateway`: 8 agents, each with its own connection, complete tasks they claimed beforehand
//!   (`POST /v1/tasks/{id}/complete` with a worker-completion/v1 payload), through a fresh
//!   gateway (its own ledger file, `synchronous = FULL`). Latency is the agent's: until the
//!   answer, which comes after the ledger commit. Throughput is counted twice: until the last
//!   answer, and until the last update reached Conductor (the outbox delivered everything).
//!
//! - `gateway (durability normal)`: the same with `--durability normal` (commits in the
//!   write-ahead log, no `fsync` per commit).
//! - `gateway (metrics on)`: the first with `--metrics-listen` (every request, submission,
//!   commit and delivery recorded); its cost is the median over rounds of `on / off` answered
//!   and delivered throughput (target: within 5%).
//!
//! Rounds alternate the contenders; the table shows medians over rounds, and each
//! contender's CPU time per completion (the whole process's: the test server, the gateway and
//! the agents all run in it), summed over the rounds, which a machine shared with other work
//! disturbs less than the rates.

#[path = "../tests/common/agent.rs"]
mod agent;

use agent::Agent;
use perago_conductor::tasks::{self, PollRequest, TaskResult, TaskResultStatus};
use perago_conductor::{Client, Retry};
use perago_gateway::ledger::Durability;
use perago_gateway::log::EventLog;
use perago_gateway::{BearerToken, Gateway, GatewayConfig, TaskTypeSlots};
use perago_testserver::TestServer;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

const AGENTS: usize = 8;
const TOKEN: &str = "bench-token";

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One round of one contender.
struct Round {
    /// Completions in the round.
    n: usize,
    /// CPU time of the whole process during the round's timed part.
    cpu: Duration,
    /// Completions per second until the last answer.
    per_s: f64,
    /// Completions per second until the last update reached Conductor (the gateway only).
    delivered_per_s: Option<f64>,
    p50_us: f64,
    p99_us: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

fn summarise(
    n: usize,
    wall: Duration,
    mut latencies: Vec<Duration>,
    delivered: Option<Duration>,
    cpu: Duration,
) -> Round {
    latencies.sort();
    Round {
        n,
        cpu,
        per_s: n as f64 / wall.as_secs_f64(),
        delivered_per_s: delivered.map(|d| n as f64 / d.as_secs_f64()),
        p50_us: percentile(&latencies, 0.5),
        p99_us: percentile(&latencies, 0.99),
    }
}

/// utime + stime of `/proc/self/stat` (every thread, living or ended), in clock ticks of
/// 10 ms (Linux's `USER_HZ` is 100 on every architecture).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11) // state … cmajflt: fields 3 to 13
        .take(2) // utime stime: fields 14 and 15
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Task `i`'s input: a title, and a description of `PERAGO_BENCH_GATEWAY_INPUT_BYTES`.
fn input(i: usize) -> Value {
    let mut params = json!({"title": format!("t{i}")});
    let bytes = setting("PERAGO_BENCH_GATEWAY_INPUT_BYTES", 0);
    if bytes > 0 {
        params["description"] = json!("x".repeat(bytes));
    }
    json!({ "params": params })
}

/// Completion `i`'s payload, naming `PERAGO_BENCH_GATEWAY_FILES_CHANGED` files.
fn completion(i: usize) -> Value {
    // Read once: this runs in the timed part.
    static FILES: OnceLock<usize> = OnceLock::new();
    let n = *FILES.get_or_init(|| setting("PERAGO_BENCH_GATEWAY_FILES_CHANGED", 2));
    let files: Vec<String> = match n {
        2 => vec!["src/lib.rs".into(), "tests/it.rs".into()],
        n => (0..n)
            .map(|k| format!("src/module_{k}/file_{k}.rs"))
            .collect(),
    };
    json!({"contract": "worker-completion/v1", "summary": format!("Completed task {i}"),
           "files_changed": files,
           "verification": {"command": "cargo test", "exit_code": 0}})
}

/// Runs `work` on 8 threads, each over its share of `items`, after a common start; the wall
/// time and every latency.
fn concurrently<T: Send + Clone + 'static>(
    items: Vec<T>,
    work: impl Fn(usize, &T) + Send + Sync + 'static,
) -> (Duration, Vec<Duration>) {
    let work = Arc::new(work);
    let barrier = Arc::new(Barrier::new(AGENTS + 1));
    let threads: Vec<_> = (0..AGENTS)
        .map(|a| {
            let share: Vec<T> = items.iter().skip(a).step_by(AGENTS).cloned().collect();
            let (work, barrier) = (Arc::clone(&work), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                share
                    .iter()
                    .map(|item| {
                        let t = Instant::now();
                        work(a, item);
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let latencies: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a bench thread"))
        .collect();
    (start.elapsed(), latencies)
}

fn bare(server: &TestServer, n: usize, done: &mut usize) -> Round {
    for i in 0..n {
        server.enqueue("bench_bare", input(i));
    }
    let client = Client::new(&server.base_url())
        .unwrap()
        .with_retry(Retry::NONE);
    let mut polled = Vec::new();
    while polled.len() < n {
        let request = PollRequest {
            task_type: "bench_bare",
            worker_id: "bench",
            domain: None,
            count: n - polled.len(),
            timeout: Duration::from_millis(100),
        };
        polled.extend(
            tasks::poll_batch(&client, &request)
                .unwrap()
                .into_iter()
                .map(Result::unwrap),
        );
    }
    let items: Vec<(usize, String, String)> = polled
        .into_iter()
        .enumerate()
        .map(|(i, t)| (i, t.task_id, t.workflow_instance_id))
        .collect();
    let clients: Arc<Vec<Client>> = Arc::new(
        (0..AGENTS)
            .map(|_| client.clone().with_timeout(Duration::from_secs(30)))
            .collect(),
    );
    let cpu = cpu_time();
    let (wall, latencies) = concurrently(items, move |a, (i, task_id, workflow)| {
        let mut output = Map::new();
        output.insert("result".into(), completion(*i));
        let result = TaskResult {
            workflow_instance_id: workflow.clone(),
            task_id: task_id.clone(),
            status: TaskResultStatus::Completed,
            output_data: output,
            reason_for_incompletion: None,
            callback_after_seconds: None,
            worker_id: Some("bench".into()),
            logs: Vec::new(),
            extend_lease: false,
        };
        tasks::update(&clients[a], &result).expect("the update");
    });
    let cpu = cpu_time().saturating_sub(cpu);
    *done += n;
    assert!(server.wait_terminal(*done, Duration::from_secs(600)));
    summarise(n, wall, latencies, None, cpu)
}

fn gateway(
    server: &TestServer,
    n: usize,
    done: &mut usize,
    durability: Durability,
    metrics: bool,
) -> Round {
    let dir = tempfile::tempdir().unwrap();
    let mut config = GatewayConfig::new(
        &server.base_url(),
        vec![TaskTypeSlots {
            name: "bench_agent".into(),
            slots: n,
        }],
        BearerToken::new(TOKEN).unwrap(),
    );
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.db = dir.path().join("bench.db");
    config.durability = durability;
    config.poll_timeout = Duration::from_millis(100);
    if metrics {
        config.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    }
    let gateway = Gateway::start(config, EventLog::discard()).unwrap();
    for i in 0..n {
        server.enqueue("bench_agent", input(i));
    }
    let agents: Arc<Vec<Agent>> = Arc::new(
        (0..AGENTS)
            .map(|a| Agent::new(&gateway.base_url(), TOKEN, &format!("agent-{a}")))
            .collect(),
    );
    // Claims, not timed: each agent completes what it claimed.
    let claimed: Vec<(usize, usize, String)> = {
        let agents = Arc::clone(&agents);
        let threads: Vec<_> = (0..AGENTS)
            .map(|a| {
                let agents = Arc::clone(&agents);
                // n split exactly: more claims than slots would be refused (429).
                let per_agent = n / AGENTS + usize::from(a < n % AGENTS);
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    while mine.len() < per_agent {
                        let reply = agents[a].claim("bench_agent");
                        match reply.status {
                            200 => mine.push(reply.json["task_id"].as_str().unwrap().to_owned()),
                            204 => break,
                            other => panic!("claim: {other} {}", reply.text),
                        }
                    }
                    mine
                })
            })
            .collect();
        threads
            .into_iter()
            .enumerate()
            .flat_map(|(a, t)| {
                t.join()
                    .unwrap()
                    .into_iter()
                    .enumerate()
                    .map(move |(i, id)| (a, i * AGENTS + a, id))
            })
            .collect()
    };
    assert_eq!(claimed.len(), n, "every task claimed");
    // `concurrently` shares items round-robin: give each thread its own agent's tasks.
    let mut by_agent: Vec<Vec<(usize, usize, String)>> = vec![Vec::new(); AGENTS];
    for item in claimed {
        by_agent[item.0].push(item);
    }
    let mut items = Vec::with_capacity(n);
    let longest = by_agent.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for list in &by_agent {
            if let Some(item) = list.get(i) {
                items.push(item.clone());
            }
        }
    }
    let bodies = Arc::clone(&agents);
    let cpu = cpu_time();
    let start = Instant::now();
    let (wall, latencies) = concurrently(items, move |_, (a, i, task_id)| {
        let reply = bodies[*a].complete(task_id, &json!({"payload": completion(*i)}));
        assert_eq!(reply.status, 200, "{}", reply.text);
    });
    *done += n;
    assert!(server.wait_terminal(*done, Duration::from_secs(600)));
    let delivered = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    gateway.stop();
    summarise(n, wall, latencies, Some(delivered), cpu)
}

/// The process's CPU time per completion over `rounds`, in µs.
fn cpu_per(rounds: &[Round]) -> f64 {
    let cpu: Duration = rounds.iter().map(|r| r.cpu).sum();
    let n: usize = rounds.iter().map(|r| r.n).sum();
    cpu.as_secs_f64() * 1e6 / n as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: a quick smoke round only.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = if quick {
        40
    } else {
        setting("PERAGO_BENCH_GATEWAY_TASKS", 2000)
    };
    let rounds = if quick {
        1
    } else {
        setting("PERAGO_BENCH_GATEWAY_ROUNDS", 5)
    };
    let server = TestServer::start();
    let mut done = 0;
    let mut bares = Vec::new();
    let mut gateways = Vec::new();
    let mut normals = Vec::new();
    let mut metered = Vec::new();
    let mut on_off = Vec::new();
    let show = |name: &str, r: &Round| {
        println!(
            "  {name}: {:.0}/s answered, {:.0}/s delivered (p50 {:.0} µs, p99 {:.0} µs; \
             CPU {:.0} µs per completion)",
            r.per_s,
            r.delivered_per_s.unwrap_or(r.per_s),
            r.p50_us,
            r.p99_us,
            cpu_per(std::slice::from_ref(r))
        );
    };
    for round in 0..rounds {
        println!("round {}:", round + 1);
        let b = bare(&server, n, &mut done);
        show("bare", &b);
        // Which of metrics off and on goes first alternates, so neither always runs warmer.
        let (g, m) = if round % 2 == 0 {
            let g = gateway(&server, n, &mut done, Durability::Full, false);
            (g, gateway(&server, n, &mut done, Durability::Full, true))
        } else {
            let m = gateway(&server, n, &mut done, Durability::Full, true);
            (gateway(&server, n, &mut done, Durability::Full, false), m)
        };
        show("gateway (durability full)", &g);
        show("gateway (durability full, metrics on)", &m);
        let g2 = gateway(&server, n, &mut done, Durability::Normal, false);
        show("gateway (durability normal)", &g2);
        on_off.push((
            m.per_s / g.per_s,
            m.delivered_per_s.unwrap_or(0.0) / g.delivered_per_s.unwrap_or(1.0),
        ));
        metered.push(m);
        bares.push(b);
        gateways.push(g);
        normals.push(g2);
    }
    let col = |rs: &[Round], f: fn(&Round) -> f64| median(rs.iter().map(f).collect());
    let (b_s, g_s) = (col(&bares, |r| r.per_s), col(&gateways, |r| r.per_s));
    let g_d = col(&gateways, |r| r.delivered_per_s.unwrap_or(0.0));
    let (n_s, n_d) = (
        col(&normals, |r| r.per_s),
        col(&normals, |r| r.delivered_per_s.unwrap_or(0.0)),
    );
    println!("\n{AGENTS} agents, {n} completions per round, {rounds} rounds, medians:");
    println!("| contender | answered/s | delivered/s | p50 | p99 | CPU per completion |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, rs) in [
        ("bare Conductor update", &bares),
        ("gateway", &gateways),
        ("gateway `--durability normal`", &normals),
        ("gateway `--metrics-listen`", &metered),
    ] {
        let delivered = if std::ptr::eq(rs, &bares) {
            String::new()
        } else {
            format!("{:.0}", col(rs, |r| r.delivered_per_s.unwrap_or(0.0)))
        };
        println!(
            "| {name} | {:.0} | {delivered} | {:.0} µs | {:.0} µs | {:.0} µs |",
            col(rs, |r| r.per_s),
            col(rs, |r| r.p50_us),
            col(rs, |r| r.p99_us),
            cpu_per(rs)
        );
    }
    println!(
        "gateway / bare: {:.2} answered (target ≥ 0.9), {:.2} delivered (target ≥ 0.8); with \
         --durability normal {:.2}, {:.2}; CPU per completion {:.1}× the bare update's",
        g_s / b_s,
        g_d / b_s,
        n_s / b_s,
        n_d / b_s,
        cpu_per(&gateways) / cpu_per(&bares)
    );
    println!(
        "metrics on / off (median of the rounds' ratios): {:.3} answered, {:.3} delivered \
         (target ≥ 0.95)",
        median(on_off.iter().map(|r| r.0).collect()),
        median(on_off.iter().map(|r| r.1).collect())
    );
}
