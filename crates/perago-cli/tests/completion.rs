//! Runs `perago completion check` and `perago completion followups` as a user would.

mod common;

use common::{code, perago_in, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

const COMPLETION: &str = r#"{
  "contract": "worker-completion/v1",
  "summary": "Added JWT refresh-token rotation and tests.",
  "files_changed": ["src/auth/jwt.py", "tests/test_jwt.py"],
  "verification": {"command": "pytest tests/test_jwt.py", "exit_code": 0},
  "receipt_ref": "lineage:task-9f3a"
}
"#;

const REFUSAL: &str = r#"{
  "contract": "worker-completion/v1",
  "kind": "scope_exceeded",
  "detail": "Task spans three subsystems; splitting.",
  "proposed_split": ["Migrate the auth module", "Migrate the billing module"]
}
"#;

const INVALID: &str = r#"{"contract": "worker-completion/v2", "summary": "  ", "notes": 1, "verification": {"command": "make", "exit_code": 0.0}}"#;

fn perago(args: &[&str], stdin: &str) -> Output {
    perago_in(Path::new("."), args, stdin.as_bytes())
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).expect("stdout is one JSON document")
}

fn check(args: &[&str], stdin: &str) -> (i32, String) {
    let mut all = vec!["completion", "check"];
    all.extend_from_slice(args);
    let out = perago(&all, stdin);
    assert_eq!(stderr(&out), "", "nothing on stderr");
    (code(&out), stdout(&out))
}

// ---------------------------------------------------------------------------------------------
// check, text

#[test]
fn text_output_for_each_outcome() {
    assert_eq!(
        check(&[], COMPLETION),
        (
            0,
            "completion: valid worker-completion/v1 payload (2 changed files)\n".into()
        )
    );
    assert_eq!(
        check(&[], REFUSAL),
        (0, "refusal: scope_exceeded (worker-completion/v1)\n".into())
    );
    assert_eq!(
        check(&[], "Fixed the flaky test.\n"),
        (
            0,
            "legacy prose: accepted unchanged, not validated\n".into()
        )
    );
    assert_eq!(
        check(&[], " \n\u{3000}"),
        (
            1,
            "empty: blank result_summary (empty_result_summary)\n".into()
        )
    );
    assert_eq!(
        check(&[], INVALID),
        (
            1,
            "violation: 4 violations of worker-completion/v1\n\
             $.contract: unsupported contract version (expected worker-completion/v1)\n\
             $.notes: unknown field\n\
             $.summary: must be a non-empty string\n\
             $.verification.exit_code: must be an integer\n"
                .into()
        )
    );
}

#[test]
fn truncated_text_is_a_violation_not_prose() {
    let (status, text) = check(&[], "{\"summary\": \"unterminated");
    assert_eq!(status, 1);
    assert!(
        text.starts_with("violation: 1 violation of worker-completion/v1\n$: malformed JSON: "),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// check, JSON

#[test]
fn json_output_for_each_outcome() {
    let run = |args: &[&str], stdin: &str| {
        let mut all = vec!["completion", "check", "--format", "json"];
        all.extend_from_slice(args);
        let out = perago(&all, stdin);
        (code(&out), json_of(&out))
    };
    let canonical_completion: Value = serde_json::from_str(COMPLETION).expect("JSON");
    assert_eq!(
        run(&[], COMPLETION),
        (
            0,
            json!({"outcome": "completion", "contract_version": "worker-completion/v1",
                   "violations": [], "canonical": canonical_completion})
        )
    );
    let canonical_refusal: Value = serde_json::from_str(REFUSAL).expect("JSON");
    assert_eq!(
        run(&[], REFUSAL),
        (
            0,
            json!({"outcome": "refusal", "contract_version": "worker-completion/v1",
                   "kind": "scope_exceeded", "violations": [], "canonical": canonical_refusal})
        )
    );
    assert_eq!(
        run(&[], "prose"),
        (
            0,
            json!({"outcome": "legacy_prose", "contract_version": "worker-completion/v1", "violations": []})
        )
    );
    assert_eq!(
        run(&[], ""),
        (
            1,
            json!({"outcome": "empty", "contract_version": "worker-completion/v1", "violations": []})
        )
    );
    assert_eq!(
        run(&[], r#"{"kind": "nope", "detail": "d"}"#),
        (
            1,
            json!({"outcome": "violation", "contract_version": "worker-completion/v1",
                   "schema_error_path": "$.kind",
                   "violations": [{"path": "$.kind", "code": "discriminator",
                     "message": "unknown refusal kind (allowed: awaiting_operator, scope_exceeded, underspecified, blocked_on_dependency)"}]})
        )
    );
    // The canonical form is the canonical one, not the input.
    let (_, report) = run(&[], r#"{"summary": "s", "files_changed": null}"#);
    assert_eq!(
        report["canonical"],
        json!({"contract": "worker-completion/v1", "summary": "s", "files_changed": []})
    );
    let keys: Vec<String> = report
        .as_object()
        .expect("object")
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        ["outcome", "contract_version", "violations", "canonical"]
    );
}

#[test]
fn json_output_is_one_line() {
    let out = perago(&["completion", "check", "--format", "json"], INVALID);
    assert_eq!(stdout(&out).lines().count(), 1);
    assert_eq!(json_of(&out)["schema_error_path"], "$.contract");
    assert_eq!(
        json_of(&out)["violations"].as_array().map(Vec::len),
        Some(4)
    );
}

// ---------------------------------------------------------------------------------------------
// check --payload

#[test]
fn payload_mode_validates_whatever_the_document_holds() {
    let run = |stdin: &str| {
        let out = perago(
            &["completion", "check", "--payload", "--format", "json"],
            stdin,
        );
        (code(&out), json_of(&out))
    };
    let (status, report) = run(COMPLETION);
    assert_eq!(
        (status, report["outcome"].clone()),
        (0, json!("completion"))
    );
    for document in ["[]", "\"prose\"", "42", "null"] {
        let (status, report) = run(document);
        assert_eq!(status, 1, "{document}");
        assert_eq!(
            report["violations"],
            json!([{"path": "$", "code": "type", "message": "terminal payload must be a JSON object"}]),
            "{document}"
        );
    }
    // Prose is not a payload.
    let (status, report) = run("Fixed it.");
    assert_eq!(status, 1);
    assert_eq!(report["violations"][0]["code"], "malformed_json");
    // A repeated key is reported at its path.
    let (status, report) = run(r#"{"summary": "a", "summary": "b"}"#);
    assert_eq!(status, 1);
    assert_eq!(
        report["violations"],
        json!([{"path": "$.summary", "code": "duplicate_field", "message": "duplicate field"}])
    );
}

#[test]
fn payload_mode_reports_bytes_that_are_not_utf8_as_malformed() {
    let out = perago_in(
        Path::new("."),
        &["completion", "check", "--payload"],
        b"{\"summary\": \"\xff\"}",
    );
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains("$: malformed JSON: "),
        "{}",
        stdout(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// Input and usage

#[test]
fn reads_a_file_or_standard_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("refusal.json"), REFUSAL).expect("write");
    for args in [
        &["completion", "check", "refusal.json"][..],
        &["completion", "check", "-"],
        &["completion", "check"],
    ] {
        let stdin = if args.len() == 3 && args[2] == "refusal.json" {
            ""
        } else {
            REFUSAL
        };
        let out = perago_in(dir.path(), args, stdin.as_bytes());
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            "refusal: scope_exceeded (worker-completion/v1)\n"
        );
    }
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cases: [(&[&str], &[u8]); 6] = [
        (&["completion", "check", "missing.txt"], b""),
        (&["completion", "check", "--format", "yaml"], b"x"),
        (&["completion", "check", "--nope"], b"x"),
        (&["completion", "check"], b"\xff prose"),
        (&["completion", "followups"], b"{}"),
        (
            &["completion", "followups", "--parent", "T", "missing.json"],
            b"",
        ),
    ];
    for (args, stdin) in cases {
        let out = perago_in(dir.path(), args, stdin);
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }
    let out = perago_in(dir.path(), &["completion", "check"], b"\xff prose");
    assert_eq!(stderr(&out), "perago: <stdin>: not UTF-8 text\n");
}

// ---------------------------------------------------------------------------------------------
// followups

fn followups(parent: &str, stdin: &str) -> Output {
    perago(&["completion", "followups", "--parent", parent], stdin)
}

#[test]
fn followups_of_a_scope_exceeded_refusal() {
    let out = followups(
        "T-1",
        r#"{"kind": "scope_exceeded", "detail": "Too big.", "proposed_split": ["part one", "part two"]}"#,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let specs = json_of(&out);
    assert_eq!(
        specs,
        json!([
            {"id": "fu-90df2783d9e0", "parent_task_id": "T-1", "split_index": 0, "title": "part one",
             "description": "part one\n\nSplit 1 of 2 from task T-1 after a scope_exceeded refusal: Too big.",
             "origin": "scope_exceeded_split", "contract_version": "worker-completion/v1"},
            {"id": "fu-2970de185e27", "parent_task_id": "T-1", "split_index": 1, "title": "part two",
             "description": "part two\n\nSplit 2 of 2 from task T-1 after a scope_exceeded refusal: Too big.",
             "origin": "scope_exceeded_split", "contract_version": "worker-completion/v1"}
        ])
    );
    // Re-delivery derives the same set.
    let again = followups(
        "T-1",
        r#"{"proposed_split": ["part one", "part two"], "detail": "Too big.", "kind": "scope_exceeded"}"#,
    );
    assert_eq!(json_of(&again), specs);
}

#[test]
fn followups_of_other_payloads_are_empty() {
    for payload in [
        COMPLETION,
        r#"{"kind": "awaiting_operator", "detail": "d", "question": "q"}"#,
        r#"{"kind": "blocked_on_dependency", "detail": "d", "blocking_dep": "T-2"}"#,
    ] {
        let out = followups("T-1", payload);
        assert_eq!(code(&out), 0, "{payload}");
        assert_eq!(json_of(&out), json!([]), "{payload}");
    }
}

#[test]
fn followups_of_a_violation_exit_1_with_the_violations() {
    let out = followups(
        "T-1",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": []}"#,
    );
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "violation: 1 violation of worker-completion/v1\n$.proposed_split: must contain at least one item\n"
    );
    let out = followups("T-1", "Fixed it.");
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("$: malformed JSON: "));
}

// ---------------------------------------------------------------------------------------------
// The manual's examples (`docs/src/completion.md`)

#[test]
fn the_readme_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |args: &[&str]| {
        let out = perago_in(&root, args, b"");
        (code(&out), stdout(&out))
    };
    assert_eq!(
        run(&["completion", "check", "examples/invalid/completion.json"]),
        (
            1,
            "violation: 5 violations of worker-completion/v1\n\
             $.contract: unsupported contract version (expected worker-completion/v1)\n\
             $.notes: unknown field\n\
             $.summary: must be a non-empty string\n\
             $.files_changed[1]: must be a non-empty string\n\
             $.verification.exit_code: must be an integer\n"
                .into()
        )
    );
    let (status, specs) = run(&[
        "completion",
        "followups",
        "--parent",
        "T-1",
        "examples/refusal-scope-exceeded.json",
    ]);
    assert_eq!(status, 0);
    let specs: Value = serde_json::from_str(&specs).expect("JSON");
    assert_eq!(specs[0]["id"], "fu-358c635bb310");
    assert_eq!(specs[1]["id"], "fu-b4f1c835175c");
}
