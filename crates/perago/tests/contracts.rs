//! The generated contract types on the seed documents: typed values, violations, round trips.

use perago::Contract;
use perago::contracts::workspace_free_task_result::WorkspaceFreeTaskResult;
use perago::contracts::workspace_task_input::WorkspaceTaskInput;
use perago_completion::contracts::worker_completion_v1::{Completion, WorkerCompletionV1};
use serde_json::{Value, json};

fn paths(violations: &perago::Violations) -> Vec<(&str, &str)> {
    violations
        .iter()
        .map(|v| (v.path.as_str(), v.code.as_str()))
        .collect()
}

#[test]
fn seed_workspace_input_is_typed() {
    let doc = json!({
        "workspace": {"repository": "song-000123", "branch": "main", "ref_type": "commit", "ref": "589f877"},
        "params": {"feature_set": "default", "min_rows": 100}
    });
    let typed = WorkspaceTaskInput::from_slice(doc.to_string().as_bytes()).expect("valid");
    assert_eq!(typed.workspace.repository, "song-000123");
    assert_eq!(typed.params["min_rows"], 100);
    assert_eq!(serde_json::to_value(&typed).expect("serialises"), doc);
    assert_eq!(WorkspaceTaskInput::from_value(&doc).expect("valid"), typed);
}

#[test]
fn every_violation_in_check_order_with_unknown_fields_first() {
    let doc = json!({
        "workspace": {"repository": "", "branch": "main", "ref_type": "branch", "extra": 1},
        "params": {},
        "min_rows": 100
    });
    let bytes = doc.to_string();
    let err = WorkspaceTaskInput::from_slice(bytes.as_bytes()).expect_err("invalid");
    assert_eq!(
        paths(&err),
        [
            ("$.min_rows", "unknown_field"),
            ("$.workspace.extra", "unknown_field"),
            ("$.workspace.repository", "min_length"),
            ("$.workspace.ref_type", "const"),
            ("$.workspace.ref", "required"),
        ]
    );
    assert_eq!(
        err.to_string().lines().next(),
        Some("$.min_rows: unknown field")
    );
    assert_eq!(
        WorkspaceTaskInput::from_value(&doc).expect_err("invalid"),
        err
    );
}

#[test]
fn completion_bytes_and_walk_agree_on_null_and_absent() {
    let with_nulls = json!({"summary": "done", "files_changed": null, "verification": null, "receipt_ref": null});
    let typed = WorkerCompletionV1::from_slice(with_nulls.to_string().as_bytes()).expect("valid");
    let WorkerCompletionV1::Completion(Completion {
        files_changed,
        verification,
        receipt_ref,
        ..
    }) = &typed
    else {
        panic!("a completion: {typed:?}");
    };
    assert_eq!(
        (files_changed, verification, receipt_ref),
        (&None, &None, &None)
    );
    assert_eq!(
        WorkerCompletionV1::from_value(&with_nulls).expect("valid"),
        typed
    );

    // `contract` is optional but never null.
    let null_contract = json!({"contract": null, "summary": "done"});
    let err =
        WorkerCompletionV1::from_slice(null_contract.to_string().as_bytes()).expect_err("invalid");
    assert_eq!(paths(&err), [("$.contract", "const")]);
}

#[test]
fn refusal_kinds_dispatch_and_unknown_kinds_fail_at_kind() {
    let refusal =
        json!({"kind": "scope_exceeded", "detail": "too big", "proposed_split": ["a", "b"]});
    let typed = WorkerCompletionV1::from_slice(refusal.to_string().as_bytes()).expect("valid");
    assert!(matches!(typed, WorkerCompletionV1::ScopeExceeded(_)));
    assert_eq!(serde_json::to_value(&typed).expect("serialises"), refusal);

    for kind in [json!("other"), json!(null), json!(3)] {
        let doc = json!({"kind": kind, "detail": "x"});
        let err = WorkerCompletionV1::from_slice(doc.to_string().as_bytes()).expect_err("invalid");
        assert_eq!(paths(&err), [("$.kind", "discriminator")], "{doc}");
    }
    let stray = json!({"summary": "done", "question": "why?"});
    let err = WorkerCompletionV1::from_slice(stray.to_string().as_bytes()).expect_err("invalid");
    assert_eq!(paths(&err), [("$.question", "unknown_field")]);
}

#[test]
fn integers_follow_json_schema_and_fit_i64() {
    let doc =
        |code: Value| json!({"summary": "s", "verification": {"command": "c", "exit_code": code}});
    let typed = WorkerCompletionV1::from_slice(doc(json!(1.0)).to_string().as_bytes())
        .expect("1.0 is an integer");
    assert!(
        matches!(typed, WorkerCompletionV1::Completion(Completion { verification: Some(ref v), .. }) if v.exit_code == 1)
    );
    for bad in [json!(1.5), json!(true), json!("0")] {
        let err = WorkerCompletionV1::from_slice(doc(bad.clone()).to_string().as_bytes())
            .expect_err("invalid");
        assert_eq!(paths(&err), [("$.verification.exit_code", "type")], "{bad}");
    }
    let err = WorkerCompletionV1::from_slice(
        br#"{"summary":"s","verification":{"command":"c","exit_code":18446744073709551615}}"#,
    )
    .expect_err("beyond i64");
    assert_eq!(paths(&err), [("$.verification.exit_code", "integer_range")]);
}

#[test]
fn malformed_documents_are_a_violation_at_the_root() {
    for bytes in [
        &b"{\"summary\": \"unterminated"[..],
        b"",
        b"{} trailing",
        b"\xff",
    ] {
        let err = WorkerCompletionV1::from_slice(bytes).expect_err("malformed");
        assert_eq!(paths(&err), [("$", "malformed_json")]);
    }
    let deep = "[".repeat(10_000);
    let err = WorkerCompletionV1::from_slice(deep.as_bytes()).expect_err("too deep");
    assert_eq!(paths(&err), [("$", "malformed_json")]);
}

#[test]
fn task_result_payloads_forbid_the_other_fields() {
    let ok = json!({"status": "COMPLETED", "output": {"result": {"valid": true, "reason": null}}});
    assert!(WorkspaceFreeTaskResult::from_slice(ok.to_string().as_bytes()).is_ok());
    let both = json!({"status": "FAILED", "reasonForIncompletion": "x", "output": {"result": {}}});
    let err =
        WorkspaceFreeTaskResult::from_slice(both.to_string().as_bytes()).expect_err("invalid");
    assert_eq!(paths(&err), [("$.output", "unknown_field")]);
    let completed_with_reason =
        json!({"status": "COMPLETED", "output": {"result": {}}, "reasonForIncompletion": "x"});
    let err = WorkspaceFreeTaskResult::from_slice(completed_with_reason.to_string().as_bytes())
        .expect_err("invalid");
    assert_eq!(paths(&err), [("$.reasonForIncompletion", "unknown_field")]);
    let err = WorkspaceFreeTaskResult::from_slice(br#"{"output": {"result": {}}}"#)
        .expect_err("no status");
    assert_eq!(paths(&err), [("$.status", "required")]);
}

/// A repeated key is one `duplicate_field` violation at its path, whichever occurrence is
/// valid: a closed contract must not depend on which of two equal keys a parser keeps. Every
/// door rejects it the same way (the interpreter, the runtime, `perago completion check`).
#[test]
fn repeated_keys_are_rejected_at_their_path() {
    fn rejected<T: Contract + std::fmt::Debug>(doc: &str) -> Vec<(String, String)> {
        let e = T::from_slice(doc.as_bytes()).expect_err(doc);
        paths(&e)
            .into_iter()
            .map(|(p, c)| (p.to_owned(), c.to_owned()))
            .collect()
    }
    let ws = r#""repository": "r", "branch": "b", "ref_type": "commit""#;
    let duplicate = |path: &str| vec![(path.to_owned(), "duplicate_field".to_owned())];
    for doc in [
        // A declared key, valid first or last.
        format!(r#"{{"workspace": {{{ws}, "ref": "", "ref": "c"}}, "params": {{}}}}"#),
        format!(r#"{{"workspace": {{{ws}, "ref": "c", "ref": ""}}, "params": {{}}}}"#),
        // The closed contract's own example: the last `ref_type` would pass.
        r#"{"workspace": {"repository": "r", "branch": "b", "ref": "c", "ref_type": "branch", "ref_type": "commit"}, "params": {}}"#
            .to_owned(),
    ] {
        let path = if doc.contains("ref_type\": \"branch") {
            "$.workspace.ref_type"
        } else {
            "$.workspace.ref"
        };
        assert_eq!(
            rejected::<WorkspaceTaskInput>(&doc),
            duplicate(path),
            "{doc}"
        );
    }
    // Inside a member the contract does not declare (found by fuzzing: the single pass read
    // it leniently, and reported the unknown field instead).
    assert_eq!(
        rejected::<WorkspaceTaskInput>(&format!(
            r#"{{"workspace": {{{ws}, "ref": "c"}}, "params": {{}}, "extra": {{"a": 1, "a": 2}}}}"#
        )),
        duplicate("$.extra.a")
    );
    assert_eq!(
        rejected::<WorkerCompletionV1>(
            r#"{"workspace": {"branch": "", "x": 1, "branch": ""}, "min_rows": 100}"#
        ),
        duplicate("$.workspace.branch")
    );
    // An unknown key, a map entry.
    assert_eq!(
        rejected::<WorkspaceTaskInput>(&format!(
            r#"{{"workspace": {{{ws}, "ref": "c", "x": 1, "x": 2}}, "params": {{}}}}"#
        )),
        duplicate("$.workspace.x")
    );
    assert_eq!(
        rejected::<WorkspaceTaskInput>(&format!(
            r#"{{"workspace": {{{ws}, "ref": "c"}}, "params": {{"a": 1, "b": 2, "a": 3}}}}"#
        )),
        duplicate("$.params.a")
    );
    // The discriminator of a `oneOf`.
    assert_eq!(
        rejected::<WorkerCompletionV1>(
            r#"{"kind": "nonsense", "detail": "d", "question": "q?", "kind": "underspecified"}"#,
        ),
        duplicate("$.kind")
    );
}

/// Members in any order report in the interpreter's order: unknown fields in document order first,
/// then declared properties in schema order.
#[test]
fn member_order_does_not_change_the_report() {
    let forward = r#"{"summary": " ", "files_changed": [""], "zz": 1, "verification": {"exit_code": "0"}, "aa": 2}"#;
    let backward = r#"{"aa": 2, "verification": {"exit_code": "0"}, "zz": 1, "files_changed": [""], "summary": " "}"#;
    let expected = |first: &str, second: &str| {
        vec![
            (format!("$.{first}"), "unknown_field"),
            (format!("$.{second}"), "unknown_field"),
            ("$.summary".into(), "pattern"),
            ("$.files_changed[0]".into(), "pattern"),
            ("$.verification.command".into(), "required"),
            ("$.verification.exit_code".into(), "type"),
        ]
    };
    for (doc, first, second) in [(forward, "zz", "aa"), (backward, "aa", "zz")] {
        let err = WorkerCompletionV1::from_slice(doc.as_bytes()).expect_err("invalid");
        let got: Vec<(String, &str)> = paths(&err)
            .into_iter()
            .map(|(p, c)| (p.to_owned(), c))
            .collect();
        assert_eq!(got, expected(first, second), "{doc}");
        let value: Value = serde_json::from_str(doc).expect("JSON");
        assert_eq!(
            WorkerCompletionV1::from_value(&value).expect_err("invalid"),
            err
        );
    }
}
