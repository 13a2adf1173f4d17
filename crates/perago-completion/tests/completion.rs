//! worker-completion/v1 against its specification: the examples of its reference page, then every rule,
//! message and path of `docs/src/reference/completion-contract.md` §2–§5 and §7 as a table of documents and the
//! exact violations each must produce, in order.

use perago_completion::{
    AuditEvent, CONTRACT_VERSION, Completion, ContractRecord, Outcome, Payload, Refusal,
    RefusalKind, Validation, Verification, classify_payload, classify_submission, classify_text,
    is_payload_text, validate, validate_text,
};
use perago_schema::Code;
use serde_json::{Value, json};

/// The completion example of the seed, verbatim.
const SEED_COMPLETION: &str = r#"{
  "contract": "worker-completion/v1",
  "summary": "Added JWT refresh-token rotation and tests.",
  "files_changed": ["src/auth/jwt.py", "tests/test_jwt.py"],
  "verification": {"command": "pytest tests/test_jwt.py", "exit_code": 0},
  "receipt_ref": "lineage:task-9f3a"
}"#;

/// The refusal example of the seed, verbatim.
const SEED_REFUSAL: &str = r#"{
  "contract": "worker-completion/v1",
  "kind": "scope_exceeded",
  "detail": "Task spans three subsystems; splitting.",
  "proposed_split": ["Migrate the auth module", "Migrate the billing module"]
}"#;

const UNKNOWN_KIND: &str = "unknown refusal kind (allowed: awaiting_operator, scope_exceeded, underspecified, blocked_on_dependency)";
const UNSUPPORTED: &str = "unsupported contract version (expected worker-completion/v1)";
const NON_EMPTY: &str = "must be a non-empty string";

/// (path, message) of every violation `text` produces as a `result_summary`, in order.
fn violations(text: &str) -> Vec<(String, String)> {
    match classify_text(text) {
        Outcome::Violation(v) => v.into_iter().map(|v| (v.path, v.message)).collect(),
        other => panic!("not a violation: {other:?}\n{text}"),
    }
}

fn assert_violations(text: &str, expected: &[(&str, &str)]) {
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(p, m)| ((*p).to_owned(), (*m).to_owned()))
        .collect();
    assert_eq!(violations(text), expected, "{text}");
}

fn completion(text: &str) -> Completion {
    match classify_text(text) {
        Outcome::Completion(c) => c,
        other => panic!("not a completion: {other:?}\n{text}"),
    }
}

fn refusal(text: &str) -> Refusal {
    match classify_text(text) {
        Outcome::Refusal(r) => r,
        other => panic!("not a refusal: {other:?}\n{text}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The seed

#[test]
fn seed_completion_example() {
    let c = completion(SEED_COMPLETION);
    assert_eq!(
        c,
        Completion {
            summary: "Added JWT refresh-token rotation and tests.".into(),
            files_changed: vec!["src/auth/jwt.py".into(), "tests/test_jwt.py".into()],
            verification: Some(Verification {
                command: "pytest tests/test_jwt.py".into(),
                exit_code: 0,
            }),
            receipt_ref: Some("lineage:task-9f3a".into()),
        }
    );
    let seed: Value = serde_json::from_str(SEED_COMPLETION).expect("JSON");
    assert_eq!(
        c.to_canonical(),
        seed,
        "the seed example is already canonical"
    );
}

#[test]
fn seed_refusal_example() {
    let r = refusal(SEED_REFUSAL);
    assert_eq!(
        r,
        Refusal::ScopeExceeded {
            detail: "Task spans three subsystems; splitting.".into(),
            proposed_split: vec![
                "Migrate the auth module".into(),
                "Migrate the billing module".into()
            ],
        }
    );
    assert_eq!(r.kind(), RefusalKind::ScopeExceeded);
    let seed: Value = serde_json::from_str(SEED_REFUSAL).expect("JSON");
    assert_eq!(r.to_canonical(), seed);
}

#[test]
fn seed_validation_bullets() {
    // Unknown top-level fields, unknown kinds, missing required fields, malformed JSON.
    assert_violations(
        r#"{"summary": "s", "extra": 1}"#,
        &[("$.extra", "unknown field")],
    );
    assert_violations(
        r#"{"kind": "gave_up", "detail": "d"}"#,
        &[("$.kind", UNKNOWN_KIND)],
    );
    assert_violations(
        r#"{"kind": "blocked_on_dependency", "detail": "d"}"#,
        &[("$.blocking_dep", "required field is missing")],
    );
    let v = violations(r#"{"summary": "s""#);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].0, "$");
    assert!(v[0].1.starts_with("malformed JSON: "), "{}", v[0].1);
    // The seed's own example paths.
    assert_violations(
        r#"{"summary": 1}"#,
        &[("$.summary", "must be a non-empty string")],
    );
    assert_violations(
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": ["a", ""]}"#,
        &[("$.proposed_split[1]", NON_EMPTY)],
    );
}

#[test]
fn every_refusal_kind_with_its_field() {
    let cases = [
        (
            r#"{"kind": "awaiting_operator", "detail": "d", "question": "ship it?"}"#,
            RefusalKind::AwaitingOperator,
            "question",
        ),
        (
            r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": ["a"]}"#,
            RefusalKind::ScopeExceeded,
            "proposed_split",
        ),
        (
            r#"{"kind": "underspecified", "detail": "d", "question": "which?"}"#,
            RefusalKind::Underspecified,
            "question",
        ),
        (
            r#"{"kind": "blocked_on_dependency", "detail": "d", "blocking_dep": "T-7"}"#,
            RefusalKind::BlockedOnDependency,
            "blocking_dep",
        ),
    ];
    for (text, kind, field) in cases {
        let r = refusal(text);
        assert_eq!(r.kind(), kind);
        assert_eq!(r.detail(), "d");
        assert_eq!(kind.field(), field);
        let canonical = r.to_canonical();
        let keys: Vec<&String> = canonical.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["contract", "kind", "detail", field]);
    }
    let names: Vec<&str> = RefusalKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "awaiting_operator",
            "scope_exceeded",
            "underspecified",
            "blocked_on_dependency"
        ]
    );
    for kind in RefusalKind::ALL {
        assert_eq!(RefusalKind::from_name(kind.as_str()), Some(kind));
        assert_eq!(
            serde_json::to_value(kind).expect("serialises"),
            kind.as_str()
        );
    }
    assert_eq!(
        RefusalKind::from_name("Scope_Exceeded"),
        None,
        "case-sensitive"
    );
}

// ---------------------------------------------------------------------------------------------
// Every rule, message and path: document → every violation, in check order.

/// (what, document, expected violations).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const DISPATCH: &[Case] = &[
    (
        "kind null is a refusal",
        r#"{"kind": null, "detail": "d"}"#,
        &[("$.kind", "must be a string refusal kind")],
    ),
    (
        "kind number",
        r#"{"kind": 3, "detail": "d"}"#,
        &[("$.kind", "must be a string refusal kind")],
    ),
    (
        "kind object",
        r#"{"kind": {"a": 1}}"#,
        &[("$.kind", "must be a string refusal kind")],
    ),
    (
        "a stray kind on a completion",
        r#"{"summary": "done", "files_changed": [], "kind": "completion"}"#,
        &[("$.kind", UNKNOWN_KIND)],
    ),
    (
        "kinds are case-sensitive",
        r#"{"kind": "Underspecified", "detail": "d", "question": "q"}"#,
        &[("$.kind", UNKNOWN_KIND)],
    ),
    (
        "the contract tag is checked before an unknown kind",
        r#"{"kind": "nope", "contract": "worker-completion/v2"}"#,
        &[("$.contract", UNSUPPORTED), ("$.kind", UNKNOWN_KIND)],
    ),
    (
        "and before a non-string kind",
        r#"{"contract": null, "kind": false}"#,
        &[
            ("$.contract", UNSUPPORTED),
            ("$.kind", "must be a string refusal kind"),
        ],
    ),
];

const COMPLETION: &[Case] = &[
    (
        "summary missing",
        r#"{}"#,
        &[("$.summary", "required field is missing")],
    ),
    (
        "summary null",
        r#"{"summary": null}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary a number",
        r#"{"summary": 1}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary a list",
        r#"{"summary": ["x"]}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary empty",
        r#"{"summary": ""}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary of ASCII whitespace",
        r#"{"summary": " \t\n\r\u000b\u000c"}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary of U+001C-U+001F only",
        r#"{"summary": "\u001c\u001d\u001e\u001f"}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary of U+3000 only",
        "{\"summary\": \"\u{3000}\u{3000}\"}",
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "summary of the rest of Python's set",
        r#"{"summary": "\u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f"}"#,
        &[("$.summary", NON_EMPTY)],
    ),
    (
        "the contract tag wrong",
        r#"{"contract": "worker-completion/v2", "summary": "s"}"#,
        &[("$.contract", UNSUPPORTED)],
    ),
    (
        "the contract tag null",
        r#"{"contract": null, "summary": "s"}"#,
        &[("$.contract", UNSUPPORTED)],
    ),
    (
        "the contract tag not a string",
        r#"{"contract": 1, "summary": "s"}"#,
        &[("$.contract", UNSUPPORTED)],
    ),
    (
        "the contract tag differs in case",
        r#"{"contract": "Worker-Completion/v1", "summary": "s"}"#,
        &[("$.contract", UNSUPPORTED)],
    ),
    (
        "unknown keys in document order, odd keys in bracket form",
        r#"{"zeta": 1, "summary": "s", "alpha": 2, "odd key": 3, "it's": 4}"#,
        &[
            ("$.zeta", "unknown field"),
            ("$.alpha", "unknown field"),
            ("$['odd key']", "unknown field"),
            ("$['it\\'s']", "unknown field"),
        ],
    ),
    (
        "refusal fields on a completion",
        r#"{"summary": "s", "detail": "d", "question": "q", "proposed_split": ["a"], "blocking_dep": "b"}"#,
        &[
            ("$.detail", "unknown field"),
            ("$.question", "unknown field"),
            ("$.proposed_split", "unknown field"),
            ("$.blocking_dep", "unknown field"),
        ],
    ),
    (
        "files_changed not a list",
        r#"{"summary": "s", "files_changed": "src/lib.rs"}"#,
        &[("$.files_changed", "must be a list of strings")],
    ),
    (
        "files_changed an object",
        r#"{"summary": "s", "files_changed": {"a": "b"}}"#,
        &[("$.files_changed", "must be a list of strings")],
    ),
    (
        "files_changed: the first bad item only",
        r#"{"summary": "s", "files_changed": ["a", " ", 3, ""]}"#,
        &[("$.files_changed[1]", NON_EMPTY)],
    ),
    (
        "files_changed: a non-string item",
        r#"{"summary": "s", "files_changed": [null]}"#,
        &[("$.files_changed[0]", NON_EMPTY)],
    ),
    (
        "verification a string",
        r#"{"summary": "s", "verification": "pytest"}"#,
        &[("$.verification", "must be an object or null")],
    ),
    (
        "verification a list",
        r#"{"summary": "s", "verification": []}"#,
        &[("$.verification", "must be an object or null")],
    ),
    (
        "verification empty",
        r#"{"summary": "s", "verification": {}}"#,
        &[
            ("$.verification.command", NON_EMPTY),
            ("$.verification.exit_code", "must be an integer"),
        ],
    ),
    (
        "verification: unknown keys first",
        r#"{"summary": "s", "verification": {"exit_code": 0.5, "command": " ", "cwd": "/", "env": {}}}"#,
        &[
            ("$.verification.cwd", "unknown field"),
            ("$.verification.env", "unknown field"),
            ("$.verification.command", NON_EMPTY),
            ("$.verification.exit_code", "must be an integer"),
        ],
    ),
    (
        "exit_code true",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": true}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code false",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": false}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code 0.0",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": 0.0}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code 1e2",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": 1e2}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code 1.5",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": 1.5}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code \"0\"",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": "0"}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code null",
        r#"{"summary": "s", "verification": {"command": "c", "exit_code": null}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "exit_code missing",
        r#"{"summary": "s", "verification": {"command": "c"}}"#,
        &[("$.verification.exit_code", "must be an integer")],
    ),
    (
        "command missing",
        r#"{"summary": "s", "verification": {"exit_code": 0}}"#,
        &[("$.verification.command", NON_EMPTY)],
    ),
    (
        "command not a string",
        r#"{"summary": "s", "verification": {"command": ["pytest"], "exit_code": 0}}"#,
        &[("$.verification.command", NON_EMPTY)],
    ),
    (
        "receipt_ref empty",
        r#"{"summary": "s", "receipt_ref": ""}"#,
        &[("$.receipt_ref", "must be a non-empty string or null")],
    ),
    (
        "receipt_ref blank",
        r#"{"summary": "s", "receipt_ref": "\u3000"}"#,
        &[("$.receipt_ref", "must be a non-empty string or null")],
    ),
    (
        "receipt_ref a number",
        r#"{"summary": "s", "receipt_ref": 7}"#,
        &[("$.receipt_ref", "must be a non-empty string or null")],
    ),
    (
        "every check, in order, whatever the document order",
        r#"{"receipt_ref": false, "verification": 1, "files_changed": 1, "notes": "n", "summary": " ", "contract": "v1", "kind2": 0}"#,
        &[
            ("$.contract", UNSUPPORTED),
            ("$.notes", "unknown field"),
            ("$.kind2", "unknown field"),
            ("$.summary", NON_EMPTY),
            ("$.files_changed", "must be a list of strings"),
            ("$.verification", "must be an object or null"),
            ("$.receipt_ref", "must be a non-empty string or null"),
        ],
    ),
];

const REFUSAL: &[Case] = &[
    (
        "detail missing",
        r#"{"kind": "awaiting_operator", "question": "q"}"#,
        &[("$.detail", "required field is missing")],
    ),
    (
        "detail blank",
        r#"{"kind": "awaiting_operator", "detail": "\u001f", "question": "q"}"#,
        &[("$.detail", NON_EMPTY)],
    ),
    (
        "detail not a string",
        r#"{"kind": "awaiting_operator", "detail": {}, "question": "q"}"#,
        &[("$.detail", NON_EMPTY)],
    ),
    (
        "question missing",
        r#"{"kind": "awaiting_operator", "detail": "d"}"#,
        &[("$.question", "required field is missing")],
    ),
    (
        "question blank",
        r#"{"kind": "underspecified", "detail": "d", "question": "\u3000 "}"#,
        &[("$.question", NON_EMPTY)],
    ),
    (
        "question null",
        r#"{"kind": "underspecified", "detail": "d", "question": null}"#,
        &[("$.question", NON_EMPTY)],
    ),
    (
        "blocking_dep missing",
        r#"{"kind": "blocked_on_dependency", "detail": "d"}"#,
        &[("$.blocking_dep", "required field is missing")],
    ),
    (
        "blocking_dep blank",
        r#"{"kind": "blocked_on_dependency", "detail": "d", "blocking_dep": ""}"#,
        &[("$.blocking_dep", NON_EMPTY)],
    ),
    (
        "proposed_split missing",
        r#"{"kind": "scope_exceeded", "detail": "d"}"#,
        &[("$.proposed_split", "required for scope_exceeded")],
    ),
    (
        "proposed_split empty",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": []}"#,
        &[("$.proposed_split", "must contain at least one item")],
    ),
    (
        "proposed_split null counts as empty",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": null}"#,
        &[("$.proposed_split", "must contain at least one item")],
    ),
    (
        "proposed_split not a list",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": "a, b"}"#,
        &[("$.proposed_split", "must be a list of strings")],
    ),
    (
        "proposed_split an object",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": {"0": "a"}}"#,
        &[("$.proposed_split", "must be a list of strings")],
    ),
    (
        "proposed_split: the first bad item only",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": ["a", 2, ""]}"#,
        &[("$.proposed_split[1]", NON_EMPTY)],
    ),
    (
        "completion fields on a refusal",
        r#"{"kind": "underspecified", "detail": "d", "question": "q", "summary": "s", "files_changed": [], "verification": null, "receipt_ref": null}"#,
        &[
            ("$.summary", "unknown field"),
            ("$.files_changed", "unknown field"),
            ("$.verification", "unknown field"),
            ("$.receipt_ref", "unknown field"),
        ],
    ),
    (
        "another kind's field (question on scope_exceeded)",
        r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": ["a"], "question": "q"}"#,
        &[("$.question", "unknown field")],
    ),
    (
        "another kind's field (proposed_split on underspecified)",
        r#"{"kind": "underspecified", "detail": "d", "question": "q", "proposed_split": ["a"]}"#,
        &[("$.proposed_split", "unknown field")],
    ),
    (
        "another kind's field instead of its own",
        r#"{"kind": "blocked_on_dependency", "detail": "d", "question": "q"}"#,
        &[
            ("$.question", "unknown field"),
            ("$.blocking_dep", "required field is missing"),
        ],
    ),
    (
        "every check, in order, whatever the document order",
        r#"{"proposed_split": [], "summary": "s", "detail": "", "x": 1, "kind": "scope_exceeded", "contract": "v0"}"#,
        &[
            ("$.contract", UNSUPPORTED),
            ("$.summary", "unknown field"),
            ("$.x", "unknown field"),
            ("$.detail", NON_EMPTY),
            ("$.proposed_split", "must contain at least one item"),
        ],
    ),
];

/// Duplicate keys (perago): the first repeated key, at its path.
const DUPLICATES: &[Case] = &[
    (
        "a repeated top-level key",
        r#"{"summary": "a", "summary": "b"}"#,
        &[("$.summary", "duplicate field")],
    ),
    (
        "a repeated nested key",
        r#"{"summary": "a", "verification": {"command": "c", "exit_code": 0, "exit_code": 1}}"#,
        &[("$.verification.exit_code", "duplicate field")],
    ),
    (
        "a repeated kind",
        r#"{"kind": "underspecified", "kind": "scope_exceeded", "detail": "d"}"#,
        &[("$.kind", "duplicate field")],
    ),
    (
        "a repeated odd key",
        r#"{"summary": "a", "x y": 1, "x y": 1}"#,
        &[("$['x y']", "duplicate field")],
    ),
    (
        "inside a list",
        r#"{"summary": "a", "files_changed": [{"a": 1, "a": 2}]}"#,
        &[("$.files_changed[0].a", "duplicate field")],
    ),
];

fn run(cases: &[Case]) {
    for (what, text, expected) in cases {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, m)| ((*p).to_owned(), (*m).to_owned()))
            .collect();
        assert_eq!(violations(text), expected, "{what}: {text}");
        // The same document as an explicit payload value gives the same report.
        if let Ok(value) = serde_json::from_str::<Value>(text)
            && !DUPLICATES.iter().any(|(_, t, _)| t == text)
        {
            let outcome = classify_payload(&value);
            let from_value: Vec<(String, String)> = outcome
                .violations()
                .expect("a violation")
                .iter()
                .map(|v| (v.path.clone(), v.message.clone()))
                .collect();
            assert_eq!(from_value, expected, "{what}: as a value");
        }
    }
}

#[test]
fn dispatch_rules() {
    run(DISPATCH);
}

#[test]
fn completion_rules() {
    run(COMPLETION);
}

#[test]
fn refusal_rules() {
    run(REFUSAL);
}

#[test]
fn duplicate_keys_are_violations_at_their_path() {
    run(DUPLICATES);
    let outcome = classify_text(DUPLICATES[0].1);
    let primary = outcome.violations().and_then(|v| v.primary()).expect("one");
    assert_eq!(primary.code, Code::DuplicateField);
}

#[test]
fn codes_say_which_rule_failed() {
    let codes = |text: &str| -> Vec<Code> {
        classify_text(text)
            .violations()
            .expect("a violation")
            .iter()
            .map(|v| v.code)
            .collect()
    };
    assert_eq!(codes(r#"{"summary": " "}"#), [Code::Pattern]);
    assert_eq!(codes(r#"{"summary": 1}"#), [Code::Type]);
    assert_eq!(codes(r#"{}"#), [Code::Required]);
    assert_eq!(codes(r#"{"summary": "s", "x": 1}"#), [Code::UnknownField]);
    assert_eq!(codes(r#"{"kind": 1}"#), [Code::Type]);
    assert_eq!(codes(r#"{"kind": "x"}"#), [Code::Discriminator]);
    assert_eq!(codes(r#"{"contract": "x", "summary": "s"}"#), [Code::Const]);
    assert_eq!(
        codes(r#"{"summary": "s", "verification": {"command": "c", "exit_code": 0.0}}"#),
        [Code::Contract],
        "a rule JSON Schema cannot state"
    );
    assert_eq!(
        codes(r#"{"kind": "scope_exceeded", "detail": "d", "proposed_split": null}"#),
        [Code::MinItems]
    );
    assert_eq!(codes("{"), [Code::MalformedJson]);
}

// ---------------------------------------------------------------------------------------------
// Values at the edges

#[test]
fn the_cap_is_2000_code_points_of_the_raw_text() {
    for unit in ["a", "é", "語", "😀"] {
        let at_cap = unit.repeat(2000);
        let doc = json!({"summary": at_cap}).to_string();
        assert_eq!(completion(&doc).summary, at_cap, "{unit}: 2000 is fine");
        let refusal_doc =
            json!({"kind": "underspecified", "detail": at_cap, "question": "q"}).to_string();
        assert_eq!(refusal(&refusal_doc).detail(), at_cap);

        let over = unit.repeat(2001);
        assert_violations(
            &json!({"summary": over}).to_string(),
            &[("$.summary", "exceeds the 2000-character cap")],
        );
        assert_violations(
            &json!({"kind": "blocked_on_dependency", "detail": over, "blocking_dep": "b"})
                .to_string(),
            &[("$.detail", "exceeds the 2000-character cap")],
        );
    }
    // Unstripped: surrounding whitespace counts, and blank wins over long.
    let padded = format!(" {} ", "x".repeat(1999));
    assert_violations(
        &json!({"summary": padded}).to_string(),
        &[("$.summary", "exceeds the 2000-character cap")],
    );
    assert_violations(
        &json!({"summary": " ".repeat(2001)}).to_string(),
        &[("$.summary", NON_EMPTY)],
    );
    // No other string is capped.
    let long = "q".repeat(5000);
    refusal(&json!({"kind": "awaiting_operator", "detail": "d", "question": long}).to_string());
    completion(
        &json!({"summary": "s", "files_changed": [long], "receipt_ref": long,
                "verification": {"command": long, "exit_code": 0}})
        .to_string(),
    );
}

#[test]
fn texts_are_kept_as_given() {
    let c = completion(r#"{"summary": "  done \n", "files_changed": [" a ", " a "]}"#);
    assert_eq!(c.summary, "  done \n");
    assert_eq!(c.files_changed, [" a ", " a "], "duplicates are fine");
    // Not whitespace in Python: U+200B.
    completion(r#"{"summary": "\u200b"}"#);
}

#[test]
fn optional_fields_absent_or_null() {
    let minimal = completion(r#"{"summary": "s"}"#);
    let nulls = completion(
        r#"{"summary": "s", "files_changed": null, "verification": null, "receipt_ref": null}"#,
    );
    assert_eq!(minimal, nulls);
    assert_eq!(
        minimal,
        Completion {
            summary: "s".into(),
            files_changed: vec![],
            verification: None,
            receipt_ref: None
        }
    );
    assert!(
        completion(r#"{"summary": "s", "files_changed": []}"#)
            .files_changed
            .is_empty()
    );
}

#[test]
fn exit_codes_are_integers_of_any_sign() {
    for (code, expected) in [
        ("0", 0),
        ("-1", -1),
        ("255", 255),
        ("-9223372036854775808", i64::MIN),
    ] {
        let text = format!(
            r#"{{"summary": "s", "verification": {{"command": "c", "exit_code": {code}}}}}"#
        );
        let v = completion(&text).verification.expect("verification");
        assert_eq!(v.exit_code, expected, "{code}");
    }
    // serde_json reads `-0` as the float -0.0 (to keep its sign), so it fails like `-0.0`;
    // beyond the 64-bit range an integer has no typed value (and `1e400` is not JSON).
    for code in ["-0", "-0.0", "2.0", "1E0", "9223372036854775808", "1e400"] {
        let text = format!(
            r#"{{"summary": "s", "verification": {{"command": "c", "exit_code": {code}}}}}"#
        );
        let found = violations(&text);
        assert_eq!(found.len(), 1, "{code}");
        // Beyond 64 bits it is an integer, worded as `perago validate` words it.
        let message = if code == "9223372036854775808" {
            "integer does not fit in a signed 64-bit value"
        } else {
            "must be an integer"
        };
        assert!(
            found[0] == ("$.verification.exit_code".into(), message.into()) || found[0].0 == "$",
            "{code}: {found:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// §5: text in result_summary

#[test]
fn prose_is_accepted_unchanged() {
    for text in [
        "Fixed the flaky test.",
        "Done. {\"summary\": \"x\"}",
        "[{\"summary\": \"x\"}]",
        "[1, 2",
        "\"a JSON string\"",
        "42",
        "null",
        "  prose with leading spaces\n",
        "}",
    ] {
        assert_eq!(
            classify_text(text),
            Outcome::LegacyProse(text.to_owned()),
            "{text:?}"
        );
        assert!(!is_payload_text(text));
    }
}

#[test]
fn blank_text_is_empty() {
    for text in [
        "",
        " ",
        "\n\t",
        "\u{3000}",
        "\u{1c}\u{1d}\u{1e}\u{1f}",
        "\u{85}\u{a0}",
    ] {
        assert_eq!(classify_text(text), Outcome::Empty, "{text:?}");
        assert!(!classify_text(text).is_accepted());
    }
}

#[test]
fn text_opening_with_a_brace_is_a_payload() {
    assert!(is_payload_text("{"));
    assert!(is_payload_text("\u{3000}\u{1c} {\"summary\": 1"));
    // JSON whitespace before the object is fine.
    completion(" \n\t\r{\"summary\": \"s\"}\n ");
    // Python whitespace that JSON does not allow: the parser sees the original text.
    for text in [
        "\u{3000}{\"summary\": \"s\"}",
        "\u{1c}{\"summary\": \"s\"}",
        "\u{b}{\"summary\": \"s\"}",
        "{\"summary\": \"s\"}\u{a0}",
    ] {
        let found = violations(text);
        assert_eq!(found.len(), 1, "{text:?}");
        assert_eq!(found[0].0, "$");
        assert!(found[0].1.starts_with("malformed JSON: "), "{found:?}");
    }
}

#[test]
fn malformed_payload_text_is_a_violation_at_the_root() {
    for text in [
        "{\"summary\": \"unterminated",
        "{\"summary\": \"s\"",
        "{",
        "{\"summary\": \"s\"} {\"summary\": \"t\"}",
        "{\"summary\": \"s\"} trailing",
        "{\"summary\": \"s\",}",
        "{'summary': 's'}",
        "{\"summary\": \"s\", \"verification\": {\"command\": \"c\", \"exit_code\": NaN}}",
        "{\"summary\": \"s\", \"verification\": {\"command\": \"c\", \"exit_code\": Infinity}}",
        "{\"summary\": \"\\ud800\"}",
        &"{\"a\":".repeat(200),
    ] {
        let found = violations(text);
        assert_eq!(found.len(), 1, "{text:?}");
        assert_eq!(found[0].0, "$", "{text:?}");
        assert!(found[0].1.starts_with("malformed JSON: "), "{found:?}");
    }
}

#[test]
fn top_level_arrays_and_scalars_are_not_payloads() {
    for value in [
        json!([]),
        json!([{"summary": "s"}]),
        json!("s"),
        json!(1),
        json!(true),
    ] {
        let outcome = classify_payload(&value);
        assert_eq!(
            outcome.violations().map(|v| v.to_string()).as_deref(),
            Some("$: terminal payload must be a JSON object"),
            "{value}"
        );
        assert_eq!(
            validate_text(&value.to_string()).map_err(|v| v.to_string()),
            Err("$: terminal payload must be a JSON object".to_owned())
        );
    }
    // Through result_summary, `[`-first text and scalars are prose instead.
    assert!(matches!(classify_text("[]"), Outcome::LegacyProse(_)));
}

// ---------------------------------------------------------------------------------------------
// §7: submissions and records

#[test]
fn a_non_null_payload_wins_over_result_summary() {
    let payload = json!({"summary": "from the payload"});
    for summary in ["", "prose", "{\"summary\": \"from the text\"}", "{broken"] {
        let outcome = classify_submission(summary, Some(&payload));
        assert!(
            matches!(&outcome, Outcome::Completion(c) if c.summary == "from the payload"),
            "{summary}: {outcome:?}"
        );
    }
    let bad = json!({"summary": ""});
    assert_eq!(
        classify_submission("fine prose", Some(&bad)).schema_error_path(),
        Some("$.summary")
    );
    assert_eq!(
        classify_submission("[1]", Some(&json!([1]))).schema_error_path(),
        Some("$")
    );
    // A null payload is no payload: the text decides.
    assert_eq!(
        classify_submission("prose", Some(&Value::Null)),
        Outcome::LegacyProse("prose".into())
    );
    assert_eq!(classify_submission("", Some(&Value::Null)), Outcome::Empty);
    assert_eq!(classify_submission("", None), Outcome::Empty);
    assert!(matches!(
        classify_submission(SEED_REFUSAL, None),
        Outcome::Refusal(_)
    ));
}

#[test]
fn outcome_names_and_acceptance() {
    let cases = [
        (classify_text(SEED_COMPLETION), "completion", true),
        (classify_text(SEED_REFUSAL), "refusal", true),
        (classify_text("prose"), "legacy_prose", true),
        (classify_text(" "), "empty", false),
        (classify_text("{}"), "violation", false),
    ];
    for (outcome, name, accepted) in cases {
        assert_eq!(outcome.name(), name);
        assert_eq!(outcome.is_accepted(), accepted, "{name}");
        assert_eq!(
            outcome.canonical().is_some(),
            accepted && name != "legacy_prose"
        );
    }
}

#[test]
fn records_of_a_completion() {
    let record = ContractRecord::of(&classify_text(r#"{"summary": "s", "receipt_ref": "r"}"#))
        .expect("a record");
    assert_eq!(
        serde_json::to_string(&record).expect("serialises"),
        r#"{"contract_version":"worker-completion/v1","contract_validation":"valid","canonical":{"contract":"worker-completion/v1","summary":"s","files_changed":[],"receipt_ref":"r"}}"#
    );
    assert_eq!(
        serde_json::to_string(&record.audit_event()).expect("serialises"),
        r#"{"contract_version":"worker-completion/v1","outcome":"valid"}"#
    );
}

#[test]
fn records_of_a_refusal() {
    let record = ContractRecord::of(&classify_text(SEED_REFUSAL)).expect("a record");
    assert_eq!(
        record.contract_validation,
        Validation::Refused(RefusalKind::ScopeExceeded)
    );
    let json = serde_json::to_value(&record).expect("serialises");
    assert_eq!(json["contract_validation"], "refused:scope_exceeded");
    assert_eq!(json["canonical"]["kind"], "scope_exceeded");
    assert!(json.get("contract_error_path").is_none());
    let event = record.audit_event();
    assert_eq!(AuditEvent::EVENT_TYPE, "task.contract_validation");
    assert_eq!(
        serde_json::to_value(&event).expect("serialises"),
        json!({"contract_version": "worker-completion/v1", "outcome": "refused:scope_exceeded"})
    );
}

#[test]
fn records_of_a_violation() {
    let outcome = classify_text(r#"{"summary": "s", "extra": 1, "receipt_ref": ""}"#);
    let record = ContractRecord::of(&outcome).expect("a record");
    assert_eq!(
        record,
        ContractRecord {
            contract_version: CONTRACT_VERSION.into(),
            contract_validation: Validation::Violation,
            contract_error_path: Some("$.extra".into()),
            canonical: None,
        }
    );
    assert_eq!(
        serde_json::to_value(record.audit_event()).expect("serialises"),
        json!({"contract_version": "worker-completion/v1", "outcome": "violation", "schema_error_path": "$.extra"})
    );
}

#[test]
fn nothing_is_recorded_for_prose_or_empty_text() {
    assert_eq!(ContractRecord::of(&classify_text("prose")), None);
    assert_eq!(ContractRecord::of(&classify_text("")), None);
}

#[test]
fn records_read_back_and_revalidate() {
    for text in [SEED_COMPLETION, SEED_REFUSAL, "{}"] {
        let record = ContractRecord::of(&classify_text(text)).expect("a record");
        let json = serde_json::to_string(&record).expect("serialises");
        let back: ContractRecord = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, record);
    }
    let tampered = r#"{"contract_version":"worker-completion/v1","contract_validation":"valid","canonical":{"summary":""}}"#;
    let err = serde_json::from_str::<ContractRecord>(tampered).expect_err("invalid canonical");
    assert!(
        err.to_string()
            .contains("$.summary: must be a non-empty string"),
        "{err}"
    );
    for name in ["valid", "violation", "refused:underspecified"] {
        let v = Validation::from_name(name).expect("a name");
        assert_eq!(v.to_string(), name);
    }
    assert_eq!(Validation::from_name("refused:other"), None);
    assert_eq!(Validation::from_name("refused"), None);
}

// ---------------------------------------------------------------------------------------------
// Canonical forms

#[test]
fn canonical_completion_order_and_defaults() {
    let c = completion(
        r#"{"receipt_ref": "r", "verification": {"exit_code": -2, "command": "make"}, "summary": "s", "contract": "worker-completion/v1"}"#,
    );
    assert_eq!(
        serde_json::to_string(&c).expect("serialises"),
        r#"{"contract":"worker-completion/v1","summary":"s","files_changed":[],"verification":{"command":"make","exit_code":-2},"receipt_ref":"r"}"#
    );
    let minimal = completion(r#"{"summary": "s", "verification": null}"#);
    assert_eq!(
        minimal.to_canonical().to_string(),
        r#"{"contract":"worker-completion/v1","summary":"s","files_changed":[]}"#
    );
}

#[test]
fn canonical_refusal_order() {
    let r =
        refusal(r#"{"blocking_dep": "T-9", "detail": "waiting", "kind": "blocked_on_dependency"}"#);
    assert_eq!(
        serde_json::to_string(&r).expect("serialises"),
        r#"{"contract":"worker-completion/v1","kind":"blocked_on_dependency","detail":"waiting","blocking_dep":"T-9"}"#
    );
}

#[test]
fn canonical_forms_revalidate_to_equal_values() {
    for text in [
        SEED_COMPLETION,
        SEED_REFUSAL,
        r#"{"summary": " s "}"#,
        r#"{"kind": "awaiting_operator", "detail": "d", "question": "q"}"#,
        r#"{"kind": "underspecified", "detail": "d", "question": "q"}"#,
        r#"{"kind": "blocked_on_dependency", "detail": "d", "blocking_dep": "b"}"#,
    ] {
        let payload = validate_text(text).expect("valid");
        let canonical = payload.to_canonical();
        assert_eq!(validate(&canonical), Ok(payload.clone()));
        let back: Payload = serde_json::from_value(canonical.clone()).expect("deserialises");
        assert_eq!(back, payload);
        assert_eq!(
            serde_json::to_value(&payload).expect("serialises"),
            canonical
        );
    }
}
