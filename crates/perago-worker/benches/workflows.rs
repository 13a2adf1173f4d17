//! `workflows check` on large WorkflowDefs: is it fast enough to run on every commit?
//!
//! ```sh
//! cargo bench -p perago-worker --bench workflows
//! ```
//!
//! A WorkflowDef of about `PERAGO_BENCH_TASKS` (default 200) example tasks: validate_song,
//! then SWITCHes on its `valid`, each case a build_features → publish_features pair carrying
//! the workspace along and a nested SWITCH with another pair, so every expression is followed
//! through what has run on every path. Side by side in one run, medians of
//! `PERAGO_BENCH_ROUNDS` (default 15): the check whole (contracts already loaded, as the CLI
//! has them once per run), and a bare parse of the file's text (the floor: reading it at all).

use perago_worker::workflow::{Contracts, check_file};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A pair of workspace tasks reading what ran before them.
fn pair(i: usize) -> Vec<Value> {
    vec![
        json!({"name": "build_features", "taskReferenceName": format!("features_{i}"), "type": "SIMPLE",
               "inputParameters": {"workspace": "${workflow.input.workspace}",
                   "params": {"feature_set": "${workflow.input.feature_set}", "min_rows": i, "columns": {"exclude": ["tempo"]}}}}),
        json!({"name": "publish_features", "taskReferenceName": format!("publish_{i}"), "type": "SIMPLE",
               "inputParameters": {"workspace": format!("${{features_{i}.output.workspace}}"),
                   "params": {"feature_set": "${workflow.input.feature_set}"}}}),
    ]
}

/// `tasks` tasks: validate, then SWITCHes on its `valid`, one after the other, each `true`
/// case a pair and a SWITCH nested in it with another pair.
fn workflow(tasks: usize) -> Value {
    let route = |name: String, case: Vec<Value>| {
        json!({"name": "route", "taskReferenceName": name, "type": "SWITCH",
            "evaluatorType": "value-param", "expression": "valid",
            "inputParameters": {"valid": "${validate.output.result.valid}"},
            "decisionCases": {"true": case, "false": []}})
    };
    let mut list = vec![
        json!({"name": "validate_song", "taskReferenceName": "validate", "type": "SIMPLE",
        "inputParameters": {"params": {"song_id": "${workflow.input.song_id}", "min_duration_seconds": 60}}}),
    ];
    let mut count = 1;
    let mut i = 0;
    while count + 6 <= tasks {
        let mut case = pair(2 * i);
        case.push(route(format!("inner_{i}"), pair(2 * i + 1)));
        list.push(route(format!("route_{i}"), case));
        count += 6;
        i += 1;
    }
    let example: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../perago-example/workflows/song_pipeline.json"),
        )
        .unwrap(),
    )
    .unwrap();
    json!({"name": "big", "version": 1, "inputSchema": example["inputSchema"], "tasks": list})
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let n = env("PERAGO_BENCH_TASKS", 200);
    let rounds = env("PERAGO_BENCH_ROUNDS", 15);
    let contracts =
        Contracts::from_taskdef_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../taskdefs"))
            .unwrap();
    let text = workflow(n).to_string();
    let value: Value = serde_json::from_str(&text).unwrap();
    let tasks = value["tasks"]
        .to_string()
        .matches("\"taskReferenceName\"")
        .count();
    let findings = check_file("big.json", &value, &contracts).unwrap();
    assert!(findings.is_empty(), "{findings:#?}");
    let (mut check, mut parse) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        let v: Value = serde_json::from_str(&text).unwrap();
        parse.push(start.elapsed());
        let start = Instant::now();
        let findings = check_file("big.json", &v, &contracts).unwrap();
        check.push(start.elapsed());
        std::hint::black_box(findings);
    }
    let (check, parse) = (median(check), median(parse));
    println!(
        "workflows check: {tasks} tasks, {} bytes, median of {rounds}",
        text.len()
    );
    println!("  parse only    {:>10.3} ms", parse.as_secs_f64() * 1e3);
    println!(
        "  check         {:>10.3} ms  ({:.1} µs a task)",
        check.as_secs_f64() * 1e3,
        check.as_secs_f64() * 1e6 / tasks as f64
    );
}
