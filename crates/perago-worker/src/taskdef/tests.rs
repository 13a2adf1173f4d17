use super::files::{self, plan};
use super::*;
use perago::contracts::workspace_input::WorkspaceInput;
use perago::contracts::workspace_output::WorkspaceOutput;
use perago::task::{Access, RetryLogic, WorkspaceSpec};
use serde_json::json;
use std::collections::BTreeMap;

const WORKSPACE: TaskKind = TaskKind::Workspace(WorkspaceSpec {
    prefix: "features/",
    access: Access::ReadWrite,
    pre: &[perago::task::Guardrail::RequireGlob {
        pattern: "raw/**/*.parquet",
        min_count: 1,
    }],
    post: &[],
    publish_budget: Some(perago::task::PublishBudget {
        max_files: Some(10),
        max_bytes: None,
    }),
});

fn parts<'a>(name: &'a str, kind: &'a TaskKind, options: &'a TaskOptions) -> Parts<'a> {
    Parts {
        name,
        kind,
        // Any closed standalone schemas do; these are perago's own.
        params_schema: WorkspaceInput::schema(),
        result_schema: WorkspaceOutput::schema(),
        options,
    }
}

fn owner() -> Settings {
    Settings {
        owner_email: Some("team@example.com".to_owned()),
    }
}

fn errors(name: &str, kind: &TaskKind, options: TaskOptions) -> Vec<(String, String)> {
    match assemble_parts(parts(name, kind, &options), &owner()) {
        Ok(def) => panic!("accepted: {}", render(&def)),
        Err(e) => e.into_iter().map(|e| (e.task, e.field)).collect(),
    }
}

fn fields(task: &str, fields: &[&str]) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|f| (task.to_owned(), (*f).to_owned()))
        .collect()
}

#[test]
fn silent_options_get_conductors_defaults_written_out() {
    let def = assemble_parts(
        parts("t", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
        &owner(),
    )
    .unwrap();
    let json = def.to_json();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "retryCount",
            "timeoutSeconds",
            "inputKeys",
            "outputKeys",
            "timeoutPolicy",
            "retryLogic",
            "retryDelaySeconds",
            "responseTimeoutSeconds",
            "ownerEmail",
            "backoffScaleFactor",
            "totalTimeoutSeconds",
            "inputSchema",
            "outputSchema"
        ]
    );
    assert_eq!(json["retryCount"], 3);
    assert_eq!(json["timeoutSeconds"], 0);
    assert_eq!(json["timeoutPolicy"], "TIME_OUT_WF");
    assert_eq!(json["retryLogic"], "FIXED");
    assert_eq!(json["retryDelaySeconds"], 60);
    assert_eq!(json["responseTimeoutSeconds"], 3600);
    assert_eq!(json["backoffScaleFactor"], 1);
    assert_eq!(json["ownerEmail"], "team@example.com");
    assert_eq!(json["inputKeys"], json!(["params"]));
    assert_eq!(json["outputKeys"], json!(["result"]));
    assert!(json.get("enforceSchema").is_none());
}

#[test]
fn a_silent_response_timeout_follows_a_shorter_task_timeout() {
    let options = TaskOptions {
        timeout_seconds: Some(90),
        ..TaskOptions::DEFAULT
    };
    let def = assemble_parts(parts("t", &TaskKind::WorkspaceFree, &options), &owner()).unwrap();
    assert_eq!(def.response_timeout_seconds, 90);
    let options = TaskOptions {
        timeout_seconds: Some(7200),
        ..TaskOptions::DEFAULT
    };
    let def = assemble_parts(parts("t", &TaskKind::WorkspaceFree, &options), &owner()).unwrap();
    assert_eq!(def.response_timeout_seconds, 3600);
}

#[test]
fn every_option_lands_in_its_field() {
    let options = TaskOptions {
        description: Some("  Does things.  "),
        retry_count: Some(5),
        retry_logic: Some(RetryLogic::ExponentialBackoff),
        retry_delay_seconds: Some(2),
        timeout_seconds: Some(100),
        response_timeout_seconds: Some(50),
        total_timeout_seconds: Some(1000),
        timeout_policy: Some(TimeoutPolicy::Retry),
        concurrent_exec_limit: Some(4),
        rate_limit_per_frequency: Some(10),
        rate_limit_frequency_in_seconds: Some(60),
        poll_timeout_seconds: Some(30),
        backoff_scale_factor: Some(2),
        owner_email: Some("own@example.com"),
        schema_version: 3,
        enforce_schema: true,
    };
    let json = assemble_parts(parts("t", &WORKSPACE, &options), &owner())
        .unwrap()
        .to_json();
    let expected = json!({
        "name": "t", "description": "Does things.", "retryCount": 5, "timeoutSeconds": 100,
        "inputKeys": ["workspace", "params"], "outputKeys": ["workspace", "result"],
        "timeoutPolicy": "RETRY", "retryLogic": "EXPONENTIAL_BACKOFF", "retryDelaySeconds": 2,
        "responseTimeoutSeconds": 50, "concurrentExecLimit": 4, "rateLimitPerFrequency": 10,
        "rateLimitFrequencyInSeconds": 60, "ownerEmail": "own@example.com",
        "pollTimeoutSeconds": 30, "backoffScaleFactor": 2, "totalTimeoutSeconds": 1000,
        "enforceSchema": true
    });
    for (k, v) in expected.as_object().unwrap() {
        assert_eq!(&json[k], v, "{k}");
    }
    assert_eq!(json["inputSchema"]["name"], "t_input");
    assert_eq!(json["inputSchema"]["version"], 3);
    assert_eq!(json["inputSchema"]["type"], "JSON");
    assert_eq!(json["outputSchema"]["name"], "t_output");
    assert_eq!(json["outputSchema"]["version"], 3);
}

#[test]
fn the_schemas_are_the_closed_envelopes_standing_alone() {
    let def = assemble_parts(parts("t", &WORKSPACE, &TaskOptions::DEFAULT), &owner()).unwrap();
    let input = &def.input_schema.data;
    assert_eq!(input["$schema"], SCHEMA_DIALECT);
    assert_eq!(input["title"], "t_input");
    assert_eq!(input["required"], json!(["workspace", "params"]));
    assert_eq!(input["additionalProperties"], false);
    // WorkspaceInput as the workspace and, here, as the params too: one shared definition.
    assert_eq!(
        input["properties"]["workspace"],
        json!({"$ref": "#/$defs/WorkspaceInput"})
    );
    assert_eq!(input["properties"]["params"]["title"], "WorkspaceInput");
    assert_eq!(input["properties"]["params"]["additionalProperties"], false);
    let output = &def.output_schema.data;
    assert_eq!(output["$schema"], SCHEMA_DIALECT);
    assert_eq!(output["required"], json!(["workspace", "result"]));
    assert_eq!(output["additionalProperties"], false);
    assert_eq!(
        output["properties"]["workspace"],
        json!({"$ref": "#/$defs/WorkspaceOutput"})
    );
    // Every $ref points into the document's own $defs.
    for data in [input, output] {
        let text = data.to_string();
        for piece in text.split("\"$ref\":\"").skip(1) {
            let target = &piece[..piece.find('"').unwrap()];
            let name = target.strip_prefix("#/$defs/").expect(target);
            assert!(data["$defs"].get(name).is_some(), "{target} in {text}");
        }
    }
    let free = assemble_parts(
        parts("t", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
        &owner(),
    )
    .unwrap();
    assert_eq!(free.input_schema.data["required"], json!(["params"]));
    assert!(
        free.input_schema.data["properties"]
            .get("workspace")
            .is_none()
    );
    assert_eq!(free.output_schema.data["required"], json!(["result"]));
}

#[test]
fn nothing_worker_side_is_in_the_taskdef() {
    let options = TaskOptions {
        owner_email: Some("own@example.com"),
        ..TaskOptions::DEFAULT
    };
    let json = assemble_parts(parts("t", &WORKSPACE, &options), &owner())
        .unwrap()
        .to_json();
    let mut keys = Vec::new();
    let mut strings = Vec::new();
    collect(&json, &mut keys, &mut strings);
    for key in [
        "inputTemplate",
        "guardrails",
        "pre",
        "post",
        "prefix",
        "access",
        "publishBudget",
        "publish_budget",
        "max_files",
        "enforceSchema",
        "default",
        "examples",
    ] {
        assert!(!keys.contains(&key.to_owned()), "key {key}");
    }
    for s in &strings {
        assert!(
            !s.contains("raw/**") && s != "features/" && s != "read_write",
            "{s}"
        );
    }
    assert!(!json.to_string().contains("null"));
}

fn collect(value: &Value, keys: &mut Vec<String>, strings: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                keys.push(k.clone());
                collect(v, keys, strings);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, keys, strings)),
        Value::String(s) => strings.push(s.clone()),
        _ => {}
    }
}

#[test]
fn the_owner_email_comes_from_the_task_then_the_workspace() {
    let own = TaskOptions {
        owner_email: Some("own@example.com"),
        ..TaskOptions::DEFAULT
    };
    let def = assemble_parts(parts("t", &TaskKind::WorkspaceFree, &own), &owner()).unwrap();
    assert_eq!(def.owner_email, "own@example.com");
    let e = assemble_parts(
        parts("lonely", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
        &Settings::default(),
    )
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].task, "lonely");
    assert_eq!(e[0].field, "ownerEmail");
    assert!(
        e[0].to_string()
            .starts_with("task `lonely`: ownerEmail: no owner email: set `owner_email"),
        "{}",
        e[0]
    );
    let blank = Settings {
        owner_email: Some("  ".to_owned()),
    };
    assert!(
        assemble_parts(
            parts("t", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
            &blank
        )
        .is_err()
    );
    let bad = Settings {
        owner_email: Some("nobody".to_owned()),
    };
    let e = assemble_parts(
        parts("t", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
        &bad,
    )
    .unwrap_err();
    assert_eq!(e[0].field, "ownerEmail");
}

#[test]
fn conductors_rules_are_checked_before_anything_is_written() {
    let free = TaskKind::WorkspaceFree;
    let d = TaskOptions::DEFAULT;
    // responseTimeoutSeconds ≥ 1.
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                response_timeout_seconds: Some(0),
                ..d
            }
        ),
        fields("t", &["responseTimeoutSeconds"])
    );
    // responseTimeoutSeconds ≤ timeoutSeconds when that is > 0 (equal passes).
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                timeout_seconds: Some(60),
                response_timeout_seconds: Some(61),
                ..d
            }
        ),
        fields("t", &["responseTimeoutSeconds"])
    );
    let equal = TaskOptions {
        timeout_seconds: Some(60),
        response_timeout_seconds: Some(60),
        ..d
    };
    assert!(assemble_parts(parts("t", &free, &equal), &owner()).is_ok());
    let no_timeout = TaskOptions {
        timeout_seconds: Some(0),
        response_timeout_seconds: Some(100_000),
        ..d
    };
    assert!(assemble_parts(parts("t", &free, &no_timeout), &owner()).is_ok());
    // timeoutSeconds ≤ totalTimeoutSeconds when both are > 0.
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                timeout_seconds: Some(600),
                response_timeout_seconds: Some(60),
                total_timeout_seconds: Some(300),
                ..d
            }
        ),
        fields("t", &["timeoutSeconds"])
    );
    let total_off = TaskOptions {
        timeout_seconds: Some(600),
        response_timeout_seconds: Some(60),
        total_timeout_seconds: Some(0),
        ..d
    };
    assert!(assemble_parts(parts("t", &free, &total_off), &owner()).is_ok());
    // name [A-Za-z0-9_]+.
    for name in ["build-features", "", "a b", "ünï", "a.b"] {
        assert_eq!(errors(name, &free, d), fields(name, &["name"]), "{name:?}");
    }
    // The rest of Conductor's constraints and Java ranges.
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                backoff_scale_factor: Some(0),
                ..d
            }
        ),
        fields("t", &["backoffScaleFactor"])
    );
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                retry_count: Some(u32::MAX),
                ..d
            }
        ),
        fields("t", &["retryCount"])
    );
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                timeout_seconds: Some(u64::MAX),
                response_timeout_seconds: Some(1),
                ..d
            }
        ),
        fields("t", &["timeoutSeconds"])
    );
    // A SchemaDef version < 1 means "latest" to Conductor.
    assert_eq!(
        errors(
            "t",
            &free,
            TaskOptions {
                schema_version: 0,
                ..d
            }
        ),
        fields("t", &["inputSchema.version", "outputSchema.version"])
    );
    // Every violation at once.
    assert_eq!(
        errors(
            "bad-name",
            &free,
            TaskOptions {
                timeout_seconds: Some(10),
                response_timeout_seconds: Some(20),
                total_timeout_seconds: Some(5),
                ..d
            }
        ),
        fields(
            "bad-name",
            &["name", "responseTimeoutSeconds", "timeoutSeconds"]
        )
    );
}

#[test]
fn the_rules_on_taskdef_json() {
    let good = assemble_parts(
        parts("t", &TaskKind::WorkspaceFree, &TaskOptions::DEFAULT),
        &owner(),
    )
    .unwrap()
    .to_json();
    assert_eq!(check(&good), []);
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut def = good.clone();
        edit(&mut def);
        check(&def).into_iter().map(|e| e.field).collect::<Vec<_>>()
    };
    assert_eq!(broken(&|d| d["retryCount"] = Value::Null), ["retryCount"]);
    assert_eq!(broken(&|d| d["description"] = Value::Null), ["description"]);
    assert_eq!(
        broken(&|d| d["inputSchema"]["version"] = Value::Null),
        ["inputSchema.version"]
    );
    assert_eq!(
        broken(&|d| {
            d.as_object_mut()
                .unwrap()
                .shift_remove("responseTimeoutSeconds");
        }),
        ["responseTimeoutSeconds"]
    );
    assert_eq!(
        broken(&|d| {
            d.as_object_mut().unwrap().shift_remove("ownerEmail");
        }),
        ["ownerEmail"]
    );
    assert_eq!(
        broken(&|d| d["inputTemplate"] = json!({"x": 1})),
        ["inputTemplate"]
    );
    assert_eq!(
        broken(&|d| d["timeoutPolicy"] = json!("retry")),
        ["timeoutPolicy"]
    );
    assert_eq!(
        broken(&|d| d["retryLogic"] = json!("RANDOM")),
        ["retryLogic"]
    );
    assert_eq!(
        broken(&|d| d["outputSchema"]["type"] = json!("AVRO")),
        ["outputSchema.type"]
    );
    assert_eq!(
        broken(&|d| {
            d["inputSchema"]["data"]
                .as_object_mut()
                .unwrap()
                .shift_remove("$schema");
        }),
        ["inputSchema.data"]
    );
    assert_eq!(
        broken(&|d| d["responseTimeoutSeconds"] = json!(-5)),
        ["responseTimeoutSeconds"]
    );
    assert_eq!(
        broken(&|d| d["retryDelaySeconds"] = json!(1.5)),
        ["retryDelaySeconds"]
    );
    assert_eq!(broken(&|d| d["name"] = json!("x:y")), ["name"]);
    let e = check(&json!([]));
    assert_eq!(e.len(), 1);
}

#[test]
fn two_tasks_of_one_name_are_an_error() {
    // assemble_all over descriptors is covered by the example crate; here, the rule itself.
    let e = TaskDefErrors(vec![TaskDefError {
        task: "t".into(),
        field: "name".into(),
        message: "m".into(),
    }]);
    assert_eq!(e.to_string(), "task `t`: name: m");
}

fn def(version: u32, min_length: u64) -> TaskDef {
    let mut def = assemble_parts(
        parts(
            "t",
            &TaskKind::WorkspaceFree,
            &TaskOptions {
                schema_version: version,
                ..TaskOptions::DEFAULT
            },
        ),
        &owner(),
    )
    .unwrap();
    def.input_schema.data["properties"]["params"]["properties"]["repository"]["minLength"] =
        json!(min_length);
    def
}

#[test]
fn the_files_plan_writes_what_differs_and_names_leftovers() {
    let mut existing = BTreeMap::new();
    let p = plan(&existing, &[def(1, 1)]);
    assert_eq!(p.write.len(), 1);
    assert_eq!(p.write[0].0, "t.json");
    assert!(!p.is_fresh());
    existing.insert("t.json".to_owned(), render(&def(1, 1)));
    existing.insert("gone.json".to_owned(), "{}".to_owned());
    let p = plan(&existing, &[def(1, 1)]);
    assert_eq!(p.fresh, ["t.json"]);
    assert_eq!(p.leftover, ["gone.json"]);
    assert!(!p.is_fresh());
    existing.remove("gone.json");
    assert!(plan(&existing, &[def(1, 1)]).is_fresh());
}

/// The files record what will be published: a task's schema may change at the same version
/// (the version rule is publish's, against what the server has).
#[test]
fn a_schema_change_at_the_same_version_is_only_stale() {
    let mut existing = BTreeMap::new();
    existing.insert("t.json".to_owned(), render(&def(1, 1)));
    let p = plan(&existing, &[def(1, 2)]);
    assert_eq!(p.write.len(), 1);
    existing.insert("t.json".to_owned(), "<<<<<<< conflict".to_owned());
    assert_eq!(plan(&existing, &[def(1, 1)]).write.len(), 1);
}

#[test]
fn files_read_and_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("taskdefs");
    assert!(files::read_dir(&out).unwrap().is_empty());
    let p = plan(&BTreeMap::new(), &[def(1, 1)]);
    files::write(&out, &p).unwrap();
    std::fs::write(out.join("notes.txt"), "x").unwrap();
    let read = files::read_dir(&out).unwrap();
    assert_eq!(read.keys().collect::<Vec<_>>(), ["t.json"]);
    assert!(plan(&read, &[def(1, 1)]).is_fresh());
}

#[test]
fn descriptions_are_unfolded_paragraph_by_paragraph() {
    assert_eq!(
        unfold("  One line\n  goes on.\n\n Second:\n- a\n- b\n\n\n"),
        "One line goes on.\n\nSecond:\n- a\n- b"
    );
    assert_eq!(unfold("  \n "), "");
}
