//! What the fuzz targets share: the schema sets they validate against, loaded once, and the
//! properties every violation list must have.

use perago_schema::json::{parse_strict_slice, parse_value};
use perago_schema::{Code, Violation};
use perago_codegen::{NodeId, SchemaSet};
use perago_tests::schemas::KITCHEN_SINK;
use serde_json::Value;
use std::sync::LazyLock;

/// The example crate's schema files, as `(file name, text)`.
pub const EXAMPLE_SCHEMAS: &[(&str, &str)] = &[
    (
        "build-features-params.schema.json",
        include_str!("../../crates/perago-example/schemas/build-features-params.schema.json"),
    ),
    (
        "build-features-result.schema.json",
        include_str!("../../crates/perago-example/schemas/build-features-result.schema.json"),
    ),
    (
        "validate-song-params.schema.json",
        include_str!("../../crates/perago-example/schemas/validate-song-params.schema.json"),
    ),
    (
        "validate-song-result.schema.json",
        include_str!("../../crates/perago-example/schemas/validate-song-result.schema.json"),
    ),
];

/// perago's contract schemas (the runtime's envelopes, worker-completion/v1) and the example
/// crate's, in one set: the IR the generated types of these crates were emitted from.
pub static CONTRACTS: LazyLock<SchemaSet> = LazyLock::new(|| {
    let contracts = perago_tests::schemas::contract_sources();
    SchemaSet::load_sources(contracts.into_iter().chain(EXAMPLE_SCHEMAS.iter().copied()))
        .unwrap_or_else(|e| panic!("the contract schemas load: {e}"))
});

/// The kitchen-sink schema alone.
pub static KITCHEN: LazyLock<SchemaSet> = LazyLock::new(|| {
    SchemaSet::load_sources([("kitchen-sink.schema.json", KITCHEN_SINK)])
        .unwrap_or_else(|e| panic!("the kitchen-sink schema loads: {e}"))
});

/// The schemas written as users write them (`tests/user-schemas/`): tagged unions with inline
/// `const`s, maps, bounds, patterns.
pub static USER: LazyLock<SchemaSet> = LazyLock::new(perago_tests::user_corpus::schemas);

/// Every root and `$defs` entry of a set, with a label.
pub fn entry_points(set: &SchemaSet) -> Vec<(String, NodeId)> {
    let mut out = Vec::new();
    for file in &set.files {
        if let Some(root) = file.root {
            out.push((format!("{}#", file.file), root));
        }
        for (name, id) in &file.defs {
            out.push((format!("{}#/$defs/{name}", file.file), *id));
        }
    }
    out
}

/// The strict parse of `data`, `None` when it is not strict JSON; when it is, the lenient
/// parser (`parse_value`) must parse it to the same value.
pub fn parse(data: &[u8]) -> Option<Value> {
    let strict = parse_strict_slice(data).ok();
    if let Some(strict) = &strict {
        assert_eq!(
            Some(strict),
            parse_value(data).ok().as_ref(),
            "the strict parser accepts what parse_value parses differently"
        );
    }
    strict
}

/// What every violation list must satisfy for a document, `doc` being its strict parse
/// (`None` when the bytes are not strict JSON):
///
/// - not strict JSON: exactly one violation, `malformed_json` at `$` or `duplicate_field` at
///   the repeated key;
/// - strict JSON: no `malformed_json` or `duplicate_field`, and every path is a JSONPath that
///   names a place in the document: the value itself or, for `required`, a missing member of
///   an object that is there;
/// - every message is non-empty.
pub fn check_violations(doc: Option<&Value>, violations: &[Violation]) {
    for v in violations {
        assert!(!v.message.is_empty(), "empty message: {v:?}");
    }
    let Some(doc) = doc else {
        assert!(
            matches!(violations, [v] if (v.code == Code::MalformedJson && v.path == "$")
                || v.code == Code::DuplicateField),
            "not strict JSON, but not exactly one malformed_json or duplicate_field: \
             {violations:?}"
        );
        return;
    };
    for v in violations {
        assert!(
            !matches!(v.code, Code::MalformedJson | Code::DuplicateField),
            "a parsed document reported as unparsable: {v:?}"
        );
        let pointer = perago_tests::mutate::jsonpath_to_pointer(&v.path)
            .unwrap_or_else(|| panic!("unparsable violation path {:?}", v.path));
        if v.code == Code::Required {
            let (parent, _) = pointer
                .rsplit_once('/')
                .unwrap_or_else(|| panic!("required at the root: {v:?}"));
            assert!(
                doc.pointer(parent).is_some_and(Value::is_object)
                    && doc.pointer(&pointer).is_none(),
                "required {:?}: not a missing member of an object in the document",
                v.path
            );
        } else {
            assert!(
                doc.pointer(&pointer).is_some(),
                "violation at {:?} ({}) names no place in the document",
                v.path,
                v.code
            );
        }
    }
}
