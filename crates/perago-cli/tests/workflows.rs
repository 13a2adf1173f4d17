//! `perago workflows check` as a user runs it: the built binary on the repository's TaskDefs
//! and the example crate's workflows, on files with findings, on files that are not
//! WorkflowDefs, and against a Conductor server.

mod common;

use common::{code, perago_in, stderr, stdout};
use perago_testserver::TestServer;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn examples() -> String {
    repo()
        .join("crates/perago-example/workflows")
        .display()
        .to_string()
}

fn taskdefs() -> String {
    repo().join("taskdefs").display().to_string()
}

/// The song pipeline with one param the task does not declare.
fn planted(dir: &Path) -> String {
    let text =
        std::fs::read_to_string(repo().join("crates/perago-example/workflows/song_pipeline.json"))
            .unwrap();
    let mut workflow: Value = serde_json::from_str(&text).unwrap();
    workflow["tasks"][0]["inputParameters"]["params"]["min_rows"] = json!(3);
    let path = dir.join("planted.json");
    std::fs::write(&path, workflow.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn the_examples_pass_with_warnings_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = perago_in(
        dir.path(),
        &["workflows", "check", "--taskdefs", &taskdefs(), &examples()],
        b"",
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).ends_with("0 error(s), 3 warning(s)\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn an_error_is_one_line_at_its_pointer_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = planted(dir.path());
    let out = perago_in(
        dir.path(),
        &["workflows", "check", "--taskdefs", &taskdefs(), &file],
        b"",
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "{file}:/tasks/0/inputParameters/params/min_rows: error[unknown_field]: $.params.min_rows: unknown field (validate_song's input)\n1 error(s), 0 warning(s)\n"
        )
    );
    let out = perago_in(
        dir.path(),
        &[
            "workflows",
            "check",
            "--taskdefs",
            &taskdefs(),
            "--format",
            "json",
            &file,
        ],
        b"",
    );
    assert_eq!(code(&out), 1);
    let lines: Vec<Value> = perago_testserver::process::json_lines(&stdout(&out));
    assert_eq!(
        lines,
        [json!({
            "file": file,
            "workflow": "song_pipeline",
            "pointer": "/tasks/0/inputParameters/params/min_rows",
            "severity": "error",
            "code": "unknown_field",
            "message": "$.params.min_rows: unknown field (validate_song's input)"
        })]
    );
}

#[test]
fn what_is_not_a_workflow_def_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{\"name\": ").unwrap();
    std::fs::write(
        dir.path().join("taskdef.json"),
        "{\"name\": \"x\", \"retryCount\": 1}",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("twice.json"),
        "{\"name\": \"a\", \"name\": \"b\", \"tasks\": []}",
    )
    .unwrap();
    for (file, said) in [
        ("broken.json", "broken.json: not JSON"),
        (
            "taskdef.json",
            "taskdef.json: the file: a WorkflowDef has a string `name` and a list of `tasks`",
        ),
        ("twice.json", "twice.json: not JSON"),
        ("missing.json", "missing.json: "),
    ] {
        let out = perago_in(
            dir.path(),
            &["workflows", "check", "--taskdefs", &taskdefs(), file],
            b"",
        );
        assert_eq!(code(&out), 2, "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with(&format!("perago: {said}")),
            "{file}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "");
    }
    let out = perago_in(dir.path(), &["workflows", "check", &examples()], b"");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("give --taskdefs DIR or --conductor-url URL"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn taskdefs_and_sub_workflows_are_read_from_a_server() {
    let mut server = TestServer::start();
    let mut taskdefs = Vec::new();
    for entry in std::fs::read_dir(repo().join("taskdefs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        taskdefs.push(serde_json::from_str::<Value>(&text).unwrap());
    }
    let client = perago_conductor::Client::new(&server.base_url()).unwrap();
    client.register_taskdefs(&taskdefs).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = planted(dir.path());
    let url = server.base_url();
    let out = perago_in(
        dir.path(),
        &["workflows", "check", "--conductor-url", &url, &file],
        b"",
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("error[unknown_field]"),
        "{}",
        stdout(&out)
    );
    server.stop();
    let out = perago_in(
        dir.path(),
        &["workflows", "check", "--conductor-url", &url, &file],
        b"",
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(&format!(
            "perago: reading the TaskDefs and WorkflowDefs of {url}"
        )),
        "{}",
        stderr(&out)
    );
}
