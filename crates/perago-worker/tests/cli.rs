//! A task binary's command line, on the example binary end to end: `run` (exit 0 on COMPLETED,
//! 1 on FAILED*, 2 on usage errors), the log record, and `tasks`. That each sample input gives
//! its status is the example's own test.

use perago_testserver::process::json_lines;
use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, transfer};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::{example_binary, example_dir};

mod support;

fn input(name: &str) -> String {
    example_dir()
        .join("inputs")
        .join(name)
        .display()
        .to_string()
}

/// The commit the example inputs name, which no store of these tests has.
const SEED_REF: &str = "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3";

/// The example input `name`, naming `commit` instead of the contract's example commit, in a file of `dir`.
fn input_at(dir: &Path, name: &str, commit: &str) -> String {
    let text = std::fs::read_to_string(input(name)).unwrap();
    let path = dir.join(name.replace('/', "-"));
    std::fs::write(&path, text.replace(SEED_REF, commit)).unwrap();
    path.display().to_string()
}

/// The binary, with no store setting but a `HOME` of its own.
fn bin() -> Command {
    let mut cmd = Command::new(example_binary());
    for var in [
        "PERAGO_FAILURE_REASON_MAX_LENGTH",
        "PERAGO_STORE",
        "XDG_DATA_HOME",
        "LAKECTL_SERVER_ENDPOINT_URL",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-home"));
    cmd
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn payload(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn run_a_valid_input_exits_0_and_prints_the_payload() {
    let out = run(&[
        "run",
        "validate_song",
        "--input",
        &input("validate_song.json"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        payload(&out),
        json!({"status": "COMPLETED", "output": {"result": {"valid": true, "reason": null}}})
    );
    // Pretty-printed.
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("{\n  \"status\""));
    // The log record goes to standard error.
    let record: Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(record["status"], "COMPLETED");
    assert_eq!(record["task_type"], "validate_song");
}

#[test]
fn a_workspace_task_with_default_flags_reads_the_default_store() {
    // Input checks come first: an invalid input fails whatever the store.
    let out = run(&[
        "run",
        "build_features",
        "--input",
        &input("invalid/build_features-ref-type.json"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A valid input naming a repository the default store does not have.
    let out = run(&[
        "run",
        "build_features",
        "--input",
        &input("build_features.json"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reason = payload(&out)["reasonForIncompletion"]
        .as_str()
        .unwrap()
        .to_owned();
    let home = concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-home");
    assert!(
        reason.starts_with("workspace: repository song-000123 not found")
            && reason.contains(&format!("{home}/.local/share/perago/store")),
        "{reason}"
    );
}

#[test]
fn a_pre_guardrail_failure_on_a_commit_without_features() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let store = LocalStore::open(&root).unwrap();
    store.create_repository("song-000123", "main").unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir_all(files.join("features/default")).unwrap();
    std::fs::write(files.join("features/default/README.txt"), "no data yet\n").unwrap();
    let commit = transfer::import(
        &store,
        "song-000123",
        "main",
        &files,
        "",
        "m",
        &Metadata::new(),
    )
    .unwrap()
    .unwrap();
    let out = run(&[
        "run",
        "build_features",
        "--input",
        &input_at(dir.path(), "build_features.json", commit.id.as_str()),
        "--store",
        &root.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        payload(&out),
        json!({
            "status": "FAILED_WITH_TERMINAL_ERROR",
            "reasonForIncompletion": "pre guardrail require_glob('*/*.csv') matched 0 files; min_count=1",
        })
    );
}

#[test]
fn input_from_standard_input() {
    let mut child = bin()
        .args(["run", "validate_song", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"params": {"song_id": "song-000125", "min_duration_seconds": 100}}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(payload(&out)["output"]["result"]["valid"], false);
}

#[test]
fn the_log_goes_to_the_log_file_one_line_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("perago.jsonl");
    let log_arg = log.display().to_string();
    for file in ["validate_song.json", "invalid/validate_song-params.json"] {
        let out = run(&[
            "run",
            "validate_song",
            "--input",
            &input(file),
            "--log",
            &log_arg,
        ]);
        assert!(out.stderr.is_empty(), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let records = json_lines(&text);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["status"], "COMPLETED");
    assert_eq!(records[1]["status"], "FAILED");
    assert_eq!(records[1]["reason"], "$.params.strict: unknown field");
    // The detail holds every violation; the reason only the first.
    assert_eq!(
        records[1]["detail"]["violations"].as_array().unwrap().len(),
        3
    );
    assert_eq!(records[1]["task_id"], Value::Null);
    assert_eq!(records[1]["workflow_id"], Value::Null);
}

#[test]
fn the_reason_limit_comes_from_the_environment() {
    let out = bin()
        .args([
            "run",
            "validate_song",
            "--input",
            &input("invalid/validate_song-unknown-song.json"),
        ])
        .env("PERAGO_FAILURE_REASON_MAX_LENGTH", "9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(payload(&out)["reasonForIncompletion"], "song song");
    for bad in ["0", "many", ""] {
        let out = bin()
            .args([
                "run",
                "validate_song",
                "--input",
                &input("validate_song.json"),
            ])
            .env("PERAGO_FAILURE_REASON_MAX_LENGTH", bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            stderr(&out),
            format!(
                "perago-example: PERAGO_FAILURE_REASON_MAX_LENGTH must be a positive integer (the \
                 most characters of reasonForIncompletion), got {bad:?}\n"
            )
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let valid = input("validate_song.json");
    let missing = example_dir().join("inputs/none.json").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("bad.json");
    std::fs::write(
        &malformed,
        r#"{"params": {"song_id": "a", "song_id": "b"}}"#,
    )
    .unwrap();
    let malformed = malformed.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "Usage: perago-example <COMMAND>"),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (vec!["run", "validate_song"], "--input <FILE|->"),
        (
            vec!["run", "nope", "--input", &valid],
            "unknown task `nope`; this binary has: validate_song, build_features, publish_features",
        ),
        (
            vec!["run", "validate_song", "--input", &missing],
            "none.json",
        ),
        (
            vec!["run", "validate_song", "--input", &malformed],
            "not a JSON document",
        ),
        (
            vec![
                "run",
                "build_features",
                "--input",
                &valid,
                "--lakefs-endpoint",
                "http://127.0.0.1:9",
            ],
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
        ),
    ];
    for (args, expected) in cases {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("run"));
}

#[test]
fn tasks_lists_name_kind_and_schema_types() {
    let out = run(&["tasks"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "NAME              KIND                    PARAMS                 RESULT\n\
         validate_song     workspace-free          ValidateSongParams     ValidateSongResult\n\
         build_features    workspace (read_only)   BuildFeaturesParams    BuildFeaturesResult\n\
         publish_features  workspace (read_write)  PublishFeaturesParams  PublishFeaturesResult\n"
    );
    let out = run(&["tasks", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let tasks = payload(&out);
    assert_eq!(tasks[0]["name"], "validate_song");
    assert_eq!(tasks[0]["kind"], "workspace-free");
    assert_eq!(tasks[0]["access"], Value::Null);
    assert_eq!(
        tasks[1]["params"],
        json!({"type": "BuildFeaturesParams", "location": "build-features-params.schema.json#"})
    );
    assert_eq!(tasks[1]["access"], "read_only");
}
