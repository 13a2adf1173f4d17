//! `/api/metadata/taskdefs` (`docs/src/reference/conductor.md` §1, §3): upsert, read-back defaults and
//! quirks, validation bodies, PUT/GET/DELETE errors.

use crate::support::Client;
use perago_testserver::{Options, TestServer};
use serde_json::{Value, json};

const TASKDEFS: &str = "/api/metadata/taskdefs";

fn server_and_client(options: Options) -> (TestServer, Client) {
    let server = TestServer::start_with(options);
    let client = Client::new(&server.base_url());
    (server, client)
}

fn minimal(name: &str) -> Value {
    json!({"name": name, "ownerEmail": "team@example.com"})
}

/// Asserts a 400 whose only validation error is (path, message, invalidValue).
fn assert_one_violation(
    answer: &crate::support::Answer,
    path: &str,
    message: &str,
    invalid: Value,
) {
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.json(),
        json!({
            "status": 400,
            "message": "Validation failed, check below errors for detail.",
            "instance": "perago-testserver",
            "retryable": false,
            "validationErrors": [{"path": path, "message": message, "invalidValue": invalid}],
        })
    );
}

#[test]
fn register_then_read_back_with_server_defaults() {
    let (server, client) = server_and_client(Options::default());
    let answer = client.post_json(TASKDEFS, &json!([minimal("greet")]));
    assert_eq!(
        (
            answer.status,
            answer.body.as_str(),
            answer.content_type.as_deref()
        ),
        (200, "", None)
    );

    let got = client.get(&format!("{TASKDEFS}/greet"));
    assert_eq!(got.status, 200);
    assert_eq!(got.content_type.as_deref(), Some("application/json"));
    let mut def = got.json();
    let create_time = def["createTime"].as_i64().expect("createTime");
    assert!(create_time > 1_600_000_000_000, "epoch ms: {create_time}");
    def["createTime"] = json!("<now>");
    assert_eq!(
        def,
        json!({
            "createTime": "<now>",
            "updateTime": 0,
            "createdBy": "",
            "name": "greet",
            "retryCount": 3,
            "timeoutSeconds": 0,
            "inputKeys": [],
            "outputKeys": [],
            "timeoutPolicy": "TIME_OUT_WF",
            "retryLogic": "FIXED",
            "retryDelaySeconds": 60,
            "responseTimeoutSeconds": 3600,
            "inputTemplate": {},
            "rateLimitPerFrequency": 0,
            "rateLimitFrequencyInSeconds": 1,
            "ownerEmail": "team@example.com",
            "backoffScaleFactor": 1,
            "maxRetryDelaySeconds": 0,
            "backoffJitterMs": 0,
            "totalTimeoutSeconds": 0,
            "taskStatusListenerEnabled": true,
            "enforceSchema": false,
            "runtimeMetadata": [],
        })
    );
    assert_eq!(
        server.taskdef("greet").map(|d| d["name"].clone()),
        Some(json!("greet"))
    );
}

#[test]
fn null_for_a_primitive_is_zero_and_unknown_fields_are_dropped() {
    let (server, client) = server_and_client(Options::default());
    let mut def = minimal("t");
    def["retryCount"] = Value::Null;
    def["tags"] = json!([{"key": "k", "value": "v"}]);
    def["concurrentExecLimit"] = Value::Null;
    def["inputKeys"] = Value::Null;
    assert_eq!(client.post_json(TASKDEFS, &json!([def])).status, 200);
    let back = server.taskdef("t").unwrap();
    assert_eq!(back["retryCount"], 0);
    assert!(back.get("tags").is_none());
    assert!(back.get("concurrentExecLimit").is_none());
    // A boxed/object field sent as null stays null and is omitted (NON_NULL).
    assert!(back.get("inputKeys").is_none());
}

#[test]
fn nested_schema_defs_gain_auditable_zeros_and_version_one() {
    let (server, client) = server_and_client(Options::default());
    let mut def = minimal("s");
    def["inputSchema"] =
        json!({"name": "s_input", "type": "JSON", "data": {"type": "object"}, "extra": 1});
    def["outputSchema"] = json!({"name": "s_output", "version": 2});
    def["enforceSchema"] = json!(true);
    assert_eq!(client.post_json(TASKDEFS, &json!([def])).status, 200);
    let back = server.taskdef("s").unwrap();
    assert_eq!(
        back["inputSchema"],
        json!({"createTime": 0, "updateTime": 0, "name": "s_input", "version": 1, "type": "JSON", "data": {"type": "object"}})
    );
    assert_eq!(
        back["outputSchema"],
        json!({"createTime": 0, "updateTime": 0, "name": "s_output", "version": 2})
    );
    assert_eq!(back["enforceSchema"], true);
}

#[test]
fn post_is_an_upsert_that_resets_omitted_fields() {
    let (server, client) = server_and_client(Options::default());
    let mut def = minimal("u");
    def["retryCount"] = json!(7);
    def["description"] = json!("first");
    assert_eq!(client.post_json(TASKDEFS, &json!([def])).status, 200);
    assert_eq!(
        client
            .post_json(TASKDEFS, &json!([minimal("u"), minimal("v")]))
            .status,
        200
    );
    let back = server.taskdef("u").unwrap();
    assert_eq!(back["retryCount"], 3);
    assert!(back.get("description").is_none());
    assert_eq!(back["updateTime"], 0);
    let names: Vec<Value> = client
        .get(TASKDEFS)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("u"), json!("v")]);
    assert_eq!(server.taskdefs().len(), 2);
}

#[test]
fn bare_object_is_a_500_unless_single_values_are_accepted() {
    let (_server, client) = server_and_client(Options::default());
    let answer = client.post_json(TASKDEFS, &minimal("bare"));
    assert_eq!(answer.status, 500);
    assert_eq!(answer.json()["status"], 500);
    assert_eq!(answer.json()["retryable"], false);
    assert_eq!(client.get(&format!("{TASKDEFS}/bare")).status, 404);

    let (server, client) = server_and_client(Options {
        accept_single_taskdef: true,
        ..Options::default()
    });
    assert_eq!(client.post_json(TASKDEFS, &minimal("bare")).status, 200);
    assert!(server.taskdef("bare").is_some());
}

#[test]
fn unreadable_bodies_are_500() {
    let (server, client) = server_and_client(Options::default());
    for body in [
        "[{\"name\": \"x\"",
        "",
        r#"[{"name": "x", "ownerEmail": "a@b", "retryLogic": "fixed"}]"#,
        r#"[{"name": "x", "ownerEmail": "a@b", "retryCount": "three"}]"#,
        r#"[{"name": "x", "ownerEmail": "a@b", "inputKeys": "a"}]"#,
        r#"[null]"#,
    ] {
        let answer = client.post(TASKDEFS, body);
        assert_eq!(answer.status, 500, "{body}: {}", answer.body);
    }
    assert!(server.taskdefs().is_empty());
}

#[test]
fn owner_email_is_mandatory_by_default_with_the_exact_error_body() {
    let (server, client) = server_and_client(Options::default());
    let answer = client.post_json(TASKDEFS, &json!([{"name": "x"}]));
    assert_one_violation(
        &answer,
        "registerTaskDef.taskDefinitions[0].ownerEmail",
        "ownerEmail cannot be empty",
        Value::Null,
    );
    let answer = client.post_json(TASKDEFS, &json!([{"name": "x", "ownerEmail": ""}]));
    assert_one_violation(
        &answer,
        "registerTaskDef.taskDefinitions[0].ownerEmail",
        "ownerEmail cannot be empty",
        json!(""),
    );
    assert!(server.taskdefs().is_empty());

    let (server, client) = server_and_client(Options {
        owner_email_mandatory: false,
        ..Options::default()
    });
    assert_eq!(
        client.post_json(TASKDEFS, &json!([{"name": "x"}])).status,
        200
    );
    assert!(server.taskdef("x").unwrap().get("ownerEmail").is_none());
}

#[test]
fn list_constraints() {
    let (_server, client) = server_and_client(Options::default());
    assert_one_violation(
        &client.post_json(TASKDEFS, &json!([])),
        "registerTaskDef.taskDefinitions",
        "TaskDefList is empty",
        Value::Null,
    );
    assert_one_violation(
        &client.post(TASKDEFS, "null"),
        "registerTaskDef.taskDefinitions",
        "TaskDefList cannot be empty or null",
        Value::Null,
    );
}

#[test]
fn field_constraints_have_conductors_messages() {
    let (_server, client) = server_and_client(Options::default());
    let p = "registerTaskDef.taskDefinitions[0]";
    let cases: Vec<(Value, String, &str, Value)> = vec![
        (
            json!({"ownerEmail": "a@b"}),
            format!("{p}.name"),
            "TaskDef name cannot be null or empty",
            Value::Null,
        ),
        (
            json!({"name": "", "ownerEmail": "a@b"}),
            format!("{p}.name"),
            "TaskDef name cannot be null or empty",
            json!(""),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "retryCount": -1}),
            format!("{p}.retryCount"),
            "TaskDef retryCount: 0 must be >= 0",
            json!("-1"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "responseTimeoutSeconds": 0}),
            format!("{p}.responseTimeoutSeconds"),
            "TaskDef responseTimeoutSeconds: 0 should be minimum 1 second",
            json!("0"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "pollTimeoutSeconds": -1}),
            format!("{p}.pollTimeoutSeconds"),
            "TaskDef pollTimeoutSeconds: 0 must be >= 0",
            json!("-1"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "backoffScaleFactor": 0}),
            format!("{p}.backoffScaleFactor"),
            "Backoff scale factor. Applicable for LINEAR_BACKOFF",
            json!("0"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "maxRetryDelaySeconds": -5}),
            format!("{p}.maxRetryDelaySeconds"),
            "TaskDef maxRetryDelaySeconds: 0 must be >= 0",
            json!("-5"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "backoffJitterMs": -1}),
            format!("{p}.backoffJitterMs"),
            "TaskDef backoffJitterMs: 0 must be >= 0",
            json!("-1"),
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "totalTimeoutSeconds": -1}),
            format!("{p}.totalTimeoutSeconds"),
            "TaskDef totalTimeoutSeconds: 0 must be >= 0",
            json!("-1"),
        ),
        // The default responseTimeoutSeconds (3600) trips the class-level rule.
        (
            json!({"name": "x", "ownerEmail": "a@b", "timeoutSeconds": 60}),
            p.to_owned(),
            "TaskDef: x responseTimeoutSeconds: 3600 must be less than timeoutSeconds: 60",
            Value::Null,
        ),
        (
            json!({"name": "x", "ownerEmail": "a@b", "timeoutSeconds": 100, "responseTimeoutSeconds": 10, "totalTimeoutSeconds": 50}),
            p.to_owned(),
            "TaskDef: x timeoutSeconds: 100 must be less than or equal to totalTimeoutSeconds: 50",
            Value::Null,
        ),
    ];
    for (def, path, message, invalid) in cases {
        let answer = client.post_json(TASKDEFS, &json!([def]));
        assert_one_violation(&answer, &path, message, invalid);
    }
}

#[test]
fn boundary_values_pass() {
    let (_server, client) = server_and_client(Options::default());
    let def = json!({
        "name": "edge", "ownerEmail": "a@b", "retryCount": 0, "responseTimeoutSeconds": 60,
        "timeoutSeconds": 60, "totalTimeoutSeconds": 60, "pollTimeoutSeconds": 0,
    });
    assert_eq!(client.post_json(TASKDEFS, &json!([def])).status, 200);
}

#[test]
fn one_bad_element_rejects_the_whole_list_with_its_index() {
    let (server, client) = server_and_client(Options::default());
    let answer = client.post_json(TASKDEFS, &json!([minimal("good"), {"name": "bad"}]));
    assert_one_violation(
        &answer,
        "registerTaskDef.taskDefinitions[1].ownerEmail",
        "ownerEmail cannot be empty",
        Value::Null,
    );
    assert!(server.taskdef("good").is_none());
}

#[test]
fn several_violations_are_all_reported() {
    let (_server, client) = server_and_client(Options::default());
    let answer = client.post_json(TASKDEFS, &json!([{"retryCount": -1}]));
    assert_eq!(answer.status, 400);
    let paths: Vec<Value> = answer.json()["validationErrors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].clone())
        .collect();
    assert_eq!(
        paths,
        vec![
            json!("registerTaskDef.taskDefinitions[0].name"),
            json!("registerTaskDef.taskDefinitions[0].retryCount"),
            json!("registerTaskDef.taskDefinitions[0].ownerEmail"),
        ]
    );
}

#[test]
fn put_updates_existing_defs_only() {
    let (server, client) = server_and_client(Options::default());
    let answer = client.put_json(TASKDEFS, &minimal("missing"));
    assert_eq!(answer.status, 404);
    assert_eq!(
        answer.json(),
        json!({"status": 404, "message": "No such task by name missing", "instance": "perago-testserver", "retryable": false})
    );

    assert_eq!(
        client.post_json(TASKDEFS, &json!([minimal("p")])).status,
        200
    );
    let created = server.taskdef("p").unwrap()["createTime"].clone();
    let mut changed = minimal("p");
    changed["retryCount"] = json!(1);
    changed["createTime"] = json!(5);
    let answer = client.put_json(TASKDEFS, &changed);
    assert_eq!((answer.status, answer.body.as_str()), (200, ""));
    let back = server.taskdef("p").unwrap();
    assert_eq!(back["retryCount"], 1);
    assert_eq!(back["createTime"], created);
    assert!(back["updateTime"].as_i64().unwrap() > 0);
    assert_eq!(back["updatedBy"], "");

    let answer = client.put_json(TASKDEFS, &json!({"name": "p"}));
    assert_one_violation(
        &answer,
        "updateTaskDef.taskDefinition.ownerEmail",
        "ownerEmail cannot be empty",
        Value::Null,
    );
    assert_eq!(
        client.put_json(TASKDEFS, &json!([minimal("p")])).status,
        500
    );
}

#[test]
fn get_missing_and_delete() {
    let (server, client) = server_and_client(Options::default());
    let answer = client.get(&format!("{TASKDEFS}/nope"));
    assert_eq!(answer.status, 404);
    assert_eq!(
        answer.json()["message"],
        "No such taskType found by name: nope"
    );

    assert_eq!(
        client.post_json(TASKDEFS, &json!([minimal("d")])).status,
        200
    );
    let answer = client.delete(&format!("{TASKDEFS}/d"));
    assert_eq!((answer.status, answer.body.as_str()), (200, ""));
    assert!(server.taskdef("d").is_none());
    assert_eq!(client.get(&format!("{TASKDEFS}/d")).status, 404);
    // Missing def on the shipped SQL backends: NotFoundException wrapped → 500 (§3).
    assert_eq!(client.delete(&format!("{TASKDEFS}/d")).status, 500);
}

#[test]
fn names_are_percent_decoded_in_paths() {
    let (_server, client) = server_and_client(Options::default());
    assert_eq!(
        client.post_json(TASKDEFS, &json!([minimal("a b")])).status,
        200
    );
    assert_eq!(
        client.get(&format!("{TASKDEFS}/a%20b")).json()["name"],
        "a b"
    );
}

#[test]
fn unknown_routes_are_404_and_wrong_methods_405() {
    let (_server, client) = server_and_client(Options::default());
    let answer = client.get("/api/metadata/nothing");
    assert_eq!(answer.status, 404);
    assert_eq!(answer.json()["error"], "Not Found");
    assert_eq!(client.get("/").status, 404);
    assert_eq!(client.patch(TASKDEFS).status, 405);
    assert_eq!(client.get("/health").status, 200);
    assert_eq!(client.get("/api/health").json()["healthy"], true);
}
