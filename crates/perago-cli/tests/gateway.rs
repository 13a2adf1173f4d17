//! `perago gateway` as users run it: the built binary with default flags, signalled, killed
//! with SIGKILL between a commit and its delivery and restarted, started on a ledger an
//! earlier version wrote, and `perago gateway audit verify` on its database.

#[path = "../../perago-gateway/tests/common/agent.rs"]
mod agent;

use agent::Agent;
use perago_testserver::process::{Child, Finished, events, json_lines};
use perago_testserver::{TaskStatus, TestServer};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOKEN: &str = "e2e-token-9f8e7d6c5b4a";
const PATIENCE: Duration = Duration::from_secs(30);

fn perago(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago"));
    cmd.current_dir(dir)
        .env("PERAGO_GATEWAY_TOKEN", TOKEN)
        .env_remove("CONDUCTOR_SERVER_URL")
        .env_remove("CONDUCTOR_AUTH_TOKEN")
        .env_remove("PERAGO_FAILURE_REASON_MAX_LENGTH");
    cmd
}

/// Starts `perago gateway ARGS` in `dir`; waits for `gateway_started` and returns the child
/// and the URL it listens on.
fn gateway(dir: &Path, args: &[&str]) -> (Child, String) {
    let mut cmd = perago(dir);
    cmd.arg("gateway").args(args);
    let child = Child::start(cmd, None);
    assert!(
        child.wait_stderr(PATIENCE, |e| e.contains("\"gateway_started\"")),
        "the gateway did not start:\n{}",
        child.stderr()
    );
    let lines = json_lines(
        child
            .stderr()
            .lines()
            .find(|l| l.contains("\"gateway_started\""))
            .unwrap(),
    );
    let listen = lines[0]["listen"].as_str().unwrap().to_owned();
    (child, format!("http://{listen}"))
}

fn updates_ending(server: &TestServer, id: &str) -> usize {
    server
        .task(id)
        .unwrap()
        .updates
        .iter()
        .filter(|u| u.get("extendLease") != Some(&json!(true)))
        .count()
}

fn verify(dir: &Path, args: &[&str]) -> Finished {
    let mut cmd = perago(dir);
    cmd.args(["gateway", "audit", "verify"]).args(args);
    Child::start(cmd, None).wait(PATIENCE)
}

#[test]
fn with_default_flags_the_built_gateway_serves_a_claim_and_a_complete() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let id = server.enqueue("agent_task", json!({"params": {"title": "Add tests"}}));
    let (child, base) = gateway(
        dir.path(),
        &[
            "--conductor-url",
            &server.base_url(),
            "--task-type",
            "agent_task",
        ],
    );
    assert_eq!(base, "http://127.0.0.1:8642", "the default address");
    let agent = Agent::new(&base, TOKEN, "agent-1");
    assert_eq!(agent.claim_one("agent_task"), id);
    let done = agent.complete(
        &id,
        &json!({"payload": {"summary": "Added tests", "files_changed": ["t.rs"]}}),
    );
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(server.wait_until(PATIENCE, |s| s.task(&id).unwrap().status
        == TaskStatus::Completed));
    assert!(child.wait_stderr(PATIENCE, |e| e.contains("\"update_delivered\"")));
    assert_eq!(
        agent.task(&id).json["conductor_update"]["state"],
        "delivered"
    );
    let stopped = child.stop(PATIENCE);
    assert_eq!(stopped.code(), Some(0), "{stopped}");
    let log = json_lines(&stopped.stderr);
    assert_eq!(events(&log, "gateway_stopped").len(), 1);
    assert!(!stopped.stderr.contains(TOKEN), "the token is never logged");
    assert!(
        dir.path().join("perago-gateway.db").is_file(),
        "the default db"
    );

    // The audit trail of the default database.
    let intact = verify(dir.path(), &[]);
    assert_eq!(intact.code(), Some(0), "{intact}");
    assert!(
        intact
            .stdout
            .starts_with("perago-gateway.db: audit trail intact: 4 events, head 4 "),
        "{intact}"
    );
    let conn = rusqlite::Connection::open(dir.path().join("perago-gateway.db")).unwrap();
    conn.execute(
        "UPDATE audit SET recorded_at_ms = recorded_at_ms + 1 WHERE seq = 2",
        [],
    )
    .unwrap();
    drop(conn);
    let broken = verify(dir.path(), &["--db", "perago-gateway.db"]);
    assert_eq!(broken.code(), Some(1), "{broken}");
    assert!(
        broken.stdout.contains("event 2 (task.contract_validation"),
        "{broken}"
    );
    let missing = verify(dir.path(), &["--db", "nope.db"]);
    assert_eq!(missing.code(), Some(2), "{missing}");
    assert!(
        missing.stderr.contains("nope.db: no such database"),
        "{missing}"
    );
}

#[test]
fn killed_between_commit_and_delivery_the_restarted_gateway_delivers_once() {
    let mut server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ledger.db");
    let db = db.to_str().unwrap();
    let url = server.base_url();
    let args = [
        "--conductor-url",
        url.as_str(),
        "--task-type",
        "agent_task=2",
        "--listen",
        "127.0.0.1:0",
        "--db",
        db,
    ];
    let first = server.enqueue("agent_task", json!({"params": {"title": "one"}}));
    let second = server.enqueue("agent_task", json!({"params": {"title": "two"}}));
    let (child, base) = gateway(dir.path(), &args);
    let agent = Agent::new(&base, TOKEN, "agent-1");
    assert_eq!(agent.claim_one("agent_task"), first);
    assert_eq!(agent.claim_one("agent_task"), second);

    // Conductor goes away; the completion is committed and answered from the ledger.
    server.stop();
    let done = agent.complete(&first, &json!({"payload": {"summary": "committed"}}));
    assert_eq!(done.status, 200, "{}", done.text);
    assert_eq!(
        agent.task(&first).json["conductor_update"]["state"],
        "pending"
    );
    child.signal("KILL");
    let killed = child.wait(PATIENCE);
    assert_eq!(killed.code(), None, "killed by a signal: {killed}");

    server.restart();
    assert_eq!(server.task(&first).unwrap().status, TaskStatus::InProgress);
    assert_eq!(
        updates_ending(&server, &first),
        0,
        "nothing was delivered before the kill"
    );
    let (child, base) = gateway(dir.path(), &args);
    let agent = Agent::new(&base, TOKEN, "agent-1");
    assert!(
        server.wait_until(PATIENCE, |s| s.task(&first).unwrap().status
            == TaskStatus::Completed)
    );
    assert_eq!(
        server.task(&first).unwrap().output_data["result"]["summary"],
        "committed"
    );
    assert!(child.wait_stderr(PATIENCE, |e| e.contains("\"update_delivered\"")));
    assert_eq!(
        agent.task(&first).json["conductor_update"]["state"],
        "delivered"
    );
    assert_eq!(updates_ending(&server, &first), 1, "delivered once");

    // The claim held across the crash is held still.
    let record = agent.task(&second).json;
    assert_eq!(record["status"], "claimed");
    let beat = agent.heartbeat(&second);
    assert_eq!(beat.status, 200, "{}", beat.text);
    let refused = agent.complete(
        &second,
        &json!({"result_summary": json!({"kind": "blocked_on_dependency", "detail": "Needs the API.", "blocking_dep": "T-9"}).to_string()}),
    );
    assert_eq!(refused.status, 200, "{}", refused.text);
    assert!(
        server.wait_until(PATIENCE, |s| s.task(&second).unwrap().status
            == TaskStatus::Completed)
    );
    assert_eq!(
        server.task(&second).unwrap().output_data["result"]["kind"],
        Value::from("blocked_on_dependency")
    );
    let stopped = child.stop(PATIENCE);
    assert_eq!(stopped.code(), Some(0), "{stopped}");
    let intact = verify(dir.path(), &["--db", db]);
    assert_eq!(intact.code(), Some(0), "{intact}");
}

/// A ledger of schema version 1 (`crates/perago-gateway/tests/data/ledger-v1.sql`) holding a
/// claim: the gateway upgrades it at start, says so, and the claim's agent completes the task.
#[test]
fn a_ledger_an_earlier_gateway_wrote_is_upgraded_and_its_claim_goes_on() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let input = json!({"params": {"title": "Add tests"}});
    let id = server.enqueue("agent_task", input.clone());
    // The earlier gateway's poll, and what it recorded of the claim.
    let polled = ureq::get(format!(
        "{}/api/tasks/poll/agent_task?workerid=earlier",
        server.base_url()
    ))
    .call()
    .unwrap()
    .body_mut()
    .read_to_string()
    .unwrap();
    let polled: Value = serde_json::from_str(&polled).unwrap();
    assert_eq!(polled["taskId"], id.as_str());
    let conn = rusqlite::Connection::open(dir.path().join("perago-gateway.db")).unwrap();
    conn.execute_batch(include_str!(
        "../../perago-gateway/tests/data/ledger-v1.sql"
    ))
    .unwrap();
    conn.execute(
        "INSERT INTO tasks (task_id, task_type, workflow_instance_id, agent_id, status,
           input_data, lease_ms, lease_deadline_ms, claimed_at_ms, updated_at_ms)
         VALUES (?1, 'agent_task', ?2, 'agent-1', 'claimed', ?3, 600000, 9000000000000,
           1000, 1000)",
        (
            &id,
            polled["workflowInstanceId"].as_str().unwrap(),
            input.to_string(),
        ),
    )
    .unwrap();
    perago_gateway::ledger::audit::append(&conn, &id, "task.claimed", &json!({}), 1000).unwrap();
    drop(conn);

    let url = server.base_url();
    let args = ["--conductor-url", url.as_str(), "--task-type", "agent_task"];
    let (child, base) = gateway(dir.path(), &args);
    let log = json_lines(&child.stderr());
    let upgraded = events(&log, "ledger_upgraded");
    assert_eq!(upgraded.len(), 1, "{}", child.stderr());
    assert_eq!(
        (&upgraded[0]["from_version"], &upgraded[0]["to_version"]),
        (&json!(1), &json!(perago_gateway::ledger::SCHEMA_VERSION))
    );
    let agent = Agent::new(&base, TOKEN, "agent-1");
    assert_eq!(agent.task(&id).json["input_data"], input);
    let done = agent.complete(&id, &json!({"payload": {"summary": "Added tests"}}));
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(server.wait_until(PATIENCE, |s| s.task(&id).unwrap().status
        == TaskStatus::Completed));
    assert!(child.wait_stderr(PATIENCE, |e| e.contains("\"update_delivered\"")));
    let stopped = child.stop(PATIENCE);
    assert_eq!(stopped.code(), Some(0), "{stopped}");
    let intact = verify(dir.path(), &[]);
    assert_eq!(intact.code(), Some(0), "{intact}");

    // Started again, it finds the ledger current.
    let (child, _) = gateway(dir.path(), &args);
    let stopped = child.stop(PATIENCE);
    assert!(events(&json_lines(&stopped.stderr), "ledger_upgraded").is_empty());
}

#[test]
fn without_a_token_the_gateway_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = perago(dir.path());
    cmd.env_remove("PERAGO_GATEWAY_TOKEN").args([
        "gateway",
        "--conductor-url",
        "http://127.0.0.1:9",
        "--task-type",
        "agent_task",
    ]);
    let done = Child::start(cmd, None).wait(PATIENCE);
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(
        done.stderr
            .starts_with("perago: PERAGO_GATEWAY_TOKEN is not set"),
        "{done}"
    );
    let mut cmd = perago(dir.path());
    cmd.args(["gateway", "--conductor-url", "http://127.0.0.1:9"]);
    let done = Child::start(cmd, None).wait(PATIENCE);
    assert_eq!(done.code(), Some(2), "{done}");
    assert!(done.stderr.contains("no task type"), "{done}");
}
