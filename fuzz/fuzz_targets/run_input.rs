//! `run`'s input path on arbitrary bytes: the bytes are the `--input` file of
//! `perago-example run validate_song` (workspace-free) and of `run build_features --store DIR`
//! (a local store holding the example workspace as `song-000123`, read-only), run
//! through `perago_worker::cli::run::run` itself: read the file, parse it strictly, execute the task,
//! print the payload and the log record. It must never panic, and:
//!
//! - bytes that are not UTF-8 or not strict JSON are an input-file error (`Err`, exit 2)
//!   saying so; anything else runs;
//! - exit 0 prints a `COMPLETED` payload with an `output`; exit 1 a `FAILED` or
//!   `FAILED_WITH_TERMINAL_ERROR` payload with a non-empty `reasonForIncompletion` of at most
//!   500 UTF-16 units and no output; no other exit status;
//! - the payload is valid against the task kind's result contract (`WorkspaceFreeTaskResult`,
//!   `WorkspaceTaskResult`), and equals what `runtime::execute_with` gives for the strictly
//!   parsed document;
//! - the log record is one JSON line with the payload's status and reason.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago::Contract;
use perago::contracts::workspace_free_task_result::WorkspaceFreeTaskResult;
use perago::contracts::workspace_task_result::WorkspaceTaskResult;
use perago::runtime::{ExecutionContext, execute_with};
use perago::task::Registry;
use perago_worker::cli::CommandError;
use perago_worker::cli::run::{RunArgs, run};
use perago_worker::cli::store::StoreArgs;
use perago_workspace::local::LocalStore;
use perago_workspace::{Metadata, transfer};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

static REGISTRY: LazyLock<Registry> = LazyLock::new(perago_example::registry);

/// The input file, rewritten for every run (one fuzzing process at a time uses it).
static INPUT: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("perago-fuzz-run-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir.join("input.json")
});

/// A local store with the example workspace imported as `song-000123` (its commit is not the
/// seed's: inputs naming a commit are refused by the store unless the fuzzer finds its id).
static STORE: LazyLock<PathBuf> = LazyLock::new(|| {
    let root = INPUT.with_file_name("store");
    let _ = std::fs::remove_dir_all(&root);
    let store = LocalStore::open(&root).expect("the store opens");
    store
        .create_repository("song-000123", "main")
        .expect("a repository");
    let example =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/perago-example/workspace");
    transfer::import(
        &store,
        "song-000123",
        "main",
        &example,
        "",
        "example",
        &Metadata::new(),
    )
    .expect("the example imports");
    root
});

static STORE_ARC: LazyLock<Option<Arc<dyn perago_workspace::Store>>> = LazyLock::new(|| {
    Some(Arc::new(
        LocalStore::open(&*STORE).expect("the store opens"),
    ))
});

fuzz_target!(|data: &[u8]| {
    std::fs::write(&*INPUT, data).expect("the input file is written");
    let strict = std::str::from_utf8(data)
        .ok()
        .and_then(|text| perago_schema::json::parse_strict(text).ok());
    check("validate_song", None, strict.as_ref());
    check("build_features", Some(STORE.clone()), strict.as_ref());
});

fn check(task: &str, store: Option<PathBuf>, strict: Option<&Value>) {
    let args = RunArgs {
        task: task.to_owned(),
        input: INPUT.display().to_string(),
        store: StoreArgs {
            store: store.clone(),
            ..StoreArgs::default()
        },
        log: None,
        max_document_bytes: None,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = match run(&REGISTRY, &args, &mut out, &mut err) {
        Ok(code) => code,
        Err(CommandError::Closed) => panic!("{task}: output closed"),
        Err(CommandError::Usage(message)) => {
            assert!(
                strict.is_none(),
                "{task}: a strict JSON input refused: {message}"
            );
            assert!(
                message.contains("not a JSON document") || message.contains("valid UTF-8"),
                "{task}: unexpected input-file error: {message}"
            );
            assert!(out.is_empty() && err.is_empty());
            return;
        }
    };
    let input = strict.unwrap_or_else(|| panic!("{task}: ran on input that is not strict JSON"));
    let payload: Value = serde_json::from_slice(&out).expect("the payload is JSON");
    let status = payload["status"].as_str().expect("a status");
    match code {
        0 => {
            assert_eq!(status, "COMPLETED");
            assert!(
                payload.get("output").is_some() && payload.get("reasonForIncompletion").is_none()
            );
        }
        1 => {
            assert!(
                matches!(status, "FAILED" | "FAILED_WITH_TERMINAL_ERROR"),
                "{status}"
            );
            assert!(payload.get("output").is_none());
            let reason = payload["reasonForIncompletion"].as_str().expect("a reason");
            assert!(!reason.is_empty(), "{task}: an empty reason");
            assert!(
                reason.encode_utf16().count() <= 500,
                "{task}: reason longer than 500"
            );
        }
        other => panic!("{task}: exit status {other}"),
    }
    let violations = match store {
        None => WorkspaceFreeTaskResult::violations(&payload),
        Some(_) => WorkspaceTaskResult::violations(&payload),
    };
    assert!(
        violations.is_empty(),
        "{task}: the payload breaks its contract: {violations}\n{payload}"
    );

    let context = ExecutionContext {
        store: STORE_ARC.clone(),
        ..ExecutionContext::default()
    };
    let task_ref = REGISTRY.get(task).expect("a registered task");
    assert_eq!(
        execute_with(task_ref, input, &context).conductor_payload(),
        payload,
        "{task}: run and execute_with differ"
    );

    let log = std::str::from_utf8(&err).expect("the log is UTF-8");
    let line = log.strip_suffix('\n').expect("one line");
    assert!(!line.contains('\n'), "{task}: more than one log line");
    let record: Value = serde_json::from_str(line).expect("the log record is JSON");
    assert_eq!(record["status"], payload["status"]);
    assert_eq!(
        record["reason"],
        payload
            .get("reasonForIncompletion")
            .cloned()
            .unwrap_or(Value::Null)
    );
}
