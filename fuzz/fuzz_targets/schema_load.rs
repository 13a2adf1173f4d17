//! The schema loader on arbitrary bytes: the bytes are a schema file (`fuzz.schema.json`),
//! loaded with `SchemaSet::load_sources` beside one fixed sibling file its `$ref`s may name.
//! Loading (parse, lint, normalise, build the IR) must return the set or a clear error, never
//! panic. When it loads:
//!
//! - generating Rust from it (`emit::emit`) must not panic either;
//! Before that, the interpreter (`Validator`, draft 2020-12 whole) compiles the same bytes or
//! refuses them with a message; when it compiles them, it validates the documents below from
//! their bytes and from their parsed values alike, its violations naming places in them.
//!
//! - the interpreter validates a few fixed small documents, and the schema text itself,
//!   against every root and `$defs` entry without panicking, and its violations name places in
//!   the document;
//! - every entry's standalone schema (`bundle::standalone`, what `Contract::SCHEMA` and the
//!   TaskDefs carry) loads on its own and gives the same violations for those documents (the
//!   same verdicts, where a part is deferred to the interpreter; an
//!   entry that admits any value bundles to annotations alone, which load as a file without a
//!   root: that is all it must do).

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago_codegen::emit;
use perago_fuzz::{check_violations, entry_points};
use perago_codegen::ir::Shape;
use perago_schema::{Error, Options, Validator};
use perago_codegen::{SchemaSet, bundle};
use serde_json::Value;

const SIBLING: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://perago.dev/fuzz/sibling.schema.json",
  "title": "Sibling",
  "type": "object",
  "properties": {
    "kind": { "const": "sibling" },
    "name": { "type": "string", "minLength": 1, "pattern": "^[a-z]+$" },
    "count": { "type": ["integer", "null"], "minimum": 0 }
  },
  "required": ["kind"],
  "$defs": {
    "Word": { "type": "string", "maxLength": 8 },
    "Tag": { "enum": ["a", "b", "c"] },
    "Node": {
      "type": "object",
      "properties": { "next": { "$ref": "#/$defs/Node" }, "tag": { "$ref": "#/$defs/Tag" } }
    }
  }
}"##;

const DOCUMENTS: &[&str] = &[
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "18446744073709551616",
    "\"\"",
    "\"a\"",
    "\"sibling\"",
    "[]",
    "[1, \"x\", null, {}]",
    "{}",
    "{\"kind\": \"sibling\", \"name\": \"ab\", \"count\": 3}",
    "{\"type\": \"circle\", \"a\": {\"b\": [1, 2]}, \"\": null}",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let documents: Vec<(&[u8], Option<Value>)> = DOCUMENTS
        .iter()
        .map(|d| d.as_bytes())
        .chain([data])
        .map(|d| (d, perago_schema::json::parse_strict_slice(d).ok()))
        .collect();
    // The interpreter takes draft 2020-12 whole, so far more than the set below: whatever it
    // makes of the bytes, a schema it compiles validates every document from bytes and from
    // the parsed value alike.
    match Validator::load_sources(
        [("fuzz.schema.json", text), ("sibling.schema.json", SIBLING)],
        "fuzz.schema.json",
        Options::default(),
    ) {
        Ok(validator) => {
            for (bytes, value) in &documents {
                let violations = validator.validate_slice(bytes);
                check_violations(value.as_ref(), &violations);
                if let Some(value) = value {
                    assert_eq!(
                        violations,
                        validator.validate_value(value),
                        "the interpreter: validate_slice and validate_value differ"
                    );
                }
            }
        }
        Err(e) => assert!(
            !e.to_string().trim().is_empty(),
            "the interpreter refuses without a message"
        ),
    }
    let set = match SchemaSet::load_sources([
        ("fuzz.schema.json", text),
        ("sibling.schema.json", SIBLING),
    ]) {
        Ok(set) => set,
        Err(e) => {
            if let Error::Lint(errors) = &e {
                assert!(!errors.is_empty(), "a lint failure without errors");
                for error in errors {
                    assert!(!error.message.is_empty(), "a lint error without a message");
                }
            }
            assert!(
                !e.to_string().trim().is_empty(),
                "an error without a message"
            );
            return;
        }
    };
    emit::emit(
        &set,
        &emit::Target {
            schemas: "fuzz",
            runtime: "perago",
            command: "fuzz",
        },
    );
    let interpreter = set
        .validator()
        .unwrap_or_else(|e| panic!("the interpreter refuses a schema the set takes: {e}"));
    for (label, id) in entry_points(&set) {
        let at = interpreter
            .at(&set.ir.node(id).location)
            .unwrap_or_else(|| panic!("{label}: not compiled"));
        let standalone = bundle::standalone(&set, id).to_string();
        let alone = SchemaSet::load_sources([("standalone.schema.json", standalone.as_str())])
            .unwrap_or_else(|e| {
                panic!("{label}: the standalone schema does not load: {e}\n{standalone}")
            });
        // A schema of annotations alone admits any value; as a file of its own it is read as
        // holding only `$defs` (no root), by design. No generated type has such a schema.
        let Some(alone_root) = alone.files[0].root else {
            assert!(
                matches!(set.ir.node(set.ir.resolve(id)).shape, Shape::Any),
                "{label}: the standalone schema has no root\n{standalone}"
            );
            continue;
        };
        let alone_at = alone
            .validator()
            .ok()
            .and_then(|v| v.at(&alone.ir.node(alone_root).location))
            .unwrap_or_else(|| panic!("{label}: the interpreter refuses the standalone schema"));
        // A part deferred to the interpreter is closed in its standalone form by
        // `unevaluatedProperties`, whose violations come after the others': there the verdict
        // is what must hold (it is what other validators of a TaskDef give).
        let deferred = set.ir.nodes().any(|(_, n)| n.deferred.is_some());
        for (bytes, value) in &documents {
            let violations = at.validate_slice(bytes);
            check_violations(value.as_ref(), &violations);
            let alone = alone_at.validate_slice(bytes);
            let text = String::from_utf8_lossy(bytes);
            match deferred {
                false => assert_eq!(
                    violations, alone,
                    "{label}: the set and the standalone schema differ on {text:?}"
                ),
                true => assert_eq!(
                    violations.is_empty(),
                    alone.is_empty(),
                    "{label}: the set and the standalone schema differ on {text:?}: {violations:?} / {alone:?}"
                ),
            }
        }
    }
});
