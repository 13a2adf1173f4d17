//! `workflows check` on the example crate's workflows: they give no error; each planted error
//! (one mutation of an example) is found at its pointer with no other error; correct variants
//! of each construct give none; and no WorkflowDef-shaped input makes the check panic.

use perago_worker::workflow::{Contracts, Finding, Severity, check_file};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::LazyLock;

/// The TaskDefs the repository publishes (`cargo xtask taskdefs`): the example's tasks and the
/// gateway's agent task.
static CONTRACTS: LazyLock<Contracts> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../taskdefs");
    Contracts::from_taskdef_dir(&dir).expect("the repository's TaskDefs")
});

fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perago-example/workflows")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check(workflow: &Value) -> Vec<Finding> {
    check_file("w.json", workflow, &CONTRACTS).expect("a WorkflowDef")
}

fn errors(workflow: &Value) -> Vec<(String, &'static str)> {
    check(workflow)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.pointer, f.code))
        .collect()
}

/// Sets the member at `pointer` (its parent must exist).
fn set(workflow: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = workflow
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{parent}"));
    match parent {
        Value::Object(map) => {
            map.insert(key.replace("~1", "/").replace("~0", "~"), value);
        }
        Value::Array(items) => {
            let i: usize = key.parse().unwrap();
            if i == items.len() {
                items.push(value);
            } else {
                items[i] = value;
            }
        }
        other => panic!("{pointer}: {other}"),
    }
}

fn remove(workflow: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match workflow.pointer_mut(parent).unwrap() {
        Value::Object(map) => {
            map.remove(key).unwrap_or_else(|| panic!("{pointer}"));
        }
        Value::Array(items) => {
            items.remove(key.parse().unwrap());
        }
        other => panic!("{pointer}: {other}"),
    }
}

#[test]
fn the_examples_have_no_errors() {
    for name in ["song_pipeline", "agent_review"] {
        let findings = check(&example(name));
        let errors: Vec<_> = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

/// The song pipeline's places.
const VALIDATE: &str = "/tasks/0/inputParameters";
const SWITCH: &str = "/tasks/1";
const FEATURES: &str = "/tasks/1/decisionCases/true/0/inputParameters";
const PUBLISH: &str = "/tasks/1/decisionCases/true/1/inputParameters";

/// One planted error in the song pipeline: what to change, and the one error it must give.
struct Planted {
    name: &'static str,
    change: fn(&mut Value),
    pointer: &'static str,
    code: &'static str,
}

fn song_errors() -> Vec<Planted> {
    vec![
        Planted {
            name: "a misspelt output member",
            change: |w| {
                set(
                    w,
                    "/tasks/1/inputParameters/valid",
                    json!("${validate.output.result.vaild}"),
                )
            },
            pointer: "/tasks/1/inputParameters/valid",
            code: "unknown_output",
        },
        Planted {
            name: "a nullable value into a string",
            change: |w| {
                set(
                    w,
                    &format!("{FEATURES}/params/feature_set"),
                    json!("${validate.output.result.reason}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/0/inputParameters/params/feature_set",
            code: "type_mismatch",
        },
        Planted {
            name: "an integer into a string",
            change: |w| {
                set(
                    w,
                    &format!("{PUBLISH}/params/feature_set"),
                    json!("${features.output.result.row_count}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/1/inputParameters/params/feature_set",
            code: "type_mismatch",
        },
        Planted {
            name: "a result where a workspace goes",
            change: |w| {
                set(
                    w,
                    &format!("{PUBLISH}/workspace"),
                    json!("${features.output.result}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/1/inputParameters/workspace",
            code: "type_mismatch",
        },
        Planted {
            name: "a param the task does not declare",
            change: |w| set(w, &format!("{VALIDATE}/params/min_rows"), json!(3)),
            pointer: "/tasks/0/inputParameters/params/min_rows",
            code: "unknown_field",
        },
        Planted {
            name: "a required param left out",
            change: |w| remove(w, &format!("{FEATURES}/params/min_rows")),
            pointer: "/tasks/1/decisionCases/true/0/inputParameters/params/min_rows",
            code: "required",
        },
        Planted {
            name: "a literal out of bounds",
            change: |w| {
                set(
                    w,
                    &format!("{VALIDATE}/params/min_duration_seconds"),
                    json!(-5),
                )
            },
            pointer: "/tasks/0/inputParameters/params/min_duration_seconds",
            code: "minimum",
        },
        Planted {
            name: "a literal of the wrong type deep inside",
            change: |w| set(w, &format!("{FEATURES}/params/columns/exclude/0"), json!(7)),
            pointer: "/tasks/1/decisionCases/true/0/inputParameters/params/columns/exclude/0",
            code: "type",
        },
        Planted {
            name: "a task that runs later",
            change: |w| {
                set(
                    w,
                    &format!("{VALIDATE}/params/song_id"),
                    json!("${publish.output.result.summary}"),
                )
            },
            pointer: "/tasks/0/inputParameters/params/song_id",
            code: "not_yet_run",
        },
        Planted {
            name: "a task of another SWITCH case",
            change: |w| {
                set(
                    w,
                    "/outputParameters/summary",
                    json!("${publish.output.result.summary}"),
                )
            },
            pointer: "/outputParameters/summary",
            code: "not_on_every_path",
        },
        Planted {
            name: "a task that does not exist",
            change: |w| {
                set(
                    w,
                    &format!("{PUBLISH}/params/feature_set"),
                    json!("${feature.output.result.summary}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/1/inputParameters/params/feature_set",
            code: "unknown_ref",
        },
        Planted {
            name: "a workflow input of the wrong type",
            change: |w| {
                set(
                    w,
                    &format!("{FEATURES}/params/min_rows"),
                    json!("${workflow.input.song_id}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/0/inputParameters/params/min_rows",
            code: "type_mismatch",
        },
        Planted {
            name: "text into an integer",
            change: |w| {
                set(
                    w,
                    &format!("{FEATURES}/params/min_rows"),
                    json!("rows of ${workflow.input.song_id}"),
                )
            },
            pointer: "/tasks/1/decisionCases/true/0/inputParameters/params/min_rows",
            code: "type_mismatch",
        },
        Planted {
            name: "a SWITCH case that never runs",
            change: |w| set(w, "/tasks/1/decisionCases/yes", json!([])),
            pointer: "/tasks/1/decisionCases/yes",
            code: "unknown_case",
        },
        Planted {
            name: "a SWITCH that routes false nowhere",
            change: |w| remove(w, "/tasks/1/decisionCases/false"),
            pointer: SWITCH,
            code: "non_exhaustive_switch",
        },
        Planted {
            name: "a SWITCH on a param it does not have",
            change: |w| set(w, "/tasks/1/expression", json!("is_valid")),
            pointer: "/tasks/1/inputParameters",
            code: "missing_switch_param",
        },
        Planted {
            name: "a reference name used twice",
            change: |w| {
                set(
                    w,
                    "/tasks/1/decisionCases/false/0/taskReferenceName",
                    json!("validate"),
                )
            },
            pointer: "/tasks/1/decisionCases/false/0/taskReferenceName",
            code: "duplicate_ref",
        },
        Planted {
            name: "an expression Conductor cannot read",
            change: |w| {
                set(
                    w,
                    &format!("{VALIDATE}/params/song_id"),
                    json!("${workflow.input.song_id"),
                )
            },
            pointer: "/tasks/0/inputParameters/params/song_id",
            code: "malformed_expression",
        },
        Planted {
            name: "an optional producer into a required value",
            change: |w| {
                set(w, "/tasks/1/decisionCases/true/0/optional", json!(true));
            },
            pointer: "/tasks/1/decisionCases/true/1/inputParameters/workspace",
            code: "may_be_absent",
        },
    ]
}

#[test]
fn each_planted_error_is_found_at_its_pointer_alone() {
    let base = example("song_pipeline");
    for planted in song_errors() {
        let mut workflow = base.clone();
        (planted.change)(&mut workflow);
        let found = errors(&workflow);
        assert_eq!(
            found,
            [(planted.pointer.to_owned(), planted.code)],
            "{}: {:#?}",
            planted.name,
            check(&workflow)
        );
    }
}

#[test]
fn params_spread_at_the_top_level_are_refused_as_the_worker_would() {
    let mut workflow = example("song_pipeline");
    set(
        &mut workflow,
        VALIDATE,
        json!({"song_id": "${workflow.input.song_id}"}),
    );
    assert_eq!(
        errors(&workflow),
        [
            (format!("{VALIDATE}/song_id"), "unknown_field"),
            (format!("{VALIDATE}/params"), "required"),
        ]
    );
}

#[test]
fn every_refusal_kind_must_be_routed() {
    let mut workflow = example("agent_review");
    remove(
        &mut workflow,
        "/tasks/1/decisionCases/blocked_on_dependency",
    );
    let found = check(&workflow);
    let found: Vec<_> = found
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].pointer.as_str(), found[0].code),
        ("/tasks/1", "non_exhaustive_switch")
    );
    assert!(
        found[0].message.contains("\"blocked_on_dependency\""),
        "{}",
        found[0].message
    );
    // A default case routes the rest.
    set(
        &mut workflow,
        "/tasks/1/defaultCase",
        json!([{"name": "other", "taskReferenceName": "other", "type": "NOOP"}]),
    );
    assert!(errors(&workflow).is_empty());
}

#[test]
fn inside_a_case_the_union_is_narrowed_to_its_branch() {
    // The follow-ups exist only in a scope_exceeded refusal: read elsewhere, they may be absent.
    let mut workflow = example("agent_review");
    let followups = json!({"name": "agent_task", "taskReferenceName": "again", "type": "SIMPLE",
        "inputParameters": {"params": {"title": "${review.output.result.followups[0].title}", "description": null}}});
    set(
        &mut workflow,
        "/tasks/1/decisionCases/scope_exceeded/3",
        followups.clone(),
    );
    assert!(errors(&workflow).is_empty(), "{:#?}", check(&workflow));
    let mut elsewhere = followups;
    elsewhere["taskReferenceName"] = json!("again_elsewhere");
    set(
        &mut workflow,
        "/tasks/1/decisionCases/awaiting_operator/1",
        elsewhere,
    );
    assert_eq!(
        errors(&workflow),
        [(
            "/tasks/1/decisionCases/awaiting_operator/1/inputParameters/params/title".to_owned(),
            "unknown_output"
        )]
    );
}

fn task(name: &str, reference: &str, params: Value) -> Value {
    json!({"name": name, "taskReferenceName": reference, "type": "SIMPLE", "inputParameters": {"params": params}})
}

fn workflow(tasks: Value) -> Value {
    json!({"name": "w", "version": 1, "schemaVersion": 2, "tasks": tasks})
}

fn song(reference: &str, song_id: &str) -> Value {
    task("validate_song", reference, json!({"song_id": song_id}))
}

#[test]
fn forks_and_joins() {
    let fork = |join_on: Value| {
        workflow(json!([
            {"name": "fork", "taskReferenceName": "fork", "type": "FORK_JOIN", "forkTasks": [
                [song("a", "song-1")],
                [song("b", "${a.output.result.reason}")]
            ]},
            {"name": "join", "taskReferenceName": "join", "type": "JOIN", "joinOn": join_on},
            song("c", "${join.output.a.result.reason}")
        ]))
    };
    // `b` reads a sibling branch; `c` reads `a` through the JOIN: a string|null into a string.
    assert_eq!(
        errors(&fork(json!(["a", "b"]))),
        [
            (
                "/tasks/0/forkTasks/1/0/inputParameters/params/song_id".to_owned(),
                "not_on_every_path"
            ),
            (
                "/tasks/2/inputParameters/params/song_id".to_owned(),
                "type_mismatch"
            ),
        ]
    );
    let found = errors(&fork(json!(["a", "nope"])));
    assert!(
        found.contains(&("/tasks/1/joinOn/1".to_owned(), "unknown_join_ref")),
        "{found:?}"
    );
}

#[test]
fn dynamic_forks() {
    let literal = workflow(json!([
        {"name": "fan", "taskReferenceName": "fan", "type": "FORK_JOIN_DYNAMIC",
         "dynamicForkTasksParam": "tasks", "dynamicForkTasksInputParamName": "inputs",
         "inputParameters": {
            "tasks": [{"name": "agent_task", "taskReferenceName": "fu-1", "type": "SIMPLE"}],
            "inputs": {"fu-1": {"params": {"title": "one", "description": null, "extra": 1}}}
         }},
        {"name": "join", "taskReferenceName": "join", "type": "JOIN", "joinOn": []}
    ]));
    assert_eq!(
        errors(&literal),
        [(
            "/tasks/0/inputParameters/inputs/fu-1/params/extra".to_owned(),
            "unknown_field"
        )]
    );
    let mut no_join = literal.clone();
    remove(&mut no_join, "/tasks/1");
    let found = errors(&no_join);
    assert!(
        found.contains(&("/tasks/0".to_owned(), "dynamic_fork_without_join")),
        "{found:?}"
    );
    // With `forkTaskName`, Conductor adds `__index` to each input: a closed input refuses it.
    let indexed = workflow(json!([
        {"name": "fan", "taskReferenceName": "fan", "type": "FORK_JOIN_DYNAMIC",
         "inputParameters": {"forkTaskName": "agent_task", "forkTaskInputs": [{"params": {"title": "one"}}]}},
        {"name": "join", "taskReferenceName": "join", "type": "JOIN"}
    ]));
    assert_eq!(
        errors(&indexed),
        [(
            "/tasks/0/inputParameters/forkTaskName".to_owned(),
            "fork_index_refused"
        )]
    );
}

#[test]
fn loops_run_their_body_at_least_once() {
    let looped = workflow(json!([
        {"name": "loop", "taskReferenceName": "loop", "type": "DO_WHILE", "loopCondition": "false",
         "loopOver": [song("first", "song-1"), song("second", "${first.output.result.reason}")]},
        song("after", "${second.output.result.reason}")
    ]));
    let found = errors(&looped);
    // `first` ran before `second` in the body, `second` before `after`: only the types clash.
    assert_eq!(
        found,
        [
            (
                "/tasks/0/loopOver/1/inputParameters/params/song_id".to_owned(),
                "type_mismatch"
            ),
            (
                "/tasks/1/inputParameters/params/song_id".to_owned(),
                "type_mismatch"
            ),
        ]
    );
}

#[test]
fn sub_workflows_are_held_to_their_input_schema() {
    let sub = json!({"name": "child", "version": 3, "tasks": [{"name": "noop", "taskReferenceName": "n", "type": "NOOP"}],
        "inputSchema": {"name": "child_input", "version": 1, "type": "JSON", "data": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"], "additionalProperties": false}}});
    let mut contracts = Contracts::default();
    contracts.add_workflow(&sub, "child.json");
    let parent = workflow(json!([
        {"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
         "subWorkflowParam": {"name": "child", "version": 3},
         "inputParameters": {"count": "three"}}
    ]));
    let found: Vec<_> = check_file("p.json", &parent, &contracts)
        .unwrap()
        .into_iter()
        .map(|f| (f.pointer, f.code))
        .collect();
    assert_eq!(
        found,
        [("/tasks/0/inputParameters/count".to_owned(), "type")]
    );
}

#[test]
fn what_cannot_be_checked_is_said_and_is_no_error() {
    let w = workflow(json!([
        {"name": "js", "taskReferenceName": "js", "type": "SWITCH", "evaluatorType": "javascript",
         "expression": "$.x > 1", "inputParameters": {"x": 2}, "decisionCases": {"true": []}},
        {"name": "http", "taskReferenceName": "http", "type": "HTTP", "inputParameters": {"http_request": {"uri": "http://x"}}},
        song("v", "${http.output.response.body.id}"),
        task("not_a_task", "mystery", json!({"anything": 1})),
        song("computed", "${workflow.input.${key}}")
    ]));
    let found = check(&w);
    assert!(
        found.iter().all(|f| f.severity != Severity::Error),
        "{found:#?}"
    );
    let codes: Vec<_> = found.iter().map(|f| (f.severity, f.code)).collect();
    assert_eq!(
        codes,
        [
            (Severity::Note, "unevaluated_switch"),
            (Severity::Warning, "unchecked_value"),
            (Severity::Warning, "unknown_task"),
            (Severity::Warning, "unchecked_expression"),
        ]
    );
}

#[test]
fn a_list_of_workflow_defs_is_pointed_into_by_index() {
    let mut bad = example("song_pipeline");
    set(&mut bad, &format!("{VALIDATE}/params/min_rows"), json!(3));
    let list = json!([example("agent_review"), bad]);
    let found: Vec<_> = check_file("l.json", &list, &CONTRACTS)
        .unwrap()
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.workflow, f.pointer))
        .collect();
    assert_eq!(
        found,
        [(
            "song_pipeline".to_owned(),
            "/1/tasks/0/inputParameters/params/min_rows".to_owned()
        )]
    );
}

#[test]
fn what_is_not_a_workflow_def_is_refused() {
    for value in [
        json!(3),
        json!([]),
        json!({"tasks": []}),
        json!([{"name": "x"}]),
    ] {
        assert!(check_file("x.json", &value, &CONTRACTS).is_err(), "{value}");
    }
}

/// JSON shaped like a WorkflowDef: tasks of every type, nested, with expressions.
fn workflow_like() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        Just("${workflow.input.song_id}".to_owned()),
        Just("${a.output.result.valid}".to_owned()),
        Just("${b.output.result[0]}".to_owned()),
        Just("${a.output.${x}}".to_owned()),
        Just("x ${a.output.result.reason} y".to_owned()),
        Just("${".to_owned()),
        Just("$${a}".to_owned()),
        "[a-z${}.\\[\\]*0-9]{0,12}",
    ];
    let leaf = prop_oneof![
        text.prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    let kinds = prop_oneof![
        Just("SIMPLE"),
        Just("SWITCH"),
        Just("FORK_JOIN"),
        Just("JOIN"),
        Just("FORK_JOIN_DYNAMIC"),
        Just("DO_WHILE"),
        Just("SUB_WORKFLOW"),
        Just("HTTP"),
        Just("WEIRD"),
    ];
    let names = prop_oneof![
        Just("validate_song"),
        Just("build_features"),
        Just("agent_task"),
        Just("x")
    ];
    let refs = prop_oneof![Just("a"), Just("b"), Just("c"), Just("")];
    let task = (kinds, names, refs, value.clone(), value).prop_map(|(kind, name, reference, input, extra)| {
        json!({
            "name": name, "taskReferenceName": reference, "type": kind,
            "inputParameters": input, "expression": "x", "evaluatorType": "value-param",
            "joinOn": ["a", 3], "dynamicForkTasksParam": "t", "dynamicForkTasksInputParamName": "i",
            "subWorkflowParam": {"name": "w"}, "extra": extra
        })
    });
    let tasks = task.prop_recursive(2, 12, 3, |inner| {
        (
            prop::collection::vec(inner.clone(), 0..3),
            prop::collection::vec(inner, 0..3),
        )
            .prop_map(|(a, b)| {
                json!({"name": "n", "taskReferenceName": "nested", "type": "SWITCH",
                   "decisionCases": {"true": a.clone(), "1": b.clone()}, "defaultCase": a,
                   "forkTasks": [b.clone()], "loopOver": b})
            })
    });
    prop::collection::vec(tasks, 0..6).prop_map(|tasks| json!({"name": "w", "tasks": tasks}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    #[test]
    fn no_workflow_def_makes_the_check_panic(w in workflow_like()) {
        let _ = check_file("w.json", &w, &CONTRACTS);
    }
}
