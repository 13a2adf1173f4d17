//! Publishing the example TaskDefs end to end against the Conductor-compatible test server:
//! first publish registers, a second one sends nothing, a changed option shows in the diff and is
//! updated, 400 and 500 answers are reported clearly, `/api/schema` present and absent, and the
//! binary's `publish` subcommand.

use perago_conductor::{Backoff, Client, Retry};
use perago_testserver::{Route, TestServer};
use perago_worker::taskdef::publish::{self, Options, Report, Schemas};
use perago_worker::taskdef::{self, Settings, TaskDef};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use support::example_binary;

mod support;

/// The TaskDefs of two of the example's tasks, one of each kind (the texts below list them).
fn defs() -> Vec<TaskDef> {
    use perago_example::{build_features, validate_song};
    taskdef::assemble_all(
        &perago::tasks![validate_song, build_features],
        &Settings::default(),
    )
    .unwrap()
}

fn client(server: &TestServer) -> Client {
    Client::new(&server.base_url()).unwrap().with_retry(Retry {
        max_attempts: 3,
        backoff: Backoff {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(20),
        },
    })
}

/// Publishes and returns the printed text and the result.
fn publish_with(
    server: &TestServer,
    defs: &[TaskDef],
    options: Options,
) -> (String, Result<Report, publish::PublishError>) {
    let mut out = Vec::new();
    let result = publish::publish(&client(server), defs, options, &mut out);
    (String::from_utf8(out).unwrap(), result)
}

fn publish_ok(server: &TestServer, defs: &[TaskDef], options: Options) -> (String, Report) {
    let (text, result) = publish_with(server, defs, options);
    match result {
        Ok(report) => (text, report),
        Err(e) => panic!("{text}\n{e}"),
    }
}

/// `METHOD path` of every request since the last clear.
fn requests(server: &TestServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// What the server stores, compared through the publisher's own eyes: unchanged.
fn assert_stored(server: &TestServer, defs: &[TaskDef]) {
    for def in defs {
        let live = server.taskdef(&def.name).expect("registered");
        let d = taskdef::diff::diff(&def.to_json(), Some(&live));
        assert!(!d.needs_publish(), "{d}");
    }
}

#[test]
fn first_publish_registers_then_a_second_sends_nothing() {
    let server = TestServer::start();
    let defs = defs();
    let (text, report) = publish_ok(&server, &defs, Options::default());
    let url = server.base_url();
    assert_eq!(
        text,
        format!(
            "Conductor {url}: 2 TaskDefs\nvalidate_song: new\nbuild_features: new\nregistered 2 \
             TaskDefs: validate_song, build_features\n"
        )
    );
    assert_eq!(report.registered, ["validate_song", "build_features"]);
    assert_eq!(report.schemas, Schemas::NotRequested);
    // One GET per task, then one POST with the array.
    assert_eq!(
        requests(&server),
        [
            "GET /api/metadata/taskdefs/validate_song",
            "GET /api/metadata/taskdefs/build_features",
            "POST /api/metadata/taskdefs"
        ]
    );
    let posted = server.requests()[2].json().unwrap();
    assert_eq!(
        posted,
        Value::Array(defs.iter().map(TaskDef::to_json).collect())
    );
    assert_stored(&server, &defs);

    // Again: the read-back carries createTime, rateLimit getters, enforceSchema: false, … and
    // still compares equal.
    server.clear_requests();
    let (text, report) = publish_ok(&server, &defs, Options::default());
    assert_eq!(
        text,
        format!(
            "Conductor {url}: 2 TaskDefs\nvalidate_song: unchanged\nbuild_features: unchanged\n\
             nothing to publish: every TaskDef is unchanged\n"
        )
    );
    assert!(report.registered.is_empty());
    assert_eq!(
        requests(&server),
        [
            "GET /api/metadata/taskdefs/validate_song",
            "GET /api/metadata/taskdefs/build_features"
        ]
    );
}

#[test]
fn a_changed_option_shows_in_the_diff_and_is_updated() {
    let server = TestServer::start();
    let defs = defs();
    publish_ok(&server, &defs, Options::default());
    let mut changed = defs.clone();
    changed[0].retry_count = 5;
    changed[0].timeout_policy = "ALERT_ONLY";
    changed[0].concurrent_exec_limit = Some(4);

    // A dry run prints the diff and sends nothing.
    server.clear_requests();
    let (text, report) = publish_ok(
        &server,
        &changed,
        Options {
            dry_run: true,
            register_schemas: true,
            ..Options::default()
        },
    );
    let diff = "validate_song: changed\n    retryCount: 2 → 5\n    timeoutPolicy: \"TIME_OUT_WF\" → \
                \"ALERT_ONLY\"\n    concurrentExecLimit: 0 → 4\nbuild_features: unchanged\n";
    assert!(text.contains(diff), "{text}");
    assert!(
        text.ends_with(
            "dry run: would POST /api/metadata/taskdefs with 1 TaskDef: validate_song\n\
             dry run: would POST /api/schema with validate_song_input v1, validate_song_output \
             v1, build_features_input v1, build_features_output v1\n"
        ),
        "{text}"
    );
    assert!(report.registered.is_empty());
    assert!(server.requests().iter().all(|r| r.method == "GET"));
    assert_eq!(server.taskdef("validate_song").unwrap()["retryCount"], 2);

    // For real: only the changed TaskDef is sent, and the server has the new values.
    server.clear_requests();
    let (text, report) = publish_ok(&server, &changed, Options::default());
    assert!(text.contains(diff), "{text}");
    assert!(
        text.ends_with("registered 1 TaskDef: validate_song\n"),
        "{text}"
    );
    assert_eq!(report.registered, ["validate_song"]);
    let post = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(
        post.json().unwrap(),
        Value::Array(vec![changed[0].to_json()])
    );
    let live = server.taskdef("validate_song").unwrap();
    assert_eq!(live["retryCount"], 5);
    assert_eq!(live["timeoutPolicy"], "ALERT_ONLY");
    assert_stored(&server, &changed);
}

#[test]
fn a_changed_schema_at_the_same_version_is_refused_before_sending() {
    let server = TestServer::start();
    let defs = defs();
    publish_ok(&server, &defs, Options::default());
    let mut changed = defs.clone();
    changed[1].input_schema.data["properties"]["params"]["properties"]["min_rows"]["minimum"] =
        1.into();
    server.clear_requests();
    let (text, result) = publish_with(&server, &changed, Options::default());
    let e = result.unwrap_err();
    assert!(
        text.contains(
            "build_features: changed\n    inputSchema.data.properties.params.properties.min_rows.\
             minimum: 0 → 1\n"
        ),
        "{text}"
    );
    assert_eq!(
        e.to_string(),
        "refusing to publish, nothing was sent:\n  `build_features`: inputSchema \
         `build_features_input` differs from the server's TaskDef at the same version 1; raise \
         `schema_version` of the task to 2\nregistered: nothing\nnot registered: validate_song, \
         build_features"
    );
    assert!(server.requests().iter().all(|r| r.method == "GET"));
    // With the version raised, the change is weighed: a raised minimum refuses a caller's
    // `min_rows: 0`, so it is breaking, and needs --allow-breaking.
    changed[1].input_schema.version = 2;
    changed[1].output_schema.version = 2;
    let (_, result) = publish_with(&server, &changed, Options::default());
    let e = result.unwrap_err().to_string();
    assert!(
        e.contains("task `build_features` inputSchema /properties/params/properties/min_rows: breaking: bound_tightened"),
        "{e}"
    );
    let allowed = Options {
        allow_breaking: true,
        ..Options::default()
    };
    let (text, _) = publish_ok(&server, &changed, allowed);
    assert!(text.contains("    inputSchema.version: 1 → 2\n"), "{text}");
    assert_eq!(
        server.taskdef("build_features").unwrap()["inputSchema"]["version"],
        2
    );
}

#[test]
fn a_400_is_shown_field_by_field_and_nothing_is_registered() {
    // A server stricter than perago: it refuses what the TaskDef says, here a response timeout
    // above the task timeout (perago's own check would have caught it, so it is forced).
    let server = TestServer::start();
    let mut defs = defs();
    defs[0].response_timeout_seconds = 7200;
    defs[1].retry_delay_seconds = 1;
    let (text, result) = publish_with(&server, &defs, Options::default());
    assert!(
        text.contains("validate_song: new\nbuild_features: new\n"),
        "{text}"
    );
    let e = result.unwrap_err();
    let url = server.base_url();
    assert_eq!(
        e.to_string(),
        format!(
            "POST /api/metadata/taskdefs with 2 TaskDefs failed: POST {url}/api/metadata/taskdefs: \
             HTTP 400: Validation failed, check below errors for detail.\n  - \
             registerTaskDef.taskDefinitions[0]: TaskDef: validate_song responseTimeoutSeconds: \
             7200 must be less than timeoutSeconds: 60 (value: null)\nregistered: nothing\nnot \
             registered: validate_song, build_features"
        )
    );
    let source = e.source.as_ref().unwrap();
    assert_eq!(source.status(), Some(400));
    let body = source.error_body().unwrap();
    assert_eq!(body.validation_errors.len(), 1);
    // Not retried.
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
    assert!(server.taskdefs().is_empty());

    // An injected 400 without validationErrors shows its message.
    let server = TestServer::start();
    server.fail_next(Route::RegisterTaskDefs, 1, 400);
    let (_, result) = publish_with(&server, &self::defs(), Options::default());
    let e = result.unwrap_err().to_string();
    assert!(
        e.contains("HTTP 400: Injected fault: HTTP 400\nregistered: nothing"),
        "{e}"
    );
}

#[test]
fn a_500_is_retried_then_reported() {
    let server = TestServer::start();
    let defs = defs();
    // Fewer failures than attempts: retried and registered.
    server.fail_next(Route::RegisterTaskDefs, 2, 500);
    let (_, report) = publish_ok(&server, &defs, Options::default());
    assert_eq!(report.registered.len(), 2);
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        [500, 500, 200]
    );

    // More failures than attempts: reported, with what was and was not registered.
    let server = TestServer::start();
    server.fail_next(Route::RegisterTaskDefs, 10, 500);
    let (_, result) = publish_with(&server, &defs, Options::default());
    let e = result.unwrap_err();
    let url = server.base_url();
    assert_eq!(
        e.to_string(),
        format!(
            "POST /api/metadata/taskdefs with 2 TaskDefs failed: POST {url}/api/metadata/taskdefs: \
             HTTP 500: Injected fault: HTTP 500\nregistered: nothing\nnot registered: \
             validate_song, build_features"
        )
    );
    assert!(matches!(
        e.source.as_deref(),
        Some(perago_conductor::Error::Status {
            status: 500,
            attempts: 3,
            ..
        })
    ));
    assert!(server.taskdefs().is_empty());

    // A 503 while reading is retried too.
    let server = TestServer::start();
    server.fail_next(Route::GetTaskDef, 1, 503);
    publish_ok(&server, &defs, Options::default());
    assert_stored(&server, &defs);
}

#[test]
fn a_server_that_is_down_is_reported_and_nothing_is_registered() {
    let mut server = TestServer::start();
    server.stop();
    let (_, result) = publish_with(&server, &defs(), Options::default());
    let e = result.unwrap_err().to_string();
    assert!(
        e.starts_with("cannot read the live TaskDef `validate_song`: GET "),
        "{e}"
    );
    assert!(e.contains("(after 3 attempts)"), "{e}");
    assert!(
        e.ends_with("registered: nothing\nnot registered: validate_song, build_features"),
        "{e}"
    );
}

#[test]
fn schemas_are_registered_when_the_server_has_a_registry() {
    let server = TestServer::start();
    let defs = defs();
    let options = Options {
        dry_run: false,
        register_schemas: true,
        ..Options::default()
    };
    let (text, report) = publish_ok(&server, &defs, options);
    assert!(
        text.ends_with(
            "registered schemas: validate_song_input v1, validate_song_output v1, \
             build_features_input v1, build_features_output v1\n"
        ),
        "{text}"
    );
    assert!(matches!(report.schemas, Schemas::Registered(ref s) if s.len() == 4));
    let stored = server.schemas();
    assert_eq!(stored.len(), 4);
    for def in &defs {
        for schema in def.schema_defs() {
            let live = stored.iter().find(|s| s["name"] == schema["name"]).unwrap();
            assert_eq!(live["version"], schema["version"]);
            assert_eq!(live["type"], "JSON");
            assert_eq!(live["data"], schema["data"]);
        }
    }
    // Again: the registry has them; nothing is posted.
    server.clear_requests();
    let (text, _) = publish_ok(&server, &defs, options);
    assert!(
        text.ends_with("schemas: the registry has them all\n"),
        "{text}"
    );
    assert!(server.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn without_a_schema_registry_publishing_warns_and_goes_on() {
    let server = TestServer::start_with(perago_testserver::Options {
        schema_registry: false,
        ..Default::default()
    });
    let defs = defs();
    let (text, report) = publish_ok(
        &server,
        &defs,
        Options {
            dry_run: false,
            register_schemas: true,
            ..Options::default()
        },
    );
    assert!(
        text.ends_with(
            "registered 2 TaskDefs: validate_song, build_features\nwarning: no schema registry \
             on this server (POST /api/schema: 404); the schemas travel inline in the TaskDefs\n"
        ),
        "{text}"
    );
    assert_eq!(report.registered.len(), 2);
    assert!(matches!(report.schemas, Schemas::NoRegistry(ref s) if s.len() == 4));
    assert_stored(&server, &defs);
    // The schemas are inline in the stored TaskDefs.
    assert_eq!(
        server.taskdef("validate_song").unwrap()["inputSchema"]["data"],
        defs[0].input_schema.data
    );
}

#[test]
fn a_failed_schema_registration_says_the_taskdefs_were_registered() {
    let server = TestServer::start();
    let defs = defs();
    // The four schema GETs answer 404 (missing), as they would; then every POST /api/schema
    // attempt fails. (The server has no route for the POST alone, so the faults are queued in
    // request order.)
    server.fail_next(Route::Schema, 4, 404);
    server.fail_next(Route::Schema, 3, 500);
    let (text, result) = publish_with(
        &server,
        &defs,
        Options {
            dry_run: false,
            register_schemas: true,
            ..Options::default()
        },
    );
    assert!(
        text.ends_with("registered 2 TaskDefs: validate_song, build_features\n"),
        "{text}"
    );
    let e = result.unwrap_err().to_string();
    let url = server.base_url();
    assert_eq!(
        e,
        format!(
            "POST /api/schema failed: POST {url}/api/schema: HTTP 500: Injected fault: HTTP 500\n\
             registered: validate_song, build_features\nschemas not registered: \
             validate_song_input v1, validate_song_output v1, build_features_input v1, \
             build_features_output v1"
        )
    );
    assert_stored(&server, &defs);
    assert!(server.schemas().is_empty());
}

#[test]
fn the_auth_token_is_sent_and_never_printed() {
    let server = TestServer::start();
    let token = "tok-3f9a8c7e-secret";
    let c = Client::new(&server.base_url())
        .unwrap()
        .with_auth_token(token);
    let mut out = Vec::new();
    publish::publish(&c, &defs(), Options::default(), &mut out).unwrap();
    assert!(!String::from_utf8_lossy(&out).contains(token));
    for r in server.requests() {
        assert_eq!(
            r.header("x-authorization"),
            Some(token),
            "{} {}",
            r.method,
            r.path
        );
    }
}

#[test]
fn a_conductor_named_by_host_name_is_reached() {
    // A host name, not an address: the client looks it up (through its cached resolver).
    let server = TestServer::start();
    let c = Client::new(&format!("http://localhost:{}", server.port())).unwrap();
    let mut out = Vec::new();
    publish::publish(&c, &defs(), Options::default(), &mut out).unwrap();
    assert_stored(&server, &defs());
    publish::publish(&c, &defs(), Options::default(), &mut out).unwrap();
}

fn bin(server: &TestServer, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(example_binary())
        .arg("publish")
        .args(["--conductor-url", &server.base_url()])
        .args(args)
        .env("CONDUCTOR_AUTH_TOKEN", "bin-secret-token")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_binary_publishes() {
    let server = TestServer::start();
    let (code, out, err) = bin(&server, &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(dry run)\nvalidate_song: new\nbuild_features: new\npublish_features: new\n"),
        "{out}"
    );
    assert!(server.taskdefs().is_empty());

    let (code, out, err) = bin(&server, &["--register-schemas"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("registered 3 TaskDefs: validate_song, build_features, publish_features\n"),
        "{out}"
    );
    assert_eq!(server.schemas().len(), 6);
    assert_stored(&server, &defs());
    for r in server.requests() {
        assert_eq!(r.header("x-authorization"), Some("bin-secret-token"));
    }
    assert!(!out.contains("bin-secret-token") && !err.contains("bin-secret-token"));

    let (code, out, _) = bin(&server, &[]);
    assert_eq!(code, 0);
    assert!(
        out.ends_with("nothing to publish: every TaskDef is unchanged\n"),
        "{out}"
    );
}

#[test]
fn the_binary_exits_1_when_the_server_refuses() {
    let server = TestServer::start();
    server.fail_next(Route::RegisterTaskDefs, 1, 400);
    let (code, out, err) = bin(&server, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.starts_with("publish failed: POST /api/metadata/taskdefs with 3 TaskDefs failed: "),
        "{err}"
    );
    assert!(
        err.ends_with(
            "registered: nothing\nnot registered: validate_song, build_features, \
             publish_features\n"
        ),
        "{err}"
    );
    // A bad URL is a usage error.
    let out = Command::new(example_binary())
        .args(["publish", "--conductor-url", "localhost:8080"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid Conductor URL"));
}

#[test]
fn the_binary_publishes_workflows_once_they_pass_the_check() {
    let server = TestServer::start();
    let dir = support::example_dir().join("workflows");
    let dir = dir.to_str().unwrap();
    let (code, out, err) = bin(&server, &["--workflows", dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("workflow agent_review version 1: new\n"),
        "{out}"
    );
    assert!(
        out.contains("workflow song_pipeline version 1: new\n"),
        "{out}"
    );
    assert!(out.ends_with("registered 2 WorkflowDef(s)\n"), "{out}");
    let stored: Vec<_> = server
        .workflow_defs()
        .iter()
        .map(|d| d["name"].clone())
        .collect();
    assert_eq!(stored, ["agent_review", "song_pipeline"]);

    // Published again: compared, nothing sent.
    server.clear_requests();
    let (code, out, err) = bin(&server, &["--workflows", dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("workflow song_pipeline version 1: unchanged\n"),
        "{out}"
    );
    assert!(out.ends_with("no WorkflowDef to send\n"), "{out}");
    assert!(
        server.requests().iter().all(|r| r.method == "GET"),
        "{:?}",
        requests(&server)
    );

    // A workflow that fails the check: nothing is sent, TaskDefs included.
    let fresh = TestServer::start();
    let planted = tempfile::tempdir().unwrap();
    let mut workflow: Value = serde_json::from_str(
        &std::fs::read_to_string(support::example_dir().join("workflows/song_pipeline.json"))
            .unwrap(),
    )
    .unwrap();
    workflow["tasks"][0]["inputParameters"]["params"]["min_rows"] = Value::from(3);
    std::fs::write(
        planted.path().join("song_pipeline.json"),
        workflow.to_string(),
    )
    .unwrap();
    let (code, out, err) = bin(&fresh, &["--workflows", planted.path().to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("/tasks/0/inputParameters/params/min_rows: error[unknown_field]"),
        "{err}"
    );
    assert!(err.contains("nothing was sent"), "{err}");
    assert!(fresh.requests().iter().all(|r| r.method == "GET"));
    assert!(fresh.taskdefs().is_empty() && fresh.workflow_defs().is_empty());
}

/// validate_song's TaskDef with its params schema changed by `change`, at the next version.
fn validate_song_changed(change: impl Fn(&mut Value)) -> TaskDef {
    let mut def = defs().remove(0);
    assert_eq!(def.name, "validate_song");
    let params = &mut def.input_schema.data["properties"]["params"];
    change(params);
    def.input_schema.version += 1;
    def
}

#[test]
fn a_breaking_schema_change_is_refused_naming_the_workflow_it_breaks() {
    let server = TestServer::start();
    publish_ok(&server, &defs(), Options::default());
    let pipeline: Value = serde_json::from_str(
        &std::fs::read_to_string(support::example_dir().join("workflows/song_pipeline.json"))
            .unwrap(),
    )
    .unwrap();
    client(&server).register_workflows(&[pipeline]).unwrap();

    // A compatible change under a raised version: a new optional param.
    let compatible = validate_song_changed(|p| {
        p["properties"]["region"] = serde_json::json!({"type": "string"});
    });
    let (text, report) = publish_ok(
        &server,
        std::slice::from_ref(&compatible),
        Options::default(),
    );
    assert_eq!(report.registered, ["validate_song"], "{text}");
    assert!(
        text.contains("property_added: NEW declares member `region`; OLD does not"),
        "{text}"
    );

    // A breaking one: the new param required. Refused, nothing sent.
    let breaking = validate_song_changed(|p| {
        p["properties"]["region"] = serde_json::json!({"type": "string"});
        p["required"] = serde_json::json!(["song_id", "region"]);
    });
    let breaking = {
        let mut b = breaking;
        b.input_schema.version = compatible.input_schema.version + 1;
        b
    };
    server.clear_requests();
    let (text, result) = publish_with(&server, std::slice::from_ref(&breaking), Options::default());
    let e = result.unwrap_err().to_string();
    assert!(
        e.starts_with("refusing to publish a breaking schema change, nothing was sent"),
        "{text}{e}"
    );
    assert!(e.contains("task `validate_song` inputSchema /properties/params: breaking: required_added: NEW requires `region`; OLD does not (e.g. {\"params\":"), "{e}");
    assert!(e.contains("registered WorkflowDef song_pipeline v1:/tasks/0/inputParameters/params/region: error[required]"), "{e}");
    assert!(
        server.requests().iter().all(|r| r.method == "GET"),
        "{:?}",
        requests(&server)
    );

    // Allowed: published, and reported all the same.
    let options = Options {
        allow_breaking: true,
        ..Options::default()
    };
    let (text, report) = publish_ok(&server, std::slice::from_ref(&breaking), options);
    assert_eq!(report.registered, ["validate_song"]);
    assert!(
        text.contains("publishing a breaking schema change (--allow-breaking):"),
        "{text}"
    );
    assert!(text.contains("error[required]"), "{text}");
}
