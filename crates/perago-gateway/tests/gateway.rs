//! The gateway over HTTP against the Conductor test server: the completion API's table row
//! by row, concurrent completes, re-delivered refusals, leases, Conductor outages, the audit
//! trail, and every kind of bad request. (The built `perago gateway`, started with default
//! flags, killed and restarted, is tested in `crates/perago-cli/tests/gateway.rs`.)

#[path = "common/agent.rs"]
mod agent;

use agent::{Agent, Reply};
use perago_gateway::log::EventLog;
use perago_gateway::{BearerToken, Gateway, GatewayConfig, TaskTypeSlots, ledger};
use perago_testserver::{TaskSpec, TaskStatus, TestServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const TOKEN: &str = "test-token-0123456789";
const TYPE: &str = "agent_task";
const PATIENCE: Duration = Duration::from_secs(30);

fn config(server: &TestServer, db: &Path, slots: usize) -> GatewayConfig {
    let mut config = GatewayConfig::new(
        &server.base_url(),
        vec![TaskTypeSlots {
            name: TYPE.into(),
            slots,
        }],
        BearerToken::new(TOKEN).unwrap(),
    );
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.db = db.to_owned();
    config.worker_id = "gw-test".into();
    config.poll_timeout = Duration::from_millis(50);
    config
}

fn start(config: GatewayConfig) -> Gateway {
    Gateway::start(config, EventLog::discard()).expect("the gateway starts")
}

struct Setup {
    server: TestServer,
    gateway: Gateway,
    _dir: tempfile::TempDir,
    db: PathBuf,
}

fn setup(slots: usize, tweak: impl FnOnce(&mut GatewayConfig)) -> Setup {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gateway.db");
    let mut config = config(&server, &db, slots);
    tweak(&mut config);
    let gateway = start(config);
    Setup {
        server,
        gateway,
        _dir: dir,
        db,
    }
}

impl Setup {
    fn agent(&self, id: &str) -> Agent {
        Agent::new(&self.gateway.base_url(), TOKEN, id)
    }

    fn enqueue(&self, title: &str) -> String {
        self.server
            .enqueue(TYPE, json!({"params": {"title": title}}))
    }

    /// Waits until Conductor's task `id` is terminal; its state.
    fn terminal(&self, id: &str) -> perago_testserver::TaskState {
        assert!(
            self.server
                .wait_until(PATIENCE, |s| s.task(id).is_some_and(|t| !matches!(
                    t.status,
                    TaskStatus::InProgress | TaskStatus::Scheduled
                ))),
            "task {id} never ended at Conductor: {:?}",
            self.server.task(id)
        );
        self.server.task(id).unwrap()
    }
}

/// The updates Conductor received for a task that end it (lease extensions left out).
fn final_updates(server: &TestServer, id: &str) -> Vec<Value> {
    server
        .task(id)
        .unwrap()
        .updates
        .into_iter()
        .filter(|u| u.get("extendLease") != Some(&json!(true)))
        .collect()
}

fn audit_types(record: &Value) -> Vec<String> {
    record["audit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event_type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_completion_api_table_row_by_row() {
    let s = setup(8, |_| {});
    let agent = s.agent("agent-1");
    let ids: Vec<String> = (0..7).map(|i| s.enqueue(&format!("task {i}"))).collect();
    let claimed: Vec<String> = ids.iter().map(|_| agent.claim_one(TYPE)).collect();
    assert_eq!(claimed, ids, "claims hand out tasks in queue order");
    let claim = agent.task(&ids[0]).json;
    assert_eq!(claim["status"], "claimed");
    assert_eq!(claim["input_data"], json!({"params": {"title": "task 0"}}));

    // Valid completion: 200, done, result_summary := summary.
    let completion = json!({"contract": "worker-completion/v1", "summary": "Added tests",
        "files_changed": ["a.rs"], "verification": {"command": "cargo test", "exit_code": 0}});
    let r = agent.complete(&ids[0], &json!({"payload": completion}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["status"], "done");
    assert_eq!(r.json["result_summary"], "Added tests");
    assert_eq!(r.json["terminal_reason"], Value::Null);
    assert_eq!(
        r.json["ledger_entry"]["contract_version"],
        "worker-completion/v1"
    );
    assert_eq!(r.json["ledger_entry"]["contract_validation"], "valid");
    assert_eq!(r.json["ledger_entry"]["canonical"], completion);
    let t = s.terminal(&ids[0]);
    assert_eq!(t.status, TaskStatus::Completed);
    assert_eq!(t.output_data, json!({"result": completion}));
    assert_eq!(t.worker_id.as_deref(), Some("gw-test/agent-1"));

    // Valid refusal: 200, refused, result_summary := detail, terminal_reason refused:<kind>.
    let refusal =
        json!({"kind": "underspecified", "detail": "Which API?", "question": "v1 or v2?"});
    let r = agent.complete(&ids[1], &json!({"result_summary": refusal.to_string()}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["status"], "refused");
    assert_eq!(r.json["result_summary"], "Which API?");
    assert_eq!(r.json["terminal_reason"], "refused:underspecified");
    assert_eq!(
        r.json["ledger_entry"]["contract_validation"],
        "refused:underspecified"
    );
    let t = s.terminal(&ids[1]);
    assert_eq!(t.status, TaskStatus::Completed, "a refusal is a result");
    assert_eq!(t.output_data["result"]["kind"], "underspecified");
    assert_eq!(t.output_data["result"]["contract"], "worker-completion/v1");

    // Legacy prose: 200, done, the text unchanged, nothing validated.
    let prose = "  Fixed the flaky login test.\n";
    let r = agent.complete(&ids[2], &json!({"result_summary": prose, "payload": null}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["status"], "done");
    assert_eq!(r.json["result_summary"], prose);
    assert_eq!(r.json["ledger_entry"]["contract_version"], Value::Null);
    assert_eq!(r.json["ledger_entry"]["outcome"], "legacy_prose");
    let t = s.terminal(&ids[2]);
    assert_eq!(
        t.output_data,
        json!({"result": {"kind": "legacy_prose", "text": prose}})
    );

    // Empty: 422 empty_result_summary, failed (completion missing summary).
    let r = agent.complete(&ids[3], &json!({"result_summary": " \u{3000}\t"}));
    assert_eq!(r.status, 422, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"detail": {"error": "empty_result_summary", "message": "completion missing summary",
                          "task_id": ids[3], "status": "failed"}})
    );
    let t = s.terminal(&ids[3]);
    assert_eq!(t.status, TaskStatus::Failed);
    assert_eq!(
        t.reason_for_incompletion.as_deref(),
        Some("empty_result_summary: completion missing summary")
    );
    assert_eq!(
        agent.task(&ids[3]).json["failure"],
        "completion missing summary"
    );

    // Violation: 422 contract_violation with the schema error path; failed, slot released.
    let r = agent.complete(
        &ids[4],
        &json!({"payload": {"summary": "  ", "files_changed": ["ok", ""]}, "result_summary": "ignored"}),
    );
    assert_eq!(r.status, 422, "{}", r.text);
    let d = &r.json["detail"];
    assert_eq!(d["error"], "contract_violation");
    assert_eq!(d["schema_error_path"], "$.summary");
    assert_eq!(d["message"], "must be a non-empty string");
    assert_eq!(d["contract_version"], "worker-completion/v1");
    assert_eq!(d["task_id"], ids[4].as_str());
    assert_eq!(d["status"], "failed");
    assert_eq!(d["violations"][1]["path"], "$.files_changed[1]");
    let t = s.terminal(&ids[4]);
    assert_eq!(t.status, TaskStatus::Failed);
    assert_eq!(
        t.reason_for_incompletion.as_deref(),
        Some("contract_violation: $.summary: must be a non-empty string")
    );
    let record = agent.task(&ids[4]).json;
    assert_eq!(record["status"], "failed");
    assert_eq!(record["terminal_reason"], "contract_violation");
    assert_eq!(record["ledger"][0]["contract_validation"], "violation");
    assert_eq!(record["ledger"][0]["contract_error_path"], "$.summary");

    // A truncated document in result_summary is a payload, so a violation at `$`.
    let r = agent.complete(
        &ids[5],
        &json!({"result_summary": "{\"summary\": \"unterminated"}),
    );
    assert_eq!(r.status, 422, "{}", r.text);
    assert_eq!(r.json["detail"]["schema_error_path"], "$");

    // Re-delivery of a terminal task: 409 from the ledger, nothing changes.
    let before = final_updates(&s.server, &ids[0]).len();
    let r = agent.complete(&ids[0], &json!({"payload": {"summary": "again"}}));
    assert_eq!(r.status, 409, "{}", r.text);
    assert!(
        r.json["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("task {} is already done", ids[0]))
    );
    assert_eq!(r.json["ledger_entry"]["canonical"], completion);
    let record = agent.task(&ids[0]).json;
    assert_eq!(record["ledger"].as_array().unwrap().len(), 1);
    assert_eq!(record["result_summary"], "Added tests");
    assert_eq!(final_updates(&s.server, &ids[0]).len(), before);

    // Unknown task: 404.
    let r = agent.complete("no-such-task", &json!({"result_summary": "x"}));
    assert_eq!(r.status, 404, "{}", r.text);
    assert_eq!(r.json["detail"]["error"], "unknown_task");

    // The audit trail: every validated payload has its task.contract_validation event; prose
    // none; each ended task its transition and its delivery.
    let types = audit_types(&agent.task(&ids[0]).json);
    assert_eq!(
        types,
        [
            "task.claimed",
            "task.contract_validation",
            "task.done",
            "conductor.update_delivered"
        ]
    );
    let violation = &agent.task(&ids[4]).json["audit"][1];
    assert_eq!(
        violation["details"],
        json!({"contract_version": "worker-completion/v1", "outcome": "violation", "schema_error_path": "$.summary"})
    );
    assert_eq!(
        audit_types(&agent.task(&ids[2]).json)[..2],
        ["task.claimed", "task.done"]
    );
    // And on the Conductor task's log: the claim (POST /log) and the transition's events
    // (with the update).
    assert!(s.server.wait_until(PATIENCE, |server| {
        server.task(&ids[0]).unwrap().logs.len() >= 3
    }));
    let logs: Vec<String> = s
        .server
        .task(&ids[0])
        .unwrap()
        .logs
        .iter()
        .map(|l| l["log"].as_str().unwrap_or_default().to_owned())
        .collect();
    for event in ["task.claimed", "task.contract_validation", "task.done"] {
        assert!(
            logs.iter().any(|l| l.contains(event)),
            "{event} in {logs:?}"
        );
    }
    // Every terminal task was reported exactly once.
    assert!(s.gateway.wait_delivered(PATIENCE));
    for id in &ids[..6] {
        assert_eq!(final_updates(&s.server, id).len(), 1, "{id}");
        assert_eq!(
            agent.task(id).json["conductor_update"]["state"],
            "delivered"
        );
    }
    // The last claim is still held; its slot too.
    assert_eq!(agent.task(&ids[6]).json["status"], "claimed");
}

#[test]
fn fifty_concurrent_completes_of_one_task_have_one_winner() {
    let s = setup(1, |_| {});
    let id = s.enqueue("race");
    let agent = s.agent("racer");
    assert_eq!(agent.claim_one(TYPE), id);
    let barrier = Arc::new(Barrier::new(50));
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let (agent, barrier, id) = (agent.clone(), Arc::clone(&barrier), id.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let r = agent.complete(
                    &id,
                    &json!({"payload": {"summary": format!("attempt {i}")}}),
                );
                (i, r)
            })
        })
        .collect();
    let replies: Vec<(usize, Reply)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<&(usize, Reply)> = replies.iter().filter(|(_, r)| r.status == 200).collect();
    assert_eq!(
        winners.len(),
        1,
        "{:?}",
        replies.iter().map(|(_, r)| r.status).collect::<Vec<_>>()
    );
    assert!(
        replies
            .iter()
            .all(|(_, r)| r.status == 200 || r.status == 409)
    );
    let winner = format!("attempt {}", winners[0].0);
    let record = agent.task(&id).json;
    assert_eq!(record["ledger"].as_array().unwrap().len(), 1);
    assert_eq!(record["result_summary"], winner.as_str());
    let t = s.terminal(&id);
    assert_eq!(t.output_data["result"]["summary"], winner.as_str());
    assert!(s.gateway.wait_delivered(PATIENCE));
    assert_eq!(final_updates(&s.server, &id).len(), 1);
}

fn record_state(agent: &Agent, id: &str) -> String {
    agent.task(id).json["conductor_update"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_refusal_delivered_twice_derives_one_followup_set() {
    let s = setup(2, |_| {});
    let id = s.enqueue("big");
    let agent = s.agent("splitter");
    agent.claim_one(TYPE);
    let refusal = json!({"contract": "worker-completion/v1", "kind": "scope_exceeded",
        "detail": "Spans three subsystems.", "proposed_split": ["auth", "billing", "auth"]});
    let first = agent.complete(&id, &json!({"payload": refusal}));
    assert_eq!(first.status, 200, "{}", first.text);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            let item = refusal["proposed_split"][i].as_str().unwrap();
            perago_completion::followup_id(&id, i, item)
        })
        .collect();
    let got: Vec<&str> = first.json["followups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, ids, "equal items get distinct ids");
    let again = agent.complete(&id, &json!({"payload": refusal}));
    assert_eq!(again.status, 409, "{}", again.text);
    let record = agent.task(&id).json;
    assert_eq!(record["followups"].as_array().unwrap().len(), 3);
    assert_eq!(record["status"], "refused");
    assert_eq!(record["terminal_reason"], "refused:scope_exceeded");
    let t = s.terminal(&id);
    assert_eq!(t.status, TaskStatus::Completed);
    let fanned: Vec<&str> = t.output_data["result"]["followups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(fanned, ids);
    assert_eq!(t.output_data["result"]["followups"][1]["title"], "billing");
    assert!(s.gateway.wait_delivered(PATIENCE));
    assert_eq!(final_updates(&s.server, &id).len(), 1);
}

#[test]
fn a_lapsed_lease_fails_the_task_back_and_frees_the_slot() {
    let s = setup(1, |c| {
        // Long enough that the next claim certainly comes before it lapses.
        c.lease = Some(Duration::from_secs(1));
        c.lease_check_interval = Duration::from_millis(20);
    });
    let first = s.enqueue("first");
    let second = s.enqueue("second");
    let agent = s.agent("sleepy");
    assert_eq!(agent.claim_one(TYPE), first);
    let busy = agent.claim(TYPE);
    assert_eq!(busy.status, 429, "{}", busy.text);
    assert_eq!(busy.json["detail"]["error"], "no_free_slot");
    // No heartbeat: the sweeper fails it back to Conductor.
    let t = s.terminal(&first);
    assert_eq!(t.status, TaskStatus::Failed, "{t:?}");
    let reason = t.reason_for_incompletion.unwrap();
    assert!(
        reason.starts_with(
            "lease_expired: agent \"sleepy\" sent no heartbeat within its lease of 1s"
        ),
        "{reason}"
    );
    // The slot is free again.
    assert_eq!(agent.claim_one(TYPE), second);
    let late = agent.complete(&first, &json!({"result_summary": "done at last"}));
    assert_eq!(late.status, 409, "{}", late.text);
    assert_eq!(late.json["terminal_reason"], "lease_expired");
    let record = agent.task(&first).json;
    assert_eq!(record["ledger"][0]["outcome"], "lease_expired");
    assert_eq!(audit_types(&record)[1], "task.failed");
}

#[test]
fn while_conductor_is_down_completes_are_answered_and_delivered_when_it_returns() {
    let mut s = setup(4, |_| {});
    let agent = s.agent("steady");
    let ids: Vec<String> = (0..3).map(|i| s.enqueue(&format!("t{i}"))).collect();
    for _ in &ids {
        agent.claim_one(TYPE);
    }
    s.server.stop();
    let answers = [
        agent.complete(&ids[0], &json!({"payload": {"summary": "one"}})),
        agent.complete(&ids[1], &json!({"result_summary": "two, as prose"})),
        agent.complete(&ids[2], &json!({"payload": {"summary": 2}})),
    ];
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 422]);
    for id in &ids {
        assert_eq!(record_state(&agent, id), "pending");
    }
    // A claim while Conductor is down says so, and changes nothing.
    let down = agent.claim(TYPE);
    assert_eq!(down.status, 503, "{}", down.text);
    s.server.restart();
    assert!(s.gateway.wait_delivered(PATIENCE));
    let expected = [
        TaskStatus::Completed,
        TaskStatus::Completed,
        TaskStatus::Failed,
    ];
    for (id, status) in ids.iter().zip(expected) {
        assert_eq!(s.terminal(id).status, status);
        assert_eq!(record_state(&agent, id), "delivered");
        assert_eq!(final_updates(&s.server, id).len(), 1, "{id}");
    }
}

#[test]
fn an_edited_removed_or_reordered_audit_event_is_found() {
    let s = setup(4, |_| {});
    let agent = s.agent("auditor");
    let ids: Vec<String> = (0..3).map(|i| s.enqueue(&format!("t{i}"))).collect();
    for id in &ids {
        agent.claim_one(TYPE);
        agent.complete(id, &json!({"payload": {"summary": format!("done {id}")}}));
    }
    assert!(s.gateway.wait_delivered(PATIENCE));
    let Setup {
        gateway,
        db,
        _dir: dir,
        ..
    } = s;
    gateway.stop();
    let intact = ledger::audit::verify(&ledger::open_existing(&db).unwrap()).unwrap();
    assert!(intact.is_intact(), "{:?}", intact.problems);
    assert_eq!(intact.events, 12);
    let tampered = |name: &str, sql: &str| {
        let copy = dir.path().join(name);
        std::fs::copy(&db, &copy).unwrap();
        let conn = rusqlite::Connection::open(&copy).unwrap();
        conn.execute_batch(sql).unwrap();
        ledger::audit::verify(&conn).unwrap().problems
    };
    let edited = tampered(
        "edited.db",
        "UPDATE audit SET details = replace(details, '\"valid\"', '\"violation\"')
         WHERE seq = (SELECT min(seq) FROM audit WHERE event_type = 'task.contract_validation')",
    );
    assert_eq!(edited.len(), 1, "{edited:?}");
    assert!(
        edited[0].contains(" (task.contract_validation, task "),
        "{edited:?}"
    );
    assert!(edited[0].ends_with("(edited)"), "{edited:?}");
    let removed = tampered("removed.db", "DELETE FROM audit WHERE seq = 5");
    assert!(
        removed[0].starts_with("events 5..5 are missing (removed)"),
        "{removed:?}"
    );
    let reordered = tampered(
        "reordered.db",
        "UPDATE audit SET seq = -1 WHERE seq = 6; UPDATE audit SET seq = 6 WHERE seq = 7;
         UPDATE audit SET seq = 7 WHERE seq = -1;",
    );
    assert!(
        reordered.iter().any(|p| p.starts_with("event 6 ")),
        "{reordered:?}"
    );
    let truncated = tampered("truncated.db", "DELETE FROM audit WHERE seq = 12");
    assert!(
        truncated[0].starts_with("the head names event 12 but the trail ends at event 11"),
        "{truncated:?}"
    );
}

#[test]
fn bad_requests_are_json_errors_that_change_nothing() {
    let s = setup(1, |c| {
        c.max_body_bytes = 1024;
        c.request_timeout = Duration::from_millis(300);
    });
    let id = s.enqueue("guarded");
    let owner = s.agent("owner");
    owner.claim_one(TYPE);
    let body = json!({"result_summary": "mine"}).to_string();
    let path = format!("/v1/tasks/{id}/complete");
    let send = |auth: Option<&str>, agent: &str, body: &[u8]| {
        owner.send("POST", &path, &[("x-agent-id", agent)], Some(body), auth)
    };
    let bearer = format!("Bearer {TOKEN}");
    let cases: Vec<(Reply, u16, &str)> = vec![
        (send(None, "owner", body.as_bytes()), 401, "unauthorized"),
        (
            send(Some("Bearer wrong"), "owner", body.as_bytes()),
            401,
            "unauthorized",
        ),
        (
            send(Some(TOKEN), "owner", body.as_bytes()),
            401,
            "unauthorized",
        ),
        (
            send(Some(&bearer), "intruder", body.as_bytes()),
            403,
            "not_your_claim",
        ),
        (
            send(Some(&bearer), "owner", &vec![b' '; 2048]),
            413,
            "body_too_large",
        ),
        (
            send(Some(&bearer), "owner", b"{\"result_summary\": "),
            400,
            "malformed_body",
        ),
        (send(Some(&bearer), "owner", b"[1]"), 400, "malformed_body"),
        (
            send(Some(&bearer), "owner", b"{\"a\": 1, \"a\": 2}"),
            400,
            "malformed_body",
        ),
        (
            send(Some(&bearer), "owner", b"{\"summary\": \"x\"}"),
            400,
            "unknown_field",
        ),
        (
            send(Some(&bearer), "owner", b"{\"result_summary\": 3}"),
            400,
            "invalid_field",
        ),
        (
            send(Some(&bearer), "", body.as_bytes()),
            400,
            "missing_agent_id",
        ),
        (
            owner.send("GET", "/nowhere", &[], None, Some(&bearer)),
            404,
            "no_route",
        ),
        (
            owner.send(
                "DELETE",
                &format!("/v1/tasks/{id}"),
                &[],
                None,
                Some(&bearer),
            ),
            405,
            "method_not_allowed",
        ),
        (
            owner.send(
                "POST",
                "/v1/claims",
                &[],
                Some(b"{\"task_type\": \"other\", \"agent_id\": \"x\"}"),
                Some(&bearer),
            ),
            400,
            "unknown_task_type",
        ),
        (
            owner.send(
                "POST",
                "/v1/claims",
                &[],
                Some(b"{\"task_type\": \"agent_task\"}"),
                Some(&bearer),
            ),
            400,
            "missing_field",
        ),
    ];
    for (reply, status, error) in &cases {
        assert_eq!(reply.status, *status, "{}", reply.text);
        assert_eq!(reply.json["detail"]["error"], *error, "{}", reply.text);
    }
    assert!(!cases[0].0.text.contains(TOKEN));

    // A body that does not arrive in time is 408; a head that never ends is dropped.
    let addr = s.gateway.local_addr();
    let mut slow = std::net::TcpStream::connect(addr).unwrap();
    write!(
        slow,
        "POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: {bearer}\r\nx-agent-id: owner\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"result_"
    )
    .unwrap();
    let answer = read_until(&mut slow, "request_timeout");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let mut stalled = std::net::TcpStream::connect(addr).unwrap();
    write!(stalled, "POST {path} HTTP/1.1\r\nhost: x\r\n").unwrap();
    stalled.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut rest = Vec::new();
    // The gateway closes the connection (the read ends) rather than wait for the head forever.
    let closed = stalled.read_to_end(&mut rest);
    assert!(
        closed.is_ok()
            || closed
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{closed:?}"
    );

    // Nothing changed: still claimed, only the claim in the trail; the real completion works.
    let record = owner.task(&id).json;
    assert_eq!(record["status"], "claimed");
    assert_eq!(audit_types(&record), ["task.claimed"]);
    let done = owner.complete_raw(&id, &body);
    assert_eq!(done.status, 200, "{}", done.text);
}

/// Reads from `reader` until its text contains `needle` (or the patience runs out).
fn read_until(stream: &mut std::net::TcpStream, needle: &str) -> String {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&text).contains(needle) {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&text).into_owned()
}

#[test]
fn claims_wait_for_tasks_and_take_slots() {
    let s = setup(2, |_| {});
    let agent = s.agent("claimer");
    let empty = agent.claim(TYPE);
    assert_eq!((empty.status, empty.text.as_str()), (204, ""));
    let id = s.server.enqueue_with(TaskSpec {
        response_timeout_seconds: Some(120),
        ..TaskSpec::new(TYPE, json!({"params": {"title": "t"}}))
    });
    let claim = agent.claim(TYPE);
    assert_eq!(claim.status, 200, "{}", claim.text);
    assert_eq!(claim.json["task_id"], id.as_str());
    assert_eq!(claim.json["lease_ms"], 120_000, "the lease is Conductor's");
    let polled = s.server.task(&id).unwrap();
    assert_eq!(polled.status, TaskStatus::InProgress);
    assert_eq!(polled.worker_id.as_deref(), Some("gw-test/claimer"));
    // A heartbeat renews the claim's lease and extends Conductor's.
    let beat = agent.heartbeat(&id);
    assert_eq!(beat.status, 200, "{}", beat.text);
    assert_eq!(beat.json["conductor_lease_extended"], true);
    let extensions: Vec<Value> = s.server.task(&id).unwrap().updates;
    assert_eq!(extensions.len(), 1);
    assert_eq!(extensions[0]["extendLease"], true);
    assert_eq!(extensions[0]["workerId"], "gw-test/claimer");
    let other = s.agent("other").heartbeat(&id);
    assert_eq!(other.status, 403, "{}", other.text);
    assert_eq!(s.agent("x").heartbeat("nope").status, 404);
}
