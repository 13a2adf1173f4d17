//! `/api/schema` (`docs/src/reference/conductor.md` §2.5): save (list or bare object, newVersion), list,
//! get latest / by version, delete, 404 bodies, and the registry switched off.

use crate::support::Client;
use perago_testserver::{Options, TestServer};
use serde_json::{Value, json};

fn schema(name: &str, version: i64) -> Value {
    json!({"name": name, "version": version, "type": "JSON", "data": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}})
}

fn start() -> (TestServer, Client) {
    let server = TestServer::start();
    let client = Client::new(&server.base_url());
    (server, client)
}

#[test]
fn save_list_and_get() {
    let (server, client) = start();
    let answer = client.post_json(
        "/api/schema",
        &json!([schema("a_input", 1), schema("a_input", 2)]),
    );
    assert_eq!((answer.status, answer.body.as_str()), (200, ""));
    // A bare object is accepted too (accept-single-value-as-array).
    assert_eq!(
        client
            .post_json("/api/schema", &schema("b_output", 1))
            .status,
        200
    );

    let all = client.get("/api/schema").json();
    let keys: Vec<(Value, Value)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].clone(), s["version"].clone()))
        .collect();
    assert_eq!(
        keys,
        vec![
            (json!("a_input"), json!(1)),
            (json!("a_input"), json!(2)),
            (json!("b_output"), json!(1))
        ]
    );
    assert_eq!(server.schemas().len(), 3);

    let latest = client.get("/api/schema/a_input").json();
    assert_eq!(latest["version"], 2);
    assert_eq!(latest["type"], "JSON");
    assert!(latest["createTime"].as_i64().unwrap() > 0);
    assert_eq!(latest["updateTime"], 0);
    assert_eq!(latest["data"]["type"], "object");
    assert_eq!(client.get("/api/schema/a_input/1").json()["version"], 1);

    let short = client.get("/api/schema?short=true").json();
    assert_eq!(
        short[0],
        json!({"createTime": 0, "updateTime": 0, "name": "a_input", "version": 1})
    );
}

#[test]
fn upsert_keeps_create_time_and_new_version_appends() {
    let (server, client) = start();
    assert_eq!(
        client
            .post_json("/api/schema", &json!([schema("s", 1)]))
            .status,
        200
    );
    let created = client.get("/api/schema/s/1").json()["createTime"].clone();
    let mut changed = schema("s", 1);
    changed["data"] = json!({"type": "string"});
    assert_eq!(
        client.post_json("/api/schema", &json!([changed])).status,
        200
    );
    let again = client.get("/api/schema/s/1").json();
    assert_eq!(again["createTime"], created);
    assert!(again["updateTime"].as_i64().unwrap() > 0);
    assert_eq!(again["data"], json!({"type": "string"}));

    assert_eq!(
        client
            .post_json("/api/schema?newVersion=true", &json!([schema("s", 1)]))
            .status,
        200
    );
    assert_eq!(client.get("/api/schema/s").json()["version"], 2);
    // Version < 1 is stored as 1.
    assert_eq!(
        client
            .post_json("/api/schema", &json!([schema("z", 0)]))
            .status,
        200
    );
    assert_eq!(client.get("/api/schema/z").json()["version"], 1);
    assert_eq!(server.schemas().len(), 3);
}

#[test]
fn missing_schemas_are_404_with_conductors_messages() {
    let (_server, client) = start();
    let answer = client.get("/api/schema/nope");
    assert_eq!(answer.status, 404);
    assert_eq!(
        answer.json(),
        json!({"status": 404, "message": "No such schema found by name nope", "instance": "perago-testserver", "retryable": false})
    );
    assert_eq!(
        client.get("/api/schema/nope/3").json()["message"],
        "No such schema found by name nope and version 3"
    );
    assert_eq!(client.delete("/api/schema/nope").status, 404);
    assert_eq!(client.delete("/api/schema/nope/1").status, 404);
    assert_eq!(client.get("/api/schema/nope/x").status, 500);
}

#[test]
fn blank_name_is_400_and_earlier_elements_stay_saved() {
    let (server, client) = start();
    let answer = client.post_json(
        "/api/schema",
        &json!([schema("first", 1), {"type": "JSON"}]),
    );
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["message"], "Schema name cannot be blank");
    assert_eq!(server.schemas().len(), 1);
    assert_eq!(client.post("/api/schema", "{").status, 500);
}

#[test]
fn delete_one_version_or_all() {
    let (server, client) = start();
    client.post_json(
        "/api/schema",
        &json!([schema("d", 1), schema("d", 2), schema("e", 1)]),
    );
    assert_eq!(client.delete("/api/schema/d/2").status, 200);
    assert_eq!(client.get("/api/schema/d").json()["version"], 1);
    assert_eq!(client.delete("/api/schema/d").status, 200);
    assert_eq!(client.get("/api/schema/d").status, 404);
    assert_eq!(server.schemas().len(), 1);
}

#[test]
fn registry_off_answers_404_everywhere_like_oss_before_3_33() {
    let server = TestServer::start_with(Options {
        schema_registry: false,
        ..Options::default()
    });
    let client = Client::new(&server.base_url());
    for answer in [
        client.post_json("/api/schema", &json!([schema("a", 1)])),
        client.get("/api/schema"),
        client.get("/api/schema/a"),
        client.get("/api/schema/a/1"),
        client.delete("/api/schema/a"),
    ] {
        assert_eq!(answer.status, 404, "{}", answer.body);
        assert_eq!(answer.json()["error"], "Not Found");
    }
    assert!(server.schemas().is_empty());
}
