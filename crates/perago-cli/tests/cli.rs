//! Runs the built `perago` binary.
//!
//! The 100 MB document of the brief was checked by hand; the large-document test here uses
//! about 20 MB to keep the suite quick.

mod common;

use common::{code, perago_in, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const VALID: &str =
    r#"{"repository":"song-1","branch":"main","ref_type":"commit","ref":"589f877"}"#;

fn perago_with_stdin(args: &[&str], dir: &Path, stdin: &[u8]) -> Output {
    perago_in(dir, args, stdin)
}

fn perago(args: &[&str], dir: &Path) -> Output {
    perago_in(dir, args, b"")
}

/// The JSON objects of `--format json` output, one per line.
fn json_lines(output: &Output) -> Vec<Value> {
    perago_testserver::process::json_lines(&stdout(output))
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), text).expect("write a test file");
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn valid_documents_exit_0_with_only_a_summary() {
    let dir = temp();
    write(dir.path(), "a.json", VALID);
    write(dir.path(), "b.json", format!("\n{VALID}\n"));
    let out = perago(
        &[
            "validate",
            "--schema",
            "workspace-input",
            "a.json",
            "b.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "2 documents valid\n");
}

#[test]
fn schema_by_id_and_by_short_name() {
    let dir = temp();
    write(dir.path(), "a.json", VALID);
    for schema in [
        "workspace-input",
        "https://perago.dev/schemas/workspace-input.schema.json",
    ] {
        let out = perago(&["validate", "--schema", schema, "a.json"], dir.path());
        assert_eq!(code(&out), 0, "{schema}: {}", stderr(&out));
    }
    write(
        dir.path(),
        "c.json",
        r#"{"summary": "done", "files_changed": ["src/lib.rs"]}"#,
    );
    let out = perago(
        &["validate", "-s", "worker-completion.v1", "c.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn text_output_gives_the_line_of_each_violation() {
    let dir = temp();
    let doc = "{\n  \"repository\": \"r\",\n  \"branch\": \"\",\n  \"ref_type\": \"tag\",\n  \"extra\": {\"a\": [1,\n 2]},\n  \"odd key\": 1\n}\n";
    write(dir.path(), "bad.json", doc);
    let out = perago(
        &["validate", "--schema", "workspace-input", "bad.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "bad.json:5: $.extra: unknown field",
            "bad.json:7: $['odd key']: unknown field",
            "bad.json:3: $.branch: must be at least 1 character long",
            "bad.json:4: $.ref_type: must be \"commit\"",
            // Absent: the line of the object that lacks it.
            "bad.json:1: $.ref: required field is missing",
        ]
    );
    assert_eq!(stderr(&out), "1 document, 1 invalid\n");
}

#[test]
fn json_output_has_one_object_per_document() {
    let dir = temp();
    write(dir.path(), "good.json", VALID);
    write(
        dir.path(),
        "bad.json",
        r#"{"repository": "r", "branch": "main", "ref_type": "commit"}"#,
    );
    let out = perago(
        &[
            "validate",
            "--schema",
            "workspace-input",
            "--format",
            "json",
            "good.json",
            "bad.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out), "");
    let docs = json_lines(&out);
    assert_eq!(docs.len(), 2);
    assert_eq!(
        docs[0],
        serde_json::json!({"file": "good.json", "valid": true, "violations": []})
    );
    assert_eq!(
        docs[1],
        serde_json::json!({
            "file": "bad.json",
            "valid": false,
            "violations": [{"path": "$.ref", "code": "required", "message": "required field is missing"}]
        })
    );
}

#[test]
fn reads_standard_input_with_no_file_or_dash() {
    let dir = temp();
    for args in [
        &["validate", "-s", "workspace-input"][..],
        &["validate", "-s", "workspace-input", "-"],
    ] {
        let out = perago_with_stdin(args, dir.path(), VALID.as_bytes());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let out = perago_with_stdin(
            args,
            dir.path(),
            b"{\"repository\": 1,\n \"branch\": \"b\", \"ref_type\": \"commit\", \"ref\": \"r\"}",
        );
        assert_eq!(code(&out), 1);
        assert_eq!(
            stdout(&out),
            "<stdin>:1: $.repository: must be a string, found an integer\n"
        );
    }
}

#[test]
fn json_lines_report_the_line_of_each_document() {
    let dir = temp();
    let input = format!("{VALID}\n\n  \n{{\"repository\": 1}}\r\n{VALID}\n{{oops\n{VALID}");
    write(dir.path(), "docs.jsonl", &input);
    let out = perago(
        &["validate", "-s", "workspace-input", "--lines", "docs.jsonl"],
        dir.path(),
    );
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(
        lines[0],
        "docs.jsonl:4: $.repository: must be a string, found an integer"
    );
    assert!(
        lines[1..4].iter().all(
            |l| l.starts_with("docs.jsonl:4: $.") && l.ends_with(": required field is missing")
        )
    );
    assert!(
        lines[4].starts_with("docs.jsonl:6: $: malformed JSON: "),
        "{}",
        lines[4]
    );
    assert_eq!(stderr(&out), "5 documents, 2 invalid\n");

    let out = perago_with_stdin(
        &[
            "validate",
            "-s",
            "workspace-input",
            "--lines",
            "--format",
            "json",
        ],
        dir.path(),
        input.as_bytes(),
    );
    assert_eq!(code(&out), 1);
    let docs = json_lines(&out);
    let summary: Vec<(&str, u64, bool)> = docs
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
                d["valid"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("<stdin>", 1, true),
            ("<stdin>", 4, false),
            ("<stdin>", 5, true),
            ("<stdin>", 6, false),
            ("<stdin>", 7, true)
        ]
    );
    assert_eq!(docs[3]["violations"][0]["code"], "malformed_json");
}

#[test]
fn malformed_documents_are_violations_at_the_root() {
    let dir = temp();
    write(dir.path(), "trunc.json", "{\n  \"repository\": \"r\",\n");
    write(dir.path(), "empty.json", "");
    write(dir.path(), "latin1.json", b"{\"repository\": \"caf\xe9\"}");
    write(dir.path(), "trailing.json", format!("{VALID} {VALID}"));
    let files = ["trunc.json", "empty.json", "latin1.json", "trailing.json"];
    let mut args = vec!["validate", "-s", "workspace-input"];
    args.extend(files);
    let out = perago(&args, dir.path());
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    // The line is where the parser stopped.
    assert!(
        lines[0].starts_with("trunc.json:3: $: malformed JSON: EOF while parsing"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("empty.json:1: $: malformed JSON: "),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("latin1.json:1: $: malformed JSON: "),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("trailing.json:1: $: malformed JSON: trailing characters"),
        "{}",
        lines[3]
    );

    args.extend(["--format", "json"]);
    let out = perago(&args, dir.path());
    for doc in json_lines(&out) {
        assert_eq!(doc["valid"], false);
        assert_eq!(doc["violations"][0]["path"], "$");
        assert_eq!(doc["violations"][0]["code"], "malformed_json");
    }
}

#[test]
fn deep_nesting_is_a_malformed_document_not_a_crash() {
    let dir = temp();
    write(dir.path(), "deep.json", "[".repeat(10_000));
    write(
        dir.path(),
        "deep-closed.json",
        format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
    );
    let out = perago(
        &[
            "validate",
            "-s",
            "workspace-input",
            "--format",
            "json",
            "deep.json",
            "deep-closed.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let docs = json_lines(&out);
    assert_eq!(docs.len(), 2);
    for doc in docs {
        assert_eq!(doc["violations"][0]["code"], "malformed_json", "{doc}");
    }
    let out = perago_with_stdin(
        &["validate", "-s", "workspace-input", "--lines"],
        dir.path(),
        "[".repeat(10_000).as_bytes(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("<stdin>:1: $: malformed JSON: recursion limit exceeded"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_large_document_is_validated_and_located() {
    let dir = temp();
    // About 20 MB: a long list of paths, one of them blank, on its own line near the end.
    let mut doc = String::from("{\"summary\": \"done\",\n\"files_changed\": [\n");
    let count = 1_000_000;
    for i in 0..count {
        doc.push_str(if i == count - 2 {
            "\" \",\n"
        } else {
            "\"src/some/module/file.rs\",\n"
        });
    }
    doc.push_str("\"last\"\n]}\n");
    assert!(doc.len() > 20_000_000);
    write(dir.path(), "big.json", &doc);
    let out = perago(
        &["validate", "-s", "worker-completion.v1", "big.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    // Element i is on line i + 3.
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let prefix = format!("big.json:{}: $.files_changed[{}]: ", count + 1, count - 2);
    assert!(text.starts_with(&prefix), "{text}");
}

#[test]
fn a_user_schema_file_may_ref_a_sibling_file() {
    let dir = temp();
    write(
        dir.path(),
        "order.schema.json",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/order.schema.json",
  "type": "object",
  "properties": {
    "id": {"type": "integer", "minimum": 1},
    "customer": {"$ref": "customer.schema.json#/$defs/Customer"}
  },
  "required": ["id", "customer"]
}"##,
    );
    write(
        dir.path(),
        "customer.schema.json",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/customer.schema.json",
  "$defs": {
    "Customer": {
      "type": "object",
      "properties": {"name": {"type": "string", "minLength": 1}},
      "required": ["name"]
    }
  }
}"##,
    );
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    write(
        dir.path(),
        "docs/ok.json",
        r#"{"id": 1, "customer": {"name": "Ada"}}"#,
    );
    write(
        dir.path(),
        "docs/bad.json",
        "{\"id\": 0,\n \"customer\":\n  {\"name\": \"\"}}",
    );
    let out = perago(
        &[
            "validate",
            "--schema",
            "order.schema.json",
            "docs/ok.json",
            "docs/bad.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("docs/bad.json:1: $.id: "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("docs/bad.json:3: $.customer.name: "),
        "{}",
        lines[1]
    );

    // A schema file given by a path from elsewhere finds its sibling too.
    let out = perago(
        &["validate", "--schema", "../order.schema.json", "ok.json"],
        &dir.path().join("docs"),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // A file that only holds $defs has nothing to validate against.
    let out = perago(
        &[
            "validate",
            "--schema",
            "customer.schema.json",
            "docs/ok.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("perago: customer.schema.json: "),
        "{}",
        stderr(&out)
    );
}

/// Draft 2020-12 beyond what generated types cover: `allOf` of a base and an extension,
/// `if`/`then`, `format`, `dependentRequired`, string-or-integer ids, and closed objects.
#[test]
fn a_2020_12_schema_beyond_the_codegen_subset_validates() {
    let dir = temp();
    write(
        dir.path(),
        "event.schema.json",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$defs": {"base": {"$anchor": "base", "properties": {"id": {"type": ["string", "integer"]}}, "required": ["id"]}},
  "allOf": [{"$ref": "#base"}],
  "properties": {
    "status": {"enum": ["OK", "FAILED"]},
    "reason": {"type": "string"},
    "at": {"type": "string", "format": "date-time"}
  },
  "if": {"properties": {"status": {"const": "FAILED"}}, "required": ["status"]},
  "then": {"required": ["reason"]},
  "dependentRequired": {"reason": ["status"]}
}"##,
    );
    write(
        dir.path(),
        "docs.jsonl",
        concat!(
            "{\"id\": 7, \"status\": \"OK\", \"at\": \"2026-12-01T21:30:00Z\"}\n",
            "{\"id\": \"a\", \"status\": \"FAILED\"}\n",
            "{\"id\": 1.5, \"at\": \"yesterday\", \"extra\": true}\n",
        ),
    );
    let out = perago(
        &[
            "validate",
            "--schema",
            "event.schema.json",
            "--lines",
            "docs.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "docs.jsonl:2: $.reason: required field is missing\n\
         docs.jsonl:3: $.at: must be a date-time (RFC 3339, e.g. 2026-12-01T21:30:00Z)\n\
         docs.jsonl:3: $.id: must be a string or an integer, found a number\n\
         docs.jsonl:3: $.extra: unknown field\n"
    );
}

#[test]
fn an_unsupported_schema_is_a_usage_error() {
    let dir = temp();
    write(
        dir.path(),
        "all.schema.json",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"a": {"$dynamicRef": "#node"}}
}"##,
    );
    write(dir.path(), "doc.json", "{}");
    let out = perago(
        &["validate", "--schema", "all.schema.json", "doc.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.starts_with("perago: all.schema.json#/properties/a: `$dynamicRef`: "),
        "{err}"
    );

    // A reference that would need the network is refused, saying so.
    write(
        dir.path(),
        "remote.schema.json",
        r#"{"properties": {"a": {"$ref": "https://example.com/elsewhere.json"}}}"#,
    );
    let out = perago(
        &["validate", "--schema", "remote.schema.json", "doc.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("perago does not fetch schemas over the network"),
        "{}",
        stderr(&out)
    );

    write(dir.path(), "broken.schema.json", "{");
    let out = perago(
        &["validate", "--schema", "broken.schema.json", "doc.json"],
        dir.path(),
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("perago: broken.schema.json: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = temp();
    write(dir.path(), "a.json", VALID);
    let cases: [&[&str]; 6] = [
        &[],
        &["bogus"],
        &["validate", "a.json"],
        &[
            "validate",
            "-s",
            "workspace-input",
            "--format",
            "yaml",
            "a.json",
        ],
        &["validate", "-s", "no-such-schema", "a.json"],
        &["validate", "-s", "task-failure", "a.json"],
    ];
    for args in cases {
        let out = perago(args, dir.path());
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }

    // A missing file is reported; the others are still validated.
    let out = perago(
        &[
            "validate",
            "-s",
            "workspace-input",
            "--format",
            "json",
            "missing.json",
            "a.json",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("perago: missing.json: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(json_lines(&out).len(), 1);

    let out = perago(&["--help"], dir.path());
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("validate"));
}

#[test]
fn lists_the_builtin_schemas() {
    let dir = temp();
    let out = perago(&["schemas"], dir.path());
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("workspace-input "))
        .expect("workspace-input is listed");
    let columns: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "workspace-input",
            "https://perago.dev/schemas/workspace-input.schema.json",
            "WorkspaceInput"
        ]
    );
    // The runtime's schemas and worker-completion/v1.
    assert_eq!(text.lines().count(), perago::schemas::BUILTIN.len() + 1);

    let out = perago(&["schemas", "--format", "json"], dir.path());
    assert_eq!(code(&out), 0);
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), perago::schemas::BUILTIN.len() + 1);
    assert!(list.contains(&serde_json::json!({
        "name": "worker-completion.v1",
        "id": "https://perago.dev/schemas/worker-completion.v1.schema.json",
        "title": "WorkerCompletionV1",
        "file": "worker-completion.v1.schema.json"
    })));
}

/// `perago codegen` names on standard error each part it leaves to the interpreter, and why;
/// a part typed rule by rule is not named, and `--check` writes no notes.
#[test]
fn codegen_names_the_parts_deferred_to_the_interpreter() {
    let dir = temp();
    std::fs::create_dir(dir.path().join("schemas")).expect("a schemas directory");
    write(
        dir.path(),
        "schemas/item.schema.json",
        r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "id": {"type": ["string", "array"]},
    "code": {"type": "string", "not": {"const": "x"}},
    "name": {"type": "string"}
  }
}"#,
    );
    let out = perago(
        &["codegen", "--schemas", "schemas", "--out", "contracts"],
        dir.path(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(
        notes,
        [
            "note: item.schema.json#/properties/code is deferred to the interpreter at run time: `not` applies a schema to the typed value",
            "note: item.schema.json#/properties/id is deferred to the interpreter at run time: `type`: generated code types one JSON type, [T, \"null\"], or scalar types none of which overlaps another (`integer` does `number`), found [\"string\",\"array\"]; kept as a `serde_json::Value`",
        ],
        "{err}"
    );
    let check = perago(
        &[
            "codegen",
            "--schemas",
            "schemas",
            "--out",
            "contracts",
            "--check",
        ],
        dir.path(),
    );
    assert_eq!(code(&check), 0, "{}", stderr(&check));
    assert!(!stderr(&check).contains("note:"), "{}", stderr(&check));
}

/// JSON Lines at the edges of JSON: numbers (64-bit bounds, `-0`, exponents, out of range),
/// escapes and lone surrogates, invalid UTF-8, a control character, repeated keys (one of
/// them escaped), nesting at and past the parser's limit, a byte order mark, trailing text,
/// blank lines (empty, spaces, a lone CR), CRLF and a last line with no newline. The text
/// report is the one `perago` gave before the interpreter read bytes itself; the JSON report
/// says the same of each line.
#[test]
fn lines_at_the_edges_of_json_are_reported_as_before() {
    let dir = temp();
    write(
        dir.path(),
        "schema.json",
        r#"{"type": "object", "additionalProperties": false, "properties": {
            "n": {"type": "integer", "maximum": 10}, "f": {"type": "number", "minimum": 0},
            "s": {"type": "string", "maxLength": 3}, "x": {}}}"#,
    );
    let deep = |n: usize, open: &str, close: &str| {
        format!("{{\"x\": {}1{}}}", open.repeat(n), close.repeat(n)).into_bytes()
    };
    let lines: Vec<Vec<u8>> = vec![
        br#"{"n": 1}"#.to_vec(),
        br#"{"n": 18446744073709551615}"#.to_vec(),
        br#"{"n": 18446744073709551616}"#.to_vec(),
        br#"{"n": -9223372036854775808, "f": -9223372036854775809}"#.to_vec(),
        br#"{"n": 12345678901234567890123}"#.to_vec(),
        br#"{"n": -0, "f": -0}"#.to_vec(),
        br#"{"n": -0.0, "f": -0.0}"#.to_vec(),
        br#"{"n": 1.0, "f": 1E2}"#.to_vec(),
        br#"{"n": 1e2, "f": 2.5e-3}"#.to_vec(),
        br#"{"n": 1e400}"#.to_vec(),
        br#"{"f": 1e-400}"#.to_vec(),
        br#"{"f": 0.1e1, "n": 100000000000000000000000000000e-20}"#.to_vec(),
        br#"{"n": 01}"#.to_vec(),
        br#"{"s": "\ud800"}"#.to_vec(),
        br#"{"s": "\udc00x"}"#.to_vec(),
        br#"{"s": "\ud83d\ude00\u00e9"}"#.to_vec(),
        br#"{"s": "ab", "s": "c"}"#.to_vec(),
        br#"{"s": "a", "\u0073": "c"}"#.to_vec(),
        b"{\"s\": \"\xff\"}".to_vec(),
        b"{\"\xc3\": 1}".to_vec(),
        b"{\"s\": \"tab\there\"}".to_vec(),
        br#"{"s": "\t\n\"\\/"}"#.to_vec(),
        b"".to_vec(),
        b"\r".to_vec(),
        b"   ".to_vec(),
        deep(126, "[", "]"),
        deep(127, "[", "]"),
        deep(200, "{\"a\":", "}"),
        b"{\"n\": 2}\r".to_vec(),
        b"\xef\xbb\xbf{\"n\": 1}".to_vec(),
        br#"{"n": 1} x"#.to_vec(),
        br#"{"n": 1,}"#.to_vec(),
        br#"{"odd \"key\"": 1, "n": "\u0000"}"#.to_vec(),
        b"[]".to_vec(),
        br#"{"n": 0.5}"#.to_vec(),
    ];
    // The last line ends the file without a newline.
    write(dir.path(), "edge.jsonl", lines.join(&b'\n'));
    let out = perago(
        &[
            "validate",
            "--schema",
            "schema.json",
            "--lines",
            "edge.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text,
        "edge.jsonl:2: $.n: must be <= 10
edge.jsonl:2: $.n: integer does not fit in a signed 64-bit value
edge.jsonl:3: $.n: must be <= 10
edge.jsonl:3: $.n: integer does not fit in a signed 64-bit value
edge.jsonl:4: $.f: must be >= 0
edge.jsonl:5: $.n: must be <= 10
edge.jsonl:5: $.n: integer does not fit in a signed 64-bit value
edge.jsonl:9: $.n: must be <= 10
edge.jsonl:10: $: malformed JSON: number out of range at line 1 column 11
edge.jsonl:12: $.n: must be <= 10
edge.jsonl:13: $: malformed JSON: invalid number at line 1 column 8
edge.jsonl:14: $: malformed JSON: unexpected end of hex escape at line 1 column 14
edge.jsonl:15: $: malformed JSON: lone leading surrogate in hex escape at line 1 column 13
edge.jsonl:17: $.s: duplicate field
edge.jsonl:18: $.s: duplicate field
edge.jsonl:19: $: malformed JSON: invalid unicode code point at line 1 column 8
edge.jsonl:20: $: malformed JSON: invalid unicode code point at line 1 column 3
edge.jsonl:21: $: malformed JSON: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 11
edge.jsonl:22: $.s: must be at most 3 characters long
edge.jsonl:27: $: malformed JSON: recursion limit exceeded at line 1 column 133
edge.jsonl:28: $: malformed JSON: recursion limit exceeded at line 1 column 637
edge.jsonl:30: $: malformed JSON: the document starts with a byte order mark (U+FEFF), which JSON does not allow: save it as UTF-8 without a BOM
edge.jsonl:31: $: malformed JSON: trailing characters at line 1 column 10
edge.jsonl:32: $: malformed JSON: trailing comma at line 1 column 9
edge.jsonl:33: $['odd \"key\"']: unknown field
edge.jsonl:33: $.n: must be an integer, found a string
edge.jsonl:34: $: must be an object, found an array
edge.jsonl:35: $.n: must be an integer, found a number
"
    );
    assert_eq!(stderr(&out), "32 documents, 24 invalid\n");

    let out = perago(
        &[
            "validate",
            "--schema",
            "schema.json",
            "--lines",
            "--format",
            "json",
            "edge.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let docs = json_lines(&out);
    let numbers: Vec<u64> = docs.iter().map(|d| d["line"].as_u64().unwrap()).collect();
    let blank = [23, 24, 25];
    assert_eq!(
        numbers,
        (1..=35)
            .filter(|n| !blank.contains(n))
            .collect::<Vec<u64>>()
    );
    let mut said = String::new();
    for doc in &docs {
        let violations = doc["violations"].as_array().unwrap();
        assert_eq!(doc["valid"], violations.is_empty(), "{doc}");
        for v in violations {
            let (path, message) = (v["path"].as_str().unwrap(), v["message"].as_str().unwrap());
            said.push_str(&format!("edge.jsonl:{}: {path}: {message}\n", doc["line"]));
        }
    }
    assert_eq!(said, text);
}
