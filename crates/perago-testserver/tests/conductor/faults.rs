//! Fault injection (error statuses, canned raw answers, dropped connections,
//! slow bodies, delays), stop and restart, and the request log.

use crate::support::Client;
use perago_testserver::{RawReply, Route, TaskStatus, TestServer};
use serde_json::json;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn fail_next_answers_the_status_n_times_without_touching_state() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    let id = server.enqueue("t", json!({}));
    let task = client.get("/api/tasks/poll/batch/t").json()[0].clone();
    let body = json!({"workflowInstanceId": task["workflowInstanceId"], "taskId": id, "status": "COMPLETED"});

    server.fail_next(Route::UpdateTask, 2, 500);
    // Other routes are unaffected.
    assert_eq!(client.get("/health").status, 200);
    for _ in 0..2 {
        let answer = client.post_json("/api/tasks", &body);
        assert_eq!(answer.status, 500);
        assert_eq!(answer.json()["status"], 500);
        assert_eq!(server.task(&id).unwrap().status, TaskStatus::InProgress);
    }
    assert_eq!(client.post_json("/api/tasks", &body).status, 200);
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Completed);
    let statuses: Vec<u16> = server
        .requests()
        .iter()
        .filter(|r| r.path == "/api/tasks")
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, vec![500, 500, 200]);
}

#[test]
fn route_groups_and_any() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    server.fail_next(Route::Metadata, 1, 503);
    assert_eq!(client.get("/api/metadata/taskdefs").status, 503);
    assert_eq!(client.get("/api/metadata/taskdefs").status, 200);
    server.fail_next(Route::Any, 1, 502);
    assert_eq!(client.get("/api/schema").status, 502);
    server.fail_next(Route::RegisterTaskDefs, 1, 400);
    assert_eq!(client.get("/api/metadata/taskdefs").status, 200);
    server.clear_faults();
    assert_eq!(
        client
            .post_json(
                "/api/metadata/taskdefs",
                &json!([{"name": "x", "ownerEmail": "a@b"}])
            )
            .status,
        200
    );
}

#[test]
fn reply_next_sends_malformed_poll_bodies_as_given() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    let id = server.enqueue("t", json!({}));
    let bodies = ["null", "", "{not json", "\"a string\""];
    for body in bodies {
        server.reply_next(Route::Poll, 1, RawReply::json(200, body));
    }
    for body in bodies {
        let answer = client.get("/api/tasks/poll/batch/t?count=5");
        assert_eq!((answer.status, answer.body.as_str()), (200, body));
        assert_eq!(answer.content_type.as_deref(), Some("application/json"));
    }
    // The canned answers handed nothing out; the next poll gets the task.
    assert_eq!(server.task(&id).unwrap().status, TaskStatus::Scheduled);
    assert_eq!(
        client.get("/api/tasks/poll/batch/t").json()[0]["taskId"],
        json!(id)
    );
    let recorded: Vec<(String, u16)> = server
        .requests()
        .iter()
        .map(|r| (r.path.clone(), r.status))
        .collect();
    assert_eq!(
        recorded,
        vec![("/api/tasks/poll/batch/t".to_owned(), 200); 5]
    );
}

#[test]
fn reply_next_sends_204_and_redirects_with_their_headers() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    server.enqueue("t", json!({}));
    server.reply_next(Route::Poll, 1, RawReply::new(204));
    let elsewhere = "http://127.0.0.1:9/api/tasks/poll/batch/t";
    server.reply_next(
        Route::Poll,
        1,
        RawReply::new(302).header("Location", elsewhere),
    );
    let answer = client.get("/api/tasks/poll/batch/t");
    assert_eq!((answer.status, answer.body.as_str()), (204, ""));
    assert_eq!(answer.content_type, None);
    let answer = client.get("/api/tasks/poll/batch/t");
    assert_eq!(answer.status, 302);
    assert_eq!(answer.location.as_deref(), Some(elsewhere));
    // Not followed: the client saw the 302 itself, and the task is still queued.
    assert_eq!(server.queue_size("t"), 1);
    let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![204, 302]);
}

#[test]
fn reply_next_with_an_unsendable_status_answers_500() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    server.reply_next(Route::Health, 1, RawReply::new(42));
    assert_eq!(client.get("/health").status, 500);
    assert_eq!(server.requests()[0].status, 500);
}

#[test]
fn slow_body_poll_hands_tasks_out_even_if_the_client_gives_up() {
    let server = TestServer::start();
    let ids: Vec<String> = (0..3)
        .map(|i| server.enqueue("t", json!({"i": i})))
        .collect();
    server.slow_body_next(Route::Poll, 1, Duration::from_secs(30));
    let impatient = Client::with_body_timeout(&server.base_url(), Some(Duration::from_millis(200)));
    let error = impatient
        .try_get("/api/tasks/poll/batch/t?workerid=w1&count=3")
        .expect_err("a 30 s body outlasts a 200 ms body timeout");
    // The head came at once: only the body timed out.
    assert!(
        matches!(error, ureq::Error::Timeout(ureq::Timeout::RecvBody)),
        "{error:?}"
    );
    for id in &ids {
        let task = server.task(id).unwrap();
        assert_eq!(
            (task.status, task.poll_count, task.worker_id.as_deref()),
            (TaskStatus::InProgress, 1, Some("w1"))
        );
    }
    assert_eq!(server.queue_size("t"), 0);
    let poll = &server.requests()[0];
    assert_eq!(
        (poll.path.as_str(), poll.status),
        ("/api/tasks/poll/batch/t", 200)
    );
}

#[test]
fn slow_body_arrives_whole_for_a_patient_client() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    let id = server.enqueue("t", json!({"text": "x".repeat(1000)}));
    server.slow_body_next(Route::Poll, 1, Duration::from_millis(200));
    let answer = client.get("/api/tasks/poll/batch/t");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type.as_deref(), Some("application/json"));
    assert_eq!(answer.json(), json!([server.task(&id).unwrap().json]));
    // Used up: the next answer is whole and plain.
    assert_eq!(client.get("/health").status, 200);
}

#[test]
fn drop_next_closes_the_connection_without_answering() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    server.drop_next(Route::Health, 1);
    assert!(client.try_get("/health").is_err());
    assert_eq!(client.get("/health").status, 200);
    let recorded = server.requests();
    assert_eq!(
        recorded
            .iter()
            .filter(|r| r.path == "/health")
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        vec![0, 200]
    );
}

#[test]
fn set_delay_slows_matching_requests_until_removed() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    server.set_delay(Route::Health, Duration::from_millis(200));
    let started = Instant::now();
    assert_eq!(client.get("/health").status, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));
    server.set_delay(Route::Health, Duration::ZERO);
    let started = Instant::now();
    assert_eq!(client.get("/health").status, 200);
    assert!(started.elapsed() < Duration::from_millis(200));
}

#[test]
fn stop_refuses_connections_and_restart_keeps_port_and_state() {
    let mut server = TestServer::start();
    let client = Client::new(&server.base_url());
    let url = server.base_url();
    assert_eq!(
        client
            .post_json(
                "/api/metadata/taskdefs",
                &json!([{"name": "x", "ownerEmail": "a@b"}])
            )
            .status,
        200
    );
    let id = server.enqueue("t", json!({}));
    // The client now holds a kept-alive connection; stopping must close it too.
    assert_eq!(client.get("/health").status, 200);

    server.stop();
    assert!(!server.is_running());
    assert!(client.try_get("/health").is_err());
    assert!(Client::new(&url).try_get("/health").is_err());
    let address = format!("127.0.0.1:{}", server.port());
    let refused = std::net::TcpStream::connect(&address).expect_err("stopped server accepts");
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    server.stop(); // no-op

    server.restart();
    assert!(server.is_running());
    assert_eq!(server.base_url(), url);
    assert_eq!(client.get("/api/metadata/taskdefs/x").status, 200);
    let polled = client.get("/api/tasks/poll/batch/t").json();
    assert_eq!(polled[0]["taskId"], json!(id));
    server.restart(); // no-op
}

#[test]
fn stop_cuts_long_polls_in_flight() {
    let mut server = TestServer::start();
    let base = server.base_url();
    let poller = std::thread::spawn(move || {
        Client::new(&base)
            .try_get("/api/tasks/poll/batch/t?timeout=5000")
            .map(|a| a.status)
    });
    assert!(server.wait_until(WAIT, |s| {
        s.requests()
            .iter()
            .any(|r| r.path.starts_with("/api/tasks/poll"))
    }));
    let started = Instant::now();
    server.stop();
    assert!(poller.join().unwrap().is_err());
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[test]
fn requests_are_recorded_in_order_with_query_headers_and_body() {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    client.get("/api/tasks/poll/batch/t?workerid=w%201&count=2&timeout=0");
    client.post("/api/metadata/taskdefs", "[]");
    let recorded = server.requests();
    assert_eq!(recorded.len(), 2);
    let poll = &recorded[0];
    assert_eq!(
        (poll.method.as_str(), poll.path.as_str()),
        ("GET", "/api/tasks/poll/batch/t")
    );
    assert_eq!(poll.query_param("workerid").as_deref(), Some("w 1"));
    assert_eq!(poll.query_param("count").as_deref(), Some("2"));
    assert_eq!(poll.status, 200);
    let post = &recorded[1];
    assert_eq!(
        (post.method.as_str(), post.body.as_str(), post.status),
        ("POST", "[]", 400)
    );
    assert_eq!(post.header("Content-Type"), Some("application/json"));
    assert_eq!(post.json(), Some(json!([])));

    server.clear_requests();
    assert!(server.requests().is_empty());
    client.get("/health");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn dropping_the_server_closes_its_port_at_once() {
    let server = TestServer::start();
    let address = format!("127.0.0.1:{}", server.port());
    drop(server);
    let refused = std::net::TcpStream::connect(&address).expect_err("dropped server accepts");
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
}
