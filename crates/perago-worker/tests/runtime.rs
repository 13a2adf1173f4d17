//! The task runtime on the example tasks and on test tasks built from the same generated types:
//! every row of the status table of `docs/src/reference/task-contract.md` §5 and of its strict top-level shapes table (§6), and every
//! input error the issue lists. Each payload is snapshotted and checked against perago's own
//! result contract (`workspace-task-result` / `workspace-free-task-result`).

use perago::Contract;
use perago::contracts::workspace_free_task_result::WorkspaceFreeTaskResult;
use perago::contracts::workspace_task_result::WorkspaceTaskResult;
use perago::log::{JsonLines, TaskRecord};
use perago::runtime::{
    Attempt, ExecutionContext, Failure, RuntimeConfig, RuntimeTaskResult, TaskStatus, execute,
    execute_json, execute_with,
};
use perago::task::{Registry, Task, TaskError, TaskKind};
use perago_example::contracts::build_features_params::BuildFeaturesParams;
use perago_example::contracts::build_features_result::BuildFeaturesResult;
use perago_example::contracts::validate_song_params::ValidateSongParams;
use perago_example::contracts::validate_song_result::ValidateSongResult;
use perago_example::{build_features, publish_features, validate_song};
use serde_json::{Map, Value, json};
use support::{Backend, workspace_at};

mod support;

// ---------------------------------------------------------------------------------------------
// Test tasks: one per failure the example tasks do not show.

/// `TaskFailed`: the message is the song id, so tests choose it.
#[perago::task(name = "fails")]
fn fails(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    Err(TaskError::failed(params.song_id))
}

#[derive(Debug)]
struct CatalogDown(std::io::Error);

impl std::fmt::Display for CatalogDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("catalog unavailable")
    }
}

impl std::error::Error for CatalogDown {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// An unknown error, reached with `?`.
#[perago::task(name = "unknown_error")]
fn unknown_error(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    Err(CatalogDown(std::io::Error::other("connection refused")))?;
    Ok(ValidateSongResult {
        valid: true,
        reason: None,
    })
}

#[perago::task(name = "panics")]
fn panics(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    panic!("catalog index {} out of range", params.min_duration_seconds)
}

/// A mapping with a field the result schema does not declare.
#[perago::task(name = "mapping_extra", result = ValidateSongResult)]
fn mapping_extra(_params: ValidateSongParams) -> Result<Map<String, Value>, TaskError> {
    Ok(json!({"valid": true, "reason": null, "score": 0.9})
        .as_object()
        .cloned()
        .unwrap_or_default())
}

/// A valid mapping, keys out of schema order.
#[perago::task(name = "mapping_ok", result = ValidateSongResult)]
fn mapping_ok(_params: ValidateSongParams) -> Result<Value, TaskError> {
    Ok(json!({"reason": "checked by hand", "valid": false}))
}

/// A typed result that breaks its schema (`minimum: 0`).
#[perago::task(name = "bad_typed_result")]
fn bad_typed_result(_params: BuildFeaturesParams) -> Result<BuildFeaturesResult, TaskError> {
    Ok(BuildFeaturesResult {
        row_count: -1,
        feature_count: 0,
    })
}

/// Two tasks with one name, for the registry.
#[perago::task(name = "same")]
fn same_a(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    Err(TaskError::failed("a"))
}

#[perago::task(name = "same")]
fn same_b(_params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> {
    Err(TaskError::failed("b"))
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const SEED_REF: &str = "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3";

fn seed_workspace() -> Value {
    json!({
        "repository": "song-000123",
        "branch": "main",
        "ref_type": "commit",
        "ref": SEED_REF,
    })
}

fn with_workspace(params: Value) -> Value {
    json!({"workspace": seed_workspace(), "params": params})
}

/// Runs `task`, checks the payload against the contract's shapes, snapshots it and returns it.
/// A run that touches no workspace is run again from the input's text, as the worker runs it
/// (`execute_json`, one pass over the text): the result must be the same.
fn run(name: &str, task: &Task, input: &Value, context: &ExecutionContext) -> RuntimeTaskResult {
    let result = execute_with(task, input, context);
    let before_workspace = matches!(
        result.failure(),
        Some(Failure::Input { .. } | Failure::WorkspaceInput { .. } | Failure::Params { .. })
    );
    if task.workspace().is_none() || before_workspace {
        for text in [
            input.to_string(),
            serde_json::to_string_pretty(input).unwrap(),
        ] {
            let again = execute_json(task, &text, context, &Attempt::LOCAL);
            assert_eq!(again, result, "{name}: from the text {text}");
        }
    }
    let payload = result.conductor_payload();
    check_shape(task, &payload);
    insta::assert_json_snapshot!(name, payload);
    result
}

/// The status table and the strict top-level shapes table, and perago's result contract.
fn check_shape(task: &Task, payload: &Value) {
    let keys: Vec<&str> = payload
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    match payload["status"].as_str().unwrap() {
        "COMPLETED" => {
            assert_eq!(keys, ["status", "output"], "{payload}");
            let output: Vec<&str> = payload["output"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(output, task.kind.output_keys(), "{payload}");
        }
        "FAILED" | "FAILED_WITH_TERMINAL_ERROR" => {
            assert_eq!(keys, ["status", "reasonForIncompletion"], "{payload}");
            assert!(
                !payload["reasonForIncompletion"]
                    .as_str()
                    .unwrap()
                    .is_empty()
            );
        }
        other => panic!("status {other}"),
    }
    let violations = match task.kind {
        TaskKind::WorkspaceFree => WorkspaceFreeTaskResult::violations(payload),
        TaskKind::Workspace(_) => WorkspaceTaskResult::violations(payload),
    };
    assert!(violations.is_empty(), "{payload}: {violations}");
}

fn reason(result: &RuntimeTaskResult) -> &str {
    result.reason().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The status table: COMPLETED.

#[test]
fn completed_workspace_free() {
    let input = json!({"params": {"song_id": "song-000123", "min_duration_seconds": 30}});
    let r = run(
        "completed_workspace_free",
        &validate_song::TASK,
        &input,
        &ExecutionContext::default(),
    );
    assert_eq!(r.status(), TaskStatus::Completed);
    assert_eq!(
        r.conductor_payload(),
        json!({"status": "COMPLETED", "output": {"result": {"valid": true, "reason": null}}})
    );
    assert!(r.reason().is_none() && r.failure().is_none());
}

#[test]
fn a_business_outcome_is_a_completion() {
    // song-000124 is 21s long: too short is `valid: false`, a result, not a failure.
    let input = json!({"params": {"song_id": "song-000124", "min_duration_seconds": 30}});
    let r = run(
        "business_outcome",
        &validate_song::TASK,
        &input,
        &ExecutionContext::default(),
    );
    assert!(r.is_completed());
    assert_eq!(r.output().unwrap()["result"]["valid"], false);
}

#[test]
fn a_mapping_result_is_validated_and_serialised_by_its_type() {
    let input = json!({"params": {"song_id": "s"}});
    let r = run(
        "mapping_ok",
        &mapping_ok::TASK,
        &input,
        &ExecutionContext::default(),
    );
    // The typed value decides the key order.
    assert_eq!(
        serde_json::to_string(r.output().unwrap()).unwrap(),
        r#"{"result":{"valid":false,"reason":"checked by hand"}}"#
    );
}

// ---------------------------------------------------------------------------------------------
// Defaults.

#[test]
fn defaults_are_applied_to_the_typed_params_but_never_echoed() {
    // No min_duration_seconds: the schema's default 30 applies, so the 21s song is too short.
    let input = json!({"params": {"song_id": "song-000124"}});
    let before = input.clone();
    let r = run(
        "defaults_applied",
        &validate_song::TASK,
        &input,
        &ExecutionContext::default(),
    );
    assert_eq!(
        r.output().unwrap()["result"],
        json!({"valid": false, "reason": "duration 21s is below the minimum of 30s"})
    );
    assert_eq!(input, before, "the input is never changed");
    let text = serde_json::to_string(&r.conductor_payload()).unwrap();
    assert!(!text.contains("min_duration_seconds"), "{text}");
    // An explicit value wins over the default.
    let input = json!({"params": {"song_id": "song-000124", "min_duration_seconds": 20}});
    let r = execute(&validate_song::TASK, &input);
    assert_eq!(r.output().unwrap()["result"]["valid"], true);
}

// ---------------------------------------------------------------------------------------------
// The strict top-level shapes table and the input errors.

#[test]
fn workspace_free_input_is_exactly_params() {
    let task = &validate_song::TASK;
    let ok = json!({"params": {"song_id": "song-000123"}});
    assert!(execute(task, &ok).is_completed());
    let cases = [
        (
            "free_params_spread",
            json!({"song_id": "song-000123", "min_duration_seconds": 30}),
        ),
        (
            "free_with_workspace",
            json!({"workspace": seed_workspace(), "params": {"song_id": "song-000123"}}),
        ),
        ("free_missing_params", json!({})),
        ("free_not_an_object", json!([{"params": {}}])),
    ];
    for (name, input) in cases {
        let r = run(name, task, &input, &ExecutionContext::default());
        assert_eq!(r.status(), TaskStatus::Failed, "{name}");
    }
    let spread = execute(task, &json!({"song_id": "x", "min_duration_seconds": 30}));
    assert_eq!(
        reason(&spread),
        "workspace-free task input must contain only params"
    );
    let Some(Failure::Input { violations, .. }) = spread.failure() else {
        panic!("{:?}", spread.failure());
    };
    let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["$.song_id", "$.min_duration_seconds", "$.params"]);
}

/// The worker's door, `execute_json`: one pass over the text, and for text that pass cannot
/// read, the strict parser's wording; whatever the order of the members, the result is the one
/// of the parsed document.
#[test]
fn input_text_is_read_in_one_pass_with_the_same_results() {
    let context = ExecutionContext::default();
    let ws = r#"{"repository": "song-000123", "branch": "main", "ref_type": "commit", "ref": "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3"}"#;
    let free = &validate_song::TASK;
    let with_ws = &build_features::TASK;
    let cases: Vec<(&Task, String)> = vec![
        (free, r#"{"params": {"song_id": "song-000123"}}"#.into()),
        (free, r#"{"params": {"song_id": "", "strict": 1, "min_duration_seconds": "x"}}"#.into()),
        (free, r#"{"x": [1, {"y": null}], "params": {"song_id": "s"}, "z": 1}"#.into()),
        (free, format!(r#"{{"params": {{"song_id": "s"}}, "workspace": {ws}}}"#)),
        (free, r#"{}"#.into()),
        (free, r#"[{"params": {}}]"#.into()),
        (free, r#""params""#.into()),
        (free, r#"null"#.into()),
        (with_ws, format!(r#"{{"params": {{"feature_set": ""}}, "workspace": {ws}}}"#)),
        (with_ws, r#"{"params": {"feature_set": "default"}, "workspace": {"ref_type": "branch", "x": 1}}"#.into()),
        (with_ws, r#"{"workspace": 7, "params": 8}"#.into()),
        (with_ws, r#"{"params": {}}"#.into()),
    ];
    for (task, text) in &cases {
        let value: Value = serde_json::from_str(text).unwrap();
        let expected = execute_with(task, &value, &context);
        let got = execute_json(task, text, &context, &Attempt::LOCAL);
        assert_eq!(got, expected, "{text}");
    }
    // What the strict parser refuses, as it words it, wherever it is.
    let refused = [
        (
            r#"{"params": {"song_id": "a", "song_id": "b"}}"#,
            "task input: $.params.song_id: duplicate field",
        ),
        (
            r#"{"params": {"song_id": "a"}, "params": {"song_id": "a"}}"#,
            "task input: $.params: duplicate field",
        ),
        (
            r#"{"x": {"k": 1, "k": 2}, "params": {"song_id": "a"}}"#,
            "task input: $.x.k: duplicate field",
        ),
        (
            r#"{"params": {"song_id": "a"}"#,
            "task input: $: malformed JSON: EOF while parsing an object at line 1 column 27",
        ),
        (
            r#"{"params": {"song_id": "a"}} x"#,
            "task input: $: malformed JSON: trailing characters at line 1 column 30",
        ),
        (
            "\u{feff}{\"params\": {\"song_id\": \"a\"}}",
            "task input: $: malformed JSON: the document starts with a byte order mark (U+FEFF), which JSON does not allow: save it as UTF-8 without a BOM",
        ),
    ];
    for (text, reason) in refused {
        let got = execute_json(free, text, &context, &Attempt::LOCAL);
        assert_eq!(got.status(), TaskStatus::Failed, "{text}");
        assert_eq!(got.reason(), Some(reason), "{text}");
        assert!(
            matches!(got.failure(), Some(Failure::Input { .. })),
            "{text}"
        );
    }
}

#[test]
fn workspace_input_is_exactly_workspace_and_params() {
    let task = &build_features::TASK;
    // Input checks come first: no store is needed to refuse these.
    let context = ExecutionContext::default();
    let params = json!({"feature_set": "default", "min_rows": 100});
    let cases = [
        ("ws_missing_workspace", json!({"params": params})),
        ("ws_missing_params", json!({"workspace": seed_workspace()})),
        (
            "ws_extra_key",
            json!({"workspace": seed_workspace(), "params": params, "min_rows": 100}),
        ),
        (
            "ws_params_spread",
            json!({"workspace": seed_workspace(), "feature_set": "default", "min_rows": 100}),
        ),
    ];
    for (name, input) in cases {
        let r = run(name, task, &input, &context);
        assert_eq!(r.status(), TaskStatus::Failed, "{name}");
    }
    let extra = execute_with(
        task,
        &json!({"workspace": seed_workspace(), "params": params, "min_rows": 1}),
        &context,
    );
    assert_eq!(
        reason(&extra),
        "workspace task input must contain only workspace and params"
    );
}

#[test]
fn workspace_field_errors() {
    let task = &build_features::TASK;
    let context = ExecutionContext::default();
    let params = json!({"feature_set": "default", "min_rows": 100});
    let mut missing_ref = seed_workspace();
    missing_ref.as_object_mut().unwrap().remove("ref");
    let mut empty_repository = seed_workspace();
    empty_repository["repository"] = json!("");
    let mut branch_ref = seed_workspace();
    branch_ref["ref_type"] = json!("branch");
    let mut extra = seed_workspace();
    extra["endpoint"] = json!("http://lakefs");
    let cases = [
        (
            "ws_missing_field",
            missing_ref,
            "$.workspace.ref: required field is missing",
        ),
        (
            "ws_empty_field",
            empty_repository,
            "$.workspace.repository: must be at least 1 character long",
        ),
        (
            "ws_ref_type",
            branch_ref,
            "$.workspace.ref_type: must be \"commit\"",
        ),
        (
            "ws_extra_field",
            extra,
            "$.workspace.endpoint: unknown field",
        ),
    ];
    for (name, workspace, expected) in cases {
        let input = json!({"workspace": workspace, "params": params});
        let r = run(name, task, &input, &context);
        assert_eq!(r.status(), TaskStatus::Failed, "{name}");
        assert_eq!(reason(&r), expected, "{name}");
    }
}

#[test]
fn params_errors() {
    let task = &validate_song::TASK;
    let input = json!({"params": {"song_id": "", "min_duration_seconds": "30", "strict": true}});
    let r = run("params_invalid", task, &input, &ExecutionContext::default());
    assert_eq!(reason(&r), "$.params.strict: unknown field");
    // Every violation is in the detail, unknown fields first.
    let all: Vec<String> = r
        .failure()
        .unwrap()
        .violations()
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(
        all,
        [
            "$.params.strict: unknown field",
            "$.params.song_id: must be at least 1 character long",
            "$.params.min_duration_seconds: must be an integer, found a string",
        ]
    );
    // Params errors come before a missing workspace directory.
    let ws = with_workspace(json!({"feature_set": "Default!", "min_rows": 1}));
    let r = execute(&build_features::TASK, &ws);
    assert!(reason(&r).starts_with("$.params.feature_set"), "{r:?}");
}

#[test]
fn an_extra_nested_field_is_rejected() {
    let input = with_workspace(json!({
        "feature_set": "default",
        "min_rows": 100,
        "columns": {"exclude": ["f01"], "include": ["f02"]},
    }));
    let r = run(
        "params_nested_extra",
        &build_features::TASK,
        &input,
        &ExecutionContext::default(),
    );
    assert_eq!(reason(&r), "$.params.columns.include: unknown field");
    // Without it, the nested object is used.
    let backend = Backend::local();
    let input = json!({
        "workspace": workspace_at(&backend.import_example()),
        "params": {"feature_set": "default", "min_rows": 100, "columns": {"exclude": ["f01", "f02"]}},
    });
    let r = execute_with(&build_features::TASK, &input, &backend.context());
    assert_eq!(r.output().unwrap()["result"]["feature_count"], 22);
}

// ---------------------------------------------------------------------------------------------
// The status table: FAILED and FAILED_WITH_TERMINAL_ERROR from the handler and guardrails.

#[test]
fn task_failed_is_failed() {
    let r = run(
        "task_failed",
        &fails::TASK,
        &json!({"params": {"song_id": "catalog timed out"}}),
        &ExecutionContext::default(),
    );
    assert_eq!(r.status(), TaskStatus::Failed);
    assert_eq!(reason(&r), "catalog timed out");
}

#[test]
fn task_terminal_error_is_terminal() {
    let r = run(
        "task_terminal",
        &validate_song::TASK,
        &json!({"params": {"song_id": "song-999999"}}),
        &ExecutionContext::default(),
    );
    assert_eq!(r.status(), TaskStatus::FailedWithTerminalError);
    assert_eq!(reason(&r), "song song-999999 is not in the catalog");
}

#[test]
fn an_unknown_error_is_failed_with_its_chain_in_the_detail() {
    let r = run(
        "unknown_error",
        &unknown_error::TASK,
        &json!({"params": {"song_id": "s"}}),
        &ExecutionContext::default(),
    );
    assert_eq!(r.status(), TaskStatus::Failed);
    assert_eq!(reason(&r), "catalog unavailable");
    let detail = serde_json::to_value(r.failure().unwrap()).unwrap();
    assert_eq!(
        detail,
        json!({"stage": "task", "kind": "unknown", "chain": ["catalog unavailable", "connection refused"]})
    );
}

#[test]
fn a_panicking_handler_is_failed_and_the_process_survives() {
    for _ in 0..2 {
        let r = run(
            "panic",
            &panics::TASK,
            &json!({"params": {"song_id": "s", "min_duration_seconds": 7}}),
            &ExecutionContext::default(),
        );
        assert_eq!(r.status(), TaskStatus::Failed);
        assert_eq!(
            reason(&r),
            "task handler panicked: catalog index 7 out of range"
        );
    }
    // And the runtime still works.
    assert!(
        execute(
            &validate_song::TASK,
            &json!({"params": {"song_id": "song-000123"}})
        )
        .is_completed()
    );
}

#[test]
fn a_result_mapping_with_an_extra_field_is_failed() {
    let r = run(
        "result_mapping_extra",
        &mapping_extra::TASK,
        &json!({"params": {"song_id": "s"}}),
        &ExecutionContext::default(),
    );
    assert_eq!(r.status(), TaskStatus::Failed);
    assert_eq!(reason(&r), "invalid result: $.result.score: unknown field");
}

#[test]
fn a_typed_result_is_validated_again() {
    let r = run(
        "result_typed_invalid",
        &bad_typed_result::TASK,
        &json!({"params": {"feature_set": "x", "min_rows": 0}}),
        &ExecutionContext::default(),
    );
    assert_eq!(
        reason(&r),
        "invalid result: $.result.row_count: must be >= 0"
    );
}

// ---------------------------------------------------------------------------------------------
// reasonForIncompletion's length, the log record, the registry.

#[test]
fn the_reason_is_cut_at_the_limit_on_a_character_boundary() {
    let long = "歌曲目录超时".repeat(100); // 600 characters, 1800 bytes
    let input = json!({"params": {"song_id": long}});
    // The default limit: Conductor's 500.
    let r = execute(&fails::TASK, &input);
    assert_eq!(reason(&r).chars().count(), 500);
    assert_eq!(reason(&r), long.chars().take(500).collect::<String>());
    // A configured limit; an emoji counts two UTF-16 units and is never split.
    let context = ExecutionContext {
        config: RuntimeConfig::from_lookup(|_| Some("7".into())).unwrap(),
        ..ExecutionContext::default()
    };
    let five = ExecutionContext {
        config: RuntimeConfig::from_lookup(|_| Some("5".into())).unwrap(),
        ..ExecutionContext::default()
    };
    let r = execute_with(
        &fails::TASK,
        &json!({"params": {"song_id": "歌曲目录😀超时"}}),
        &five,
    );
    assert_eq!(reason(&r), "歌曲目录");
    let r = execute_with(
        &fails::TASK,
        &json!({"params": {"song_id": "歌曲目录😀超时"}}),
        &context,
    );
    assert_eq!(reason(&r), "歌曲目录😀超");
    let r = execute_with(
        &fails::TASK,
        &json!({"params": {"song_id": "歌曲目录超时😀"}}),
        &context,
    );
    assert_eq!(reason(&r), "歌曲目录超时");
    check_shape(&fails::TASK, &r.conductor_payload());
    // The log keeps the whole message.
    let Some(Failure::Task { chain, .. }) = r.failure() else {
        panic!("{:?}", r.failure());
    };
    assert_eq!(chain, &["歌曲目录超时😀"]);
}

#[test]
fn the_json_lines_log_record() {
    let input = json!({"params": {"song_id": "", "min_duration_seconds": -1}});
    let r = execute(&validate_song::TASK, &input);
    let log = JsonLines::new(Vec::new());
    log.write(&TaskRecord::of(
        &r,
        "validate_song",
        Some("task-1"),
        Some("wf-1"),
    ))
    .unwrap();
    let ok = execute(
        &validate_song::TASK,
        &json!({"params": {"song_id": "song-000123"}}),
    );
    log.write(&TaskRecord::of(&ok, "validate_song", None, None))
        .unwrap();
    let text = String::from_utf8(log.into_inner()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(text.ends_with('\n'));
    let mut records: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for record in &mut records {
        let time = record["time"].as_str().unwrap();
        assert!(
            time.len() == 24 && time.ends_with('Z') && &time[10..11] == "T",
            "{time}"
        );
        record["time"] = json!("[time]");
    }
    insta::assert_json_snapshot!("log_records", records);
    assert_eq!(records[0]["status"], "FAILED");
    assert_eq!(
        records[0]["detail"]["violations"].as_array().unwrap().len(),
        2
    );
    assert_eq!(records[1]["task_id"], Value::Null);
}

#[test]
fn registries_keep_order_and_reject_duplicate_names() {
    let registry = perago_example::registry();
    assert_eq!(
        registry.names(),
        ["validate_song", "build_features", "publish_features"]
    );
    assert_eq!(
        registry.get("build_features").unwrap().name,
        "build_features"
    );
    assert!(registry.get("nope").is_none());
    let err = Registry::new([&same_a::TASK, &same_b::TASK]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "two tasks are named `same`: `runtime::same_a` and `runtime::same_b`; task names must be \
         unique"
    );
    let _ = (same_a::NAME, same_b::NAME);
}

#[test]
fn descriptors_record_the_options() {
    let task = &validate_song::TASK;
    assert_eq!(task.kind, TaskKind::WorkspaceFree);
    assert_eq!(task.params.name, "ValidateSongParams");
    assert_eq!(task.result.name, "ValidateSongResult");
    assert_eq!(task.params.location, "validate-song-params.schema.json#");
    assert_eq!((task.params.schema)(), ValidateSongParams::schema());
    assert_eq!(task.options.retry_count, Some(2));
    assert_eq!(task.options.owner_email, Some("songs@example.com"));
    assert_eq!(task.options.schema_version, 1);
    assert!(!task.options.enforce_schema);
    assert!(
        task.options
            .description
            .unwrap()
            .starts_with("Checks that a song is in the catalog")
    );
    let spec = build_features::TASK.workspace().unwrap();
    assert_eq!(spec.prefix, "features/");
    assert_eq!(spec.access, perago::task::Access::ReadOnly);
    assert_eq!(spec.pre.len(), 1);
    assert_eq!(
        build_features::TASK.kind.input_keys(),
        ["workspace", "params"]
    );
    assert_eq!(
        build_features::TASK.kind.output_keys(),
        ["workspace", "result"]
    );
    let rw = publish_features::TASK.workspace().unwrap();
    assert_eq!(rw.access, perago::task::Access::ReadWrite);
    assert_eq!(rw.publish_budget.unwrap().max_files, Some(8));
    // Guardrails, access and budget never reach the contract: the schemas are the params' and
    // result's own.
    assert!(!(task.params.schema)().contains("guardrail"));
}
