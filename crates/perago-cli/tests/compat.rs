//! `perago schemas compat` as a user runs it: a schema file and its next version, both ways
//! and as JSON; a file that is not a schema.

mod common;

use common::{code, perago_in, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

fn write(dir: &Path, name: &str, schema: &Value) {
    std::fs::write(
        dir.join(name),
        serde_json::to_string_pretty(schema).unwrap(),
    )
    .unwrap();
}

fn params(extra: Value) -> Value {
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Params",
        "type": "object",
        "properties": {"song_id": {"type": "string", "minLength": 1}},
        "required": ["song_id"]
    });
    for (k, v) in extra.as_object().unwrap() {
        schema[k] = v.clone();
    }
    schema
}

#[test]
fn a_new_optional_param_is_compatible_a_new_required_one_breaks() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.json", &params(json!({})));
    write(
        dir.path(),
        "optional.json",
        &params(
            json!({"properties": {"song_id": {"type": "string", "minLength": 1}, "region": {"type": "string"}}}),
        ),
    );
    write(
        dir.path(),
        "required.json",
        &params(
            json!({"properties": {"song_id": {"type": "string", "minLength": 1}, "region": {"type": "string"}}, "required": ["song_id", "region"]}),
        ),
    );
    let out = perago_in(
        dir.path(),
        &["schemas", "compat", "old.json", "optional.json"],
        b"",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "/: compatible: property_added: NEW declares member `region`; OLD does not at $.region\ncompatible as input\n"
    );
    let out = perago_in(
        dir.path(),
        &["schemas", "compat", "old.json", "required.json"],
        b"",
    );
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).starts_with("/: breaking: required_added: NEW requires `region`; OLD does not at $.region (e.g. {\"song_id\":"), "{}", stdout(&out));
    // As a result, the new member is what breaks: consumers of the old closed shape refuse it.
    let out = perago_in(
        dir.path(),
        &[
            "schemas",
            "compat",
            "--as",
            "output",
            "--format",
            "json",
            "old.json",
            "optional.json",
        ],
        b"",
    );
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["compatible"], json!(false));
    assert_eq!(report["direction"], json!("output"));
    let change = &report["changes"][0];
    assert_eq!(change["code"], json!("property_added"));
    assert_eq!(change["breaking"], json!(true));
    assert_eq!(change["pointer"], json!(""));
    let witness = change["witness"].as_object().expect("a witness");
    assert!(witness.contains_key("region"), "{witness:?}");
}

#[test]
fn an_unusable_schema_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.json", &params(json!({})));
    std::fs::write(dir.path().join("broken.json"), "{\"type\": ").unwrap();
    let out = perago_in(
        dir.path(),
        &["schemas", "compat", "old.json", "broken.json"],
        b"",
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("perago: broken.json: "),
        "{}",
        stderr(&out)
    );
    let out = perago_in(dir.path(), &["schemas", "compat", "old.json"], b"");
    assert_eq!(code(&out), 2);
    // The listing of built-in schemas is unchanged.
    let out = perago_in(dir.path(), &["schemas"], b"");
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("worker-completion.v1"));
}
