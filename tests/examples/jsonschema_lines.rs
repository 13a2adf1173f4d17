//! The peer of `perago validate --lines` in the whole-process benchmark (BENCHMARKS.md): the
//! same job done by a small program on the `jsonschema` crate. The schema file (and the
//! `*.json` files beside it, registered by `$id`) is compiled once; each line of standard input
//! is parsed and every error collected; one JSON object per line goes to standard output.
//!
//! `cargo build --release -p perago-tests --example jsonschema_lines`, then
//! `jsonschema_lines SCHEMA.json < docs.jsonl`.

use serde_json::Value;
use std::io::{BufRead, BufWriter, Write};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: jsonschema_lines SCHEMA.json");
    let path = std::path::Path::new(&path);
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("JSON")
    };
    let schema = read(path);
    let mut resources = Vec::new();
    for entry in std::fs::read_dir(path.parent().expect("a directory")).expect("a directory") {
        let p = entry.expect("an entry").path();
        if p.extension().is_some_and(|e| e == "json") {
            let v = read(&p);
            if let Some(id) = v.get("$id").and_then(Value::as_str) {
                resources.push((id.to_owned(), v));
            }
        }
    }
    let registry = jsonschema::Registry::new()
        .extend(resources)
        .and_then(|r| r.prepare())
        .expect("the schemas register");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&schema)
        .expect("jsonschema compiles the schema");
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    // Lines as bytes: a line that is not UTF-8 is malformed JSON, not the end of the input.
    for (i, line) in stdin.split(b'\n').enumerate() {
        let line = line.expect("readable input");
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let errors: Vec<String> = match serde_json::from_slice::<Value>(&line) {
            Ok(v) => validator
                .iter_errors(&v)
                .map(|e| format!("{}: {e}", e.instance_path().as_str()))
                .collect(),
            Err(e) => vec![format!("malformed JSON: {e}")],
        };
        let record =
            serde_json::json!({"line": i + 1, "valid": errors.is_empty(), "errors": errors});
        serde_json::to_writer(&mut out, &record).expect("stdout");
        out.write_all(b"\n").expect("stdout");
    }
}
