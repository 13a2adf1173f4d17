//! The task worker API (`docs/src/reference/conductor.md` §4): poll (batch, single, long poll), update
//! semantics, response timeouts and lease extension, Task JSON, logs.

use crate::support::Client;
use perago_testserver::{Options, TaskSpec, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

fn start() -> (TestServer, Client) {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    (server, client)
}

fn batch(client: &Client, task_type: &str, query: &str) -> Vec<Value> {
    let answer = client.get(&format!("/api/tasks/poll/batch/{task_type}?{query}"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json().as_array().cloned().unwrap()
}

fn result(task: &Value, status: &str) -> Value {
    json!({
        "workflowInstanceId": task["workflowInstanceId"],
        "taskId": task["taskId"],
        "status": status,
        "workerId": "w1",
    })
}

#[test]
fn poll_hands_out_a_task_in_progress_with_the_task_json_fields() {
    let (server, client) = start();
    let id = server.enqueue("greet", json!({"name": "Ada"}));
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Scheduled);
    assert_eq!(server.queue_size("greet"), 1);

    let tasks = batch(&client, "greet", "workerid=w1&count=5&timeout=100");
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    assert_eq!(task["taskId"], json!(id));
    assert_eq!(task["taskType"], "greet");
    assert_eq!(task["taskDefName"], "greet");
    assert_eq!(task["referenceTaskName"], "greet_ref");
    assert_eq!(task["status"], "IN_PROGRESS");
    assert_eq!(task["inputData"], json!({"name": "Ada"}));
    assert_eq!(task["retryCount"], 0);
    assert_eq!(task["pollCount"], 1);
    assert_eq!(task["workerId"], "w1");
    assert_eq!(task["responseTimeoutSeconds"], 3600);
    assert_eq!(task["callbackAfterSeconds"], 0);
    assert!(task["startTime"].as_i64().unwrap() > 0);
    assert!(
        task["workflowInstanceId"]
            .as_str()
            .is_some_and(|w| w.len() == 36)
    );
    assert!(task.get("domain").is_none());

    let state = server.task(&id).unwrap();
    assert_eq!(
        (state.status, state.poll_count, state.worker_id.as_deref()),
        (TaskStatus::InProgress, 1, Some("w1"))
    );
    assert_eq!(&state.json, task);
    assert_eq!(server.queue_size("greet"), 0);
    assert_eq!(batch(&client, "greet", "timeout=0"), Vec::<Value>::new());
}

#[test]
fn batch_poll_respects_count_and_fifo_order() {
    let (server, client) = start();
    let ids: Vec<String> = (0..5)
        .map(|i| server.enqueue("t", json!({"i": i})))
        .collect();
    let first: Vec<Value> = batch(&client, "t", "count=3")
        .iter()
        .map(|t| t["taskId"].clone())
        .collect();
    assert_eq!(first, ids[..3].iter().map(|i| json!(i)).collect::<Vec<_>>());
    assert_eq!(batch(&client, "t", "count=10").len(), 2);
    // Defaults: count=1, timeout=100.
    server.enqueue("t", json!({}));
    server.enqueue("t", json!({}));
    assert_eq!(batch(&client, "t", "").len(), 1);
}

#[test]
fn domains_are_separate_queues() {
    let (server, client) = start();
    let mut spec = TaskSpec::new("t", json!({}));
    spec.domain = Some("blue".into());
    let blue = server.enqueue_with(spec);
    assert_eq!(batch(&client, "t", "timeout=0"), Vec::<Value>::new());
    assert_eq!(
        batch(&client, "t", "domain=&timeout=0"),
        Vec::<Value>::new()
    );
    let got = batch(&client, "t", "domain=blue");
    assert_eq!(got[0]["taskId"], json!(blue));
    assert_eq!(got[0]["domain"], "blue");
}

#[test]
fn long_poll_limit_is_5000_ms() {
    let (_server, client) = start();
    let answer = client.get("/api/tasks/poll/batch/t?timeout=5001");
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json(),
        json!({"status": 400, "message": "Long Poll Timeout value cannot be more than 5 seconds", "instance": "perago-testserver", "retryable": false})
    );
    assert_eq!(client.get("/api/tasks/poll/batch/t?count=x").status, 500);
}

#[test]
fn empty_long_poll_waits_for_its_timeout_then_answers_an_empty_list() {
    let (_server, client) = start();
    let started = Instant::now();
    let answer = client.get("/api/tasks/poll/batch/t?timeout=300");
    let waited = started.elapsed();
    assert_eq!((answer.status, answer.body.as_str()), (200, "[]"));
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

#[test]
fn long_poll_returns_as_soon_as_a_task_is_enqueued() {
    let (server, client) = start();
    let base = server.base_url();
    let poller = std::thread::spawn(move || {
        let started = Instant::now();
        let tasks = Client::new(&base)
            .get("/api/tasks/poll/batch/t?timeout=5000")
            .json();
        (tasks, started.elapsed())
    });
    assert!(server.wait_until(WAIT, |s| {
        s.requests()
            .iter()
            .any(|r| r.path == "/api/tasks/poll/batch/t")
    }));
    let id = server.enqueue("t", json!({}));
    let (tasks, waited) = poller.join().unwrap();
    assert_eq!(tasks[0]["taskId"], json!(id));
    assert!(waited < Duration::from_millis(4500), "{waited:?}");
    drop(client);
}

#[test]
fn single_poll_answers_204_when_empty() {
    let (server, client) = start();
    let answer = client.get("/api/tasks/poll/t?workerid=w");
    assert_eq!((answer.status, answer.body.as_str()), (204, ""));
    let id = server.enqueue("t", json!({}));
    let answer = client.get("/api/tasks/poll/t?workerid=w");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["taskId"], json!(id));
}

#[test]
fn older_servers_answer_an_empty_batch_poll_with_204() {
    let server = TestServer::start_with(Options {
        empty_batch_poll_204: true,
        ..Options::default()
    });
    let client = Client::new(&server.base_url());
    let answer = client.get("/api/tasks/poll/batch/t?timeout=0");
    assert_eq!((answer.status, answer.body.as_str()), (204, ""));
    assert_eq!(answer.content_type, None);
    let id = server.enqueue("t", json!({}));
    assert_eq!(batch(&client, "t", "timeout=0")[0]["taskId"], json!(id));
    let statuses: Vec<(String, u16)> = server
        .requests()
        .iter()
        .map(|r| (r.path.clone(), r.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("/api/tasks/poll/batch/t".to_owned(), 204),
            ("/api/tasks/poll/batch/t".to_owned(), 200)
        ]
    );
}

#[test]
fn completed_update_answers_the_task_id_as_text() {
    let (server, client) = start();
    let id = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    let mut body = result(&task, "COMPLETED");
    body["outputData"] = json!({"greeting": "hi"});
    body["logs"] = json!([{"log": "did it", "taskId": "ignored", "createdTime": 5}]);
    let answer = client.post_json("/api/tasks", &body);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, id);
    assert!(answer.content_type.unwrap().starts_with("text/plain"));

    assert!(server.wait_terminal(1, WAIT));
    let state = server.task(&id).unwrap();
    assert_eq!(state.status, TaskStatus::Completed);
    assert_eq!(state.output_data, json!({"greeting": "hi"}));
    assert_eq!(
        state.logs,
        vec![json!({"log": "did it", "taskId": id, "createdTime": 5})]
    );
    assert_eq!(state.updates, vec![body]);
    assert!(state.json["endTime"].as_i64().unwrap() > 0);
    assert_eq!(
        client.get(&format!("/api/tasks/{id}")).json()["status"],
        "COMPLETED"
    );
}

#[test]
fn failed_statuses_are_terminal_and_reason_is_cut_to_500() {
    let (server, client) = start();
    for status in ["FAILED", "FAILED_WITH_TERMINAL_ERROR", "CANCELED"] {
        let id = server.enqueue(status, json!({}));
        let task = batch(&client, status, "")[0].clone();
        let mut body = result(&task, status);
        body["reasonForIncompletion"] = json!("x".repeat(600));
        assert_eq!(client.post_json("/api/tasks", &body).status, 200);
        let state = server.task(&id).unwrap();
        assert_eq!(state.status.as_str(), status);
        assert!(state.status.is_terminal());
        assert_eq!(state.reason_for_incompletion.unwrap().len(), 500);
        // The raw body is kept as sent.
        assert_eq!(
            state.updates[0]["reasonForIncompletion"]
                .as_str()
                .unwrap()
                .len(),
            600
        );
    }
    assert_eq!(server.tasks().len(), 3);
}

#[test]
fn updates_to_terminal_tasks_are_200_and_ignored() {
    let (server, client) = start();
    let id = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "COMPLETED"))
            .status,
        200
    );
    let mut late = result(&task, "FAILED");
    late["outputData"] = json!({"late": true});
    let answer = client.post_json("/api/tasks", &late);
    assert_eq!((answer.status, answer.body.as_str()), (200, id.as_str()));
    let state = server.task(&id).unwrap();
    assert_eq!(state.status, TaskStatus::Completed);
    assert_eq!(state.output_data, json!({}));
    assert_eq!(state.updates.len(), 2);
}

#[test]
fn in_progress_update_requeues_after_callback_delay() {
    let (server, client) = start();
    let id = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    let mut body = result(&task, "IN_PROGRESS");
    body["callbackAfterSeconds"] = json!(1);
    body["outputData"] = json!({"progress": 50});
    assert_eq!(client.post_json("/api/tasks", &body).status, 200);
    let state = server.task(&id).unwrap();
    assert_eq!(state.status, TaskStatus::Scheduled);
    assert_eq!(state.output_data, json!({"progress": 50}));
    assert_eq!(state.json["callbackAfterSeconds"], 1);
    // Not pollable before the delay…
    assert_eq!(batch(&client, "t", "timeout=0"), Vec::<Value>::new());
    // …and a long poll gets it once the delay is over: same taskId, pollCount 2.
    let started = Instant::now();
    let again = batch(&client, "t", "timeout=5000");
    assert!(started.elapsed() < Duration::from_millis(4500));
    assert_eq!(again[0]["taskId"], json!(id));
    assert_eq!(again[0]["pollCount"], 2);
    assert_eq!(again[0]["callbackAfterSeconds"], 0);
}

#[test]
fn in_progress_without_delay_is_pollable_at_once() {
    let (server, client) = start();
    let id = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "IN_PROGRESS"))
            .status,
        200
    );
    let again = batch(&client, "t", "timeout=0");
    assert_eq!(again[0]["taskId"], json!(id));
    // Completing a re-queued task takes it off the queue.
    let task = again[0].clone();
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "IN_PROGRESS"))
            .status,
        200
    );
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "COMPLETED"))
            .status,
        200
    );
    assert_eq!(server.queue_size("t"), 0);
}

#[test]
fn response_timeout_times_out_an_unreported_task() {
    let (server, client) = start();
    let mut spec = TaskSpec::new("t", json!({}));
    spec.response_timeout_seconds = Some(1);
    let id = server.enqueue_with(spec);
    // Before the poll, so that the lease (which starts at the poll) cannot begin earlier.
    let before_poll = Instant::now();
    let task = batch(&client, "t", "")[0].clone();
    assert_eq!(task["responseTimeoutSeconds"], 1);
    assert!(server.wait_until(WAIT, |s| s.task(&id).unwrap().status
        == TaskStatus::TimedOut));
    assert!(before_poll.elapsed() >= Duration::from_secs(1));
    let state = server.task(&id).unwrap();
    assert!(
        state
            .reason_for_incompletion
            .unwrap()
            .starts_with("responseTimeout: 1 exceeded")
    );
    // The late result is accepted (200) and ignored.
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "COMPLETED"))
            .status,
        200
    );
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::TimedOut);
    assert!(server.wait_terminal(1, WAIT));
}

#[test]
fn extend_lease_only_moves_the_lease() {
    let (server, client) = start();
    let mut spec = TaskSpec::new("t", json!({}));
    spec.response_timeout_seconds = Some(1);
    let id = server.enqueue_with(spec);
    let task = batch(&client, "t", "")[0].clone();
    let before = server.task(&id).unwrap().json["updateTime"]
        .as_i64()
        .unwrap();
    let mut heartbeat = result(&task, "COMPLETED");
    heartbeat["extendLease"] = json!(true);
    heartbeat["outputData"] = json!({"ignored": true});
    let extended = Instant::now();
    let answer = client.post_json("/api/tasks", &heartbeat);
    assert_eq!((answer.status, answer.body.as_str()), (200, id.as_str()));
    let state = server.task(&id).unwrap();
    assert_eq!(state.status, TaskStatus::InProgress);
    assert_eq!(state.output_data, json!({}));
    assert!(state.json["updateTime"].as_i64().unwrap() >= before);
    // The lease now runs from the extension.
    assert!(server.wait_until(WAIT, |s| s.task(&id).unwrap().status
        == TaskStatus::TimedOut));
    assert!(extended.elapsed() >= Duration::from_secs(1));
}

#[test]
fn registered_taskdef_sets_the_response_timeout() {
    let (server, client) = start();
    let def = json!([{"name": "t", "ownerEmail": "a@b", "responseTimeoutSeconds": 42}]);
    assert_eq!(client.post_json("/api/metadata/taskdefs", &def).status, 200);
    let id = server.enqueue("t", json!({}));
    let state = server.task(&id).unwrap();
    assert_eq!(state.response_timeout_seconds, 42);
    assert_eq!(state.json["taskDefinition"]["responseTimeoutSeconds"], 42);
}

#[test]
fn invalid_updates() {
    let (server, client) = start();
    let answer = client.post_json("/api/tasks", &json!({"status": "COMPLETED"}));
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["validationErrors"],
        json!([
            {"path": "updateTask.taskResult.workflowInstanceId", "message": "Workflow Id cannot be null or empty", "invalidValue": null},
            {"path": "updateTask.taskResult.taskId", "message": "Task ID cannot be null or empty", "invalidValue": null},
        ])
    );
    let answer = client.post_json(
        "/api/tasks",
        &json!({"workflowInstanceId": "w", "taskId": "nope", "status": "COMPLETED"}),
    );
    assert_eq!(answer.status, 404);
    assert_eq!(answer.json()["message"], "No such task found by id: nope");

    let id = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    // Not a TaskResult.Status, or no status at all: 500.
    assert_eq!(
        client
            .post_json("/api/tasks", &result(&task, "SCHEDULED"))
            .status,
        500
    );
    let mut no_status = result(&task, "COMPLETED");
    no_status.as_object_mut().unwrap().remove("status");
    assert_eq!(client.post_json("/api/tasks", &no_status).status, 500);
    assert_eq!(client.post("/api/tasks", "{").status, 500);
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::InProgress);
}

#[test]
fn get_task_and_logs() {
    let (server, client) = start();
    let answer = client.get("/api/tasks/nope");
    assert_eq!(answer.status, 404);
    assert_eq!(answer.json()["message"], "Task not found for taskId: nope");

    let id = server.enqueue("t", json!({"a": 1}));
    let task = client.get(&format!("/api/tasks/{id}")).json();
    assert_eq!(
        (task["status"].clone(), task["pollCount"].clone()),
        (json!("SCHEDULED"), json!(0))
    );
    assert_eq!(client.get(&format!("/api/tasks/{id}/log")).status, 204);
    assert_eq!(
        client
            .post(&format!("/api/tasks/{id}/log"), "line one")
            .status,
        200
    );
    let logs = client.get(&format!("/api/tasks/{id}/log")).json();
    assert_eq!(logs[0]["log"], "line one");
    assert_eq!(logs[0]["taskId"], json!(id));
    assert_eq!(
        client.get("/api/tasks/queue/size?taskType=t").json(),
        json!(1)
    );
}

#[test]
fn update_v2_answers_the_next_task() {
    let (server, client) = start();
    server.enqueue("t", json!({}));
    let second = server.enqueue("t", json!({}));
    let task = batch(&client, "t", "")[0].clone();
    let answer = client.post_json("/api/tasks/update-v2", &result(&task, "COMPLETED"));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["taskId"], json!(second));
    assert_eq!(answer.json()["workerId"], "w1");
    let answer = client.post_json("/api/tasks/update-v2", &result(&answer.json(), "COMPLETED"));
    assert_eq!(answer.status, 204);
    assert!(server.wait_terminal(2, WAIT));
}

#[test]
fn concurrent_pollers_get_each_task_exactly_once() {
    let (server, _client) = start();
    let ids: Vec<String> = (0..200)
        .map(|i| server.enqueue(if i % 2 == 0 { "a" } else { "b" }, json!({"i": i})))
        .collect();
    let base = server.base_url();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let base = base.clone();
            std::thread::spawn(move || {
                let client = Client::new(&base);
                let task_type = if w % 2 == 0 { "a" } else { "b" };
                loop {
                    let tasks = batch(
                        &client,
                        task_type,
                        &format!("workerid=w{w}&count=4&timeout=200"),
                    );
                    if tasks.is_empty() {
                        return;
                    }
                    for task in tasks {
                        let mut body = result(&task, "COMPLETED");
                        body["outputData"] = json!({"by": w});
                        assert_eq!(client.post_json("/api/tasks", &body).status, 200);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert!(server.wait_terminal(200, WAIT));
    for id in ids {
        let state = server.task(&id).unwrap();
        assert_eq!(
            (state.status, state.poll_count, state.updates.len()),
            (TaskStatus::Completed, 1, 1)
        );
    }
}

#[test]
fn a_batch_poll_carries_several_huge_inputs_whole() {
    const MB: usize = 1 << 20;
    let (server, client) = start();
    // Distinct fillers, so a mixed-up or cut body cannot pass.
    let filler = |i: usize| {
        char::from(b'a' + u8::try_from(i).unwrap())
            .to_string()
            .repeat(18 * MB)
    };
    let ids: Vec<String> = (0..8)
        .map(|i| server.enqueue("big", json!({"i": i, "blob": filler(i)})))
        .collect();
    let answer = client.get("/api/tasks/poll/batch/big?count=8");
    assert_eq!(answer.status, 200);
    let tasks: Vec<Value> = serde_json::from_str(&answer.body).unwrap();
    drop(answer);
    assert_eq!(tasks.len(), 8);
    for (i, (task, id)) in tasks.iter().zip(&ids).enumerate() {
        assert_eq!(task["taskId"], json!(id));
        assert_eq!(task["status"], "IN_PROGRESS");
        // Not assert_eq!: a failure would print 18 MB.
        assert!(task["inputData"]["blob"] == filler(i), "task {i}");
    }
}

#[test]
fn wait_until_gives_up_at_its_timeout() {
    let (server, _client) = start();
    let started = Instant::now();
    assert!(!server.wait_until(Duration::from_millis(50), |s| !s.tasks().is_empty()));
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(!server.wait_terminal(1, Duration::ZERO));
}
