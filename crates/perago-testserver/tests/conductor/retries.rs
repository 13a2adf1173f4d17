//! The decider's retries (`docs/src/reference/conductor.md` §4.3), opt-in with `enable_retries`.

use crate::support::Client;
use perago_testserver::{RetryDelays, TaskSpec, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

fn start(delays: RetryDelays) -> (TestServer, Client) {
    let server = TestServer::start();
    server.enable_retries(delays);
    let client = Client::new(&server.base_url());
    (server, client)
}

fn register(client: &Client, def: Value) {
    let mut def = def;
    def["ownerEmail"] = json!("a@b");
    let answer = client.post_json("/api/metadata/taskdefs", &json!([def]));
    assert_eq!(answer.status, 200, "{}", answer.body);
}

/// Polls one task of `task_type` (long poll) and reports `status` for it.
fn poll_and_report(client: &Client, task_type: &str, status: &str) -> Value {
    let answer = client.get(&format!(
        "/api/tasks/poll/batch/{task_type}?workerid=w1&timeout=5000"
    ));
    let task = answer.json()[0].clone();
    assert!(task.is_object(), "nothing to poll: {}", answer.body);
    let result = json!({
        "workflowInstanceId": task["workflowInstanceId"],
        "taskId": task["taskId"],
        "status": status,
        "reasonForIncompletion": "boom",
    });
    assert_eq!(client.post_json("/api/tasks", &result).status, 200);
    task
}

#[test]
fn failed_tasks_are_retried_as_new_tasks_until_the_taskdef_retry_count() {
    let (server, client) = start(RetryDelays::Immediate);
    register(&client, json!({"name": "t", "retryCount": 2}));
    let mut spec = TaskSpec::new("t", json!({"song": 7}));
    spec.correlation_id = Some("c1".into());
    let first = server.enqueue_with(spec);
    let original = server.task(&first).unwrap().json;

    let polled: Vec<Value> = (0..3)
        .map(|_| poll_and_report(&client, "t", "FAILED"))
        .collect();
    assert!(server.wait_final(1, WAIT));
    let attempts = server.attempts(&first);
    assert_eq!(attempts.len(), 3);
    for (n, (attempt, task)) in attempts.iter().zip(&polled).enumerate() {
        assert_eq!(task["taskId"], json!(attempt.task_id));
        // What the worker saw: the retry count, and a fresh poll count.
        assert_eq!(
            (task["retryCount"].clone(), task["pollCount"].clone()),
            (json!(n), json!(1))
        );
        assert_eq!(attempt.status, TaskStatus::Failed);
        assert_eq!(attempt.retried, n < 2);
        assert_eq!(attempt.json["retried"], json!(n < 2));
        for same in [
            "workflowInstanceId",
            "referenceTaskName",
            "inputData",
            "correlationId",
        ] {
            assert_eq!(attempt.json[same], original[same], "{same}");
        }
    }
    for pair in attempts.windows(2) {
        assert_ne!(pair[1].task_id, pair[0].task_id);
        assert_eq!(
            pair[1].retried_task_id.as_deref(),
            Some(pair[0].task_id.as_str())
        );
        assert_eq!(pair[1].json["retriedTaskId"], json!(pair[0].task_id));
        assert_eq!(pair[1].retry_count, pair[0].retry_count + 1);
    }
    assert_eq!(attempts[0].retried_task_id, None);
    assert!(attempts[0].json.get("retriedTaskId").is_none());
    assert_eq!(server.queue_size("t"), 0);
    assert_eq!(server.tasks().len(), 3);
    assert!(server.wait_terminal(3, Duration::ZERO));
}

#[test]
fn a_retry_is_scheduled_at_once_and_can_be_read_before_it_is_polled() {
    let (server, client) = start(RetryDelays::Immediate);
    let first = server.enqueue("t", json!({}));
    poll_and_report(&client, "t", "FAILED");
    let attempts = server.attempts(&first);
    assert_eq!(attempts.len(), 2);
    let retry = &attempts[1];
    assert_eq!((retry.status, retry.poll_count), (TaskStatus::Scheduled, 0));
    assert_eq!(retry.reason_for_incompletion, None);
    assert_eq!(retry.worker_id, None);
    assert_eq!(retry.reference_task_name, attempts[0].reference_task_name);
    let json = client.get(&format!("/api/tasks/{}", retry.task_id)).json();
    assert_eq!(json["status"], "SCHEDULED");
    assert_eq!(json["retryCount"], 1);
    assert_eq!(json["startTime"], 0);
    assert_eq!(server.queue_size("t"), 1);
    // Not final yet: the retry is pending.
    assert!(!server.wait_final(1, Duration::ZERO));
    assert!(server.wait_terminal(1, Duration::ZERO));
}

#[test]
fn without_a_taskdef_a_task_is_retried_three_times_after_60_s_each() {
    let (server, client) = start(RetryDelays::Immediate);
    let first = server.enqueue("adhoc", json!({}));
    for _ in 0..4 {
        poll_and_report(&client, "adhoc", "FAILED");
    }
    let attempts = server.attempts(&first);
    let shown: Vec<(i32, Value, Value)> = attempts
        .iter()
        .map(|a| {
            (
                a.retry_count,
                a.json["startDelayInSeconds"].clone(),
                a.json["callbackAfterSeconds"].clone(),
            )
        })
        .collect();
    // Polling resets callbackAfterSeconds to 0 (§4.2); startDelayInSeconds stays.
    assert_eq!(
        shown,
        vec![
            (0, json!(0), json!(0)),
            (1, json!(60), json!(0)),
            (2, json!(60), json!(0)),
            (3, json!(60), json!(0)),
        ]
    );
    assert!(server.wait_final(1, Duration::ZERO));
}

#[test]
fn retry_delays_follow_the_retry_logic() {
    let (server, client) = start(RetryDelays::Immediate);
    let cases = [
        (
            json!({"retryLogic": "FIXED", "retryDelaySeconds": 2}),
            [2, 2, 2, 2],
        ),
        (
            json!({"retryLogic": "EXPONENTIAL_BACKOFF", "retryDelaySeconds": 2}),
            [2, 4, 8, 16],
        ),
        (
            json!({"retryLogic": "LINEAR_BACKOFF", "retryDelaySeconds": 2, "backoffScaleFactor": 3}),
            [6, 12, 18, 24],
        ),
        (
            json!({"retryLogic": "EXPONENTIAL_BACKOFF", "retryDelaySeconds": 2, "maxRetryDelaySeconds": 5}),
            [2, 4, 5, 5],
        ),
        // The jitter is in milliseconds: whole seconds do not show it.
        (
            json!({"retryDelaySeconds": 1, "backoffJitterMs": 999}),
            [1, 1, 1, 1],
        ),
    ];
    for (i, (mut def, expected)) in cases.into_iter().enumerate() {
        let name = format!("t{i}");
        def["name"] = json!(name);
        def["retryCount"] = json!(4);
        register(&client, def);
        let first = server.enqueue(&name, json!({}));
        let mut delays = Vec::new();
        for _ in 0..4 {
            poll_and_report(&client, &name, "FAILED");
            let retry = server.attempts(&first).pop().unwrap();
            delays.push(retry.json["startDelayInSeconds"].clone());
        }
        assert_eq!(delays, expected.map(|d| json!(d)), "{name}");
    }
}

#[test]
fn terminal_errors_cancellations_and_completions_are_not_retried() {
    let (server, client) = start(RetryDelays::Immediate);
    for status in ["FAILED_WITH_TERMINAL_ERROR", "CANCELED", "COMPLETED"] {
        let id = server.enqueue(status, json!({}));
        poll_and_report(&client, status, status);
        let attempts = server.attempts(&id);
        assert_eq!(attempts.len(), 1, "{status}");
        assert!(!attempts[0].retried);
    }
    assert!(server.wait_final(3, Duration::ZERO));
}

#[test]
fn retry_count_zero_makes_failed_final() {
    let (server, client) = start(RetryDelays::Immediate);
    register(&client, json!({"name": "t", "retryCount": 0}));
    let id = server.enqueue("t", json!({}));
    poll_and_report(&client, "t", "FAILED");
    assert_eq!(server.attempts(&id).len(), 1);
    assert!(server.wait_final(1, Duration::ZERO));
}

#[test]
fn a_response_timeout_is_retried_too() {
    let (server, client) = start(RetryDelays::Immediate);
    register(
        &client,
        json!({"name": "t", "retryCount": 1, "responseTimeoutSeconds": 1}),
    );
    let first = server.enqueue("t", json!({"a": 1}));
    client.get("/api/tasks/poll/batch/t");
    assert!(server.wait_until(WAIT, |s| s.attempts(&first).len() == 2));
    let attempts = server.attempts(&first);
    assert_eq!(attempts[0].status, TaskStatus::TimedOut);
    assert_eq!(attempts[1].retry_count, 1);
    assert_eq!(attempts[1].input_data, json!({"a": 1}));
    // The retry times out as well, and that is the last attempt.
    let retry = client.get("/api/tasks/poll/batch/t?timeout=5000").json();
    assert_eq!(retry[0]["taskId"], json!(attempts[1].task_id));
    assert!(server.wait_final(1, WAIT));
    let attempts = server.attempts(&first);
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[1].status, TaskStatus::TimedOut);
}

#[test]
fn real_and_scaled_delays_hold_a_retry_back() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    register(&client, json!({"name": "t", "retryDelaySeconds": 60}));
    for delays in [
        RetryDelays::Real,
        RetryDelays::Scaled(Duration::from_secs(3600)),
    ] {
        server.enable_retries(delays);
        let first = server.enqueue("t", json!({}));
        poll_and_report(&client, "t", "FAILED");
        // Queued (queue size counts delayed tasks) but not yet pollable.
        assert_eq!(server.queue_size("t"), 1, "{delays:?}");
        let answer = client.get("/api/tasks/poll/batch/t?timeout=0");
        assert_eq!(answer.body, "[]", "{delays:?}");
        let retry = server.attempts(&first)[1].task_id.clone();
        // Fail the held-back retry by hand so the queue is empty for the next case.
        let result = json!({"workflowInstanceId": server.task(&retry).unwrap().workflow_instance_id,
            "taskId": retry, "status": "FAILED_WITH_TERMINAL_ERROR"});
        assert_eq!(client.post_json("/api/tasks", &result).status, 200);
        assert_eq!(server.queue_size("t"), 0);
    }
    // 60 s at 1 ms a second: a long poll gets the retry.
    server.enable_retries(RetryDelays::Scaled(Duration::from_millis(1)));
    let first = server.enqueue("t", json!({}));
    poll_and_report(&client, "t", "FAILED");
    let retry = poll_and_report(&client, "t", "COMPLETED");
    assert_eq!(retry["retriedTaskId"], json!(first));
}

#[test]
fn disable_retries_makes_failed_final_again() {
    let (server, client) = start(RetryDelays::Immediate);
    server.disable_retries();
    let id = server.enqueue("t", json!({}));
    poll_and_report(&client, "t", "FAILED");
    assert_eq!(server.attempts(&id).len(), 1);
    assert_eq!(server.queue_size("t"), 0);
}
