//! The agent task's TaskDef says what the gateway reports: every `COMPLETED` output the gateway
//! builds is valid against its `outputSchema` (checked by an independent validator, the
//! `jsonschema` crate), and outputs it never builds are not.

use perago_completion::classify_text;
use perago_gateway::agent_task::agent_task;
use perago_gateway::transition::{TaskStatus, decide};
use perago_worker::taskdef::{self, Settings};
use serde_json::{Value, json};

fn output_schema() -> jsonschema::Validator {
    let def = taskdef::assemble(&agent_task::TASK, &Settings::default())
        .unwrap_or_else(|e| panic!("{e:?}"))
        .to_json();
    assert_eq!(def["outputKeys"], json!(["result"]));
    let schema = def["outputSchema"]["data"].clone();
    jsonschema::meta::validate(&schema).expect("a valid 2020-12 schema");
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn every_completed_output_fits_the_output_schema() {
    let schema = output_schema();
    let submissions = [
        r#"{"summary": "Added tests", "files_changed": ["a.rs"], "verification": {"command": "make", "exit_code": -1}, "receipt_ref": "r-1"}"#,
        r#"{"contract": "worker-completion/v1", "summary": "Minimal"}"#,
        r#"{"kind": "awaiting_operator", "detail": "Which way?", "question": "A or B?"}"#,
        r#"{"kind": "scope_exceeded", "detail": "Too big.", "proposed_split": ["one", "two", "one"]}"#,
        r#"{"kind": "underspecified", "detail": "Vague.", "question": "What exactly?"}"#,
        r#"{"kind": "blocked_on_dependency", "detail": "Waiting.", "blocking_dep": "T-9"}"#,
        "Fixed it, see the PR.",
    ];
    for text in submissions {
        let decision = decide("T-1", classify_text(text), 500).unwrap();
        assert_ne!(decision.status, TaskStatus::Failed, "{text}");
        let output = Value::Object(decision.conductor.output);
        let errors: Vec<String> = schema
            .iter_errors(&output)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{text}: {errors:#?}");
    }
}

#[test]
fn outputs_the_gateway_never_builds_do_not_fit() {
    let schema = output_schema();
    for output in [
        json!({"result": {"kind": "other", "detail": "x"}}),
        json!({"result": {"summary": "x", "extra": 1}}),
        json!({"result": {"contract": "worker-completion/v1", "kind": "scope_exceeded",
                          "detail": "x", "proposed_split": ["a"]}}),
        json!({"result": {"kind": "legacy_prose", "text": "  "}}),
        json!({"result": {"summary": "x"}, "reason": "no"}),
        json!({}),
    ] {
        assert!(!schema.is_valid(&output), "{output}");
    }
}
