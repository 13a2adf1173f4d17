//! Every lint rule, as the schema author sees it: the `Display` of the error, snapshotted.
//! Plus the positive side: every supported keyword loads, `$ref`s cross files, files load from
//! disk.

use insta::assert_snapshot;
use perago_codegen::ir::{Kind, Shape};
use perago_codegen::{NodeId, SchemaSet};
use perago_schema::one_of::Test;
use perago_schema::{DIALECT, Error};
use serde_json::{Map, Value, json};
use std::fs;

/// A schema file's text: `$schema` first, then `body`.
fn schema(body: Value) -> String {
    let mut map = Map::new();
    map.insert("$schema".to_owned(), json!(DIALECT));
    map.extend(
        body.as_object()
            .expect("a schema body is an object")
            .clone(),
    );
    serde_json::to_string_pretty(&Value::Object(map)).unwrap()
}

/// Loads in-memory files that must fail; the errors as the author sees them.
fn errors(files: &[(&str, String)]) -> String {
    match SchemaSet::load_sources(files.iter().map(|(name, text)| (*name, text.as_str()))) {
        Ok(_) => panic!("expected lint errors, but the schemas loaded"),
        Err(e) => e.to_string(),
    }
}

/// One file `a.schema.json` with `$schema` and `body`, which must fail.
fn lint(body: Value) -> String {
    errors(&[("a.schema.json", schema(body))])
}

/// One raw file text, which must fail.
fn lint_text(text: &str) -> String {
    errors(&[("a.schema.json", text.to_owned())])
}

/// Loads in-memory files: their lint errors, or, when they load, every schema generated code
/// defers to the interpreter, and why.
fn outcomes(files: &[(&str, String)]) -> String {
    match SchemaSet::load_sources(files.iter().map(|(name, text)| (*name, text.as_str()))) {
        Err(e) => format!("errors:\n{e}"),
        Ok(set) => {
            let deferred: Vec<String> = set
                .ir
                .nodes()
                .filter_map(|(_, n)| Some(format!("{}: {}", n.location, n.deferred.as_ref()?)))
                .collect();
            format!("deferred:\n{}", deferred.join("\n"))
        }
    }
}

/// [`outcomes`] of one file `a.schema.json` with `$schema` and `body`.
fn outcome(body: Value) -> String {
    outcomes(&[("a.schema.json", schema(body))])
}

/// In-memory files that must load.
fn load(files: &[(&str, String)]) -> SchemaSet {
    match SchemaSet::load_sources(files.iter().map(|(name, text)| (*name, text.as_str()))) {
        Ok(set) => set,
        Err(e) => panic!("expected the schemas to load, got:\n{e}"),
    }
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

// ---------------------------------------------------------------------------------------------
// Keywords outside the subset

#[test]
fn deferred_all_of_of_non_objects() {
    assert_snapshot!(outcome(
        json!({"allOf": [{"type": "string"}, {"minLength": 1}]})
    ));
}

#[test]
fn deferred_not() {
    assert_snapshot!(outcome(json!({"type": "string", "not": {"const": ""}})));
}

/// `if`s that are not one tag's tests, or whose parts have no typed form, stay deferred, each
/// with the reason (`if_then_else_chains_are_typed` has the chains that are typed).
#[test]
fn deferred_if_then_else() {
    let object = |extra: Value| {
        let mut body = json!({"type": "object", "properties": {"kind": {"type": "string"}}});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    let tag = |v: &str| json!({"properties": {"kind": {"const": v}}, "required": ["kind"]});
    let files = [
        // No tag: `if` tests that a member is present.
        object(json!({"if": {"required": ["kind"]}, "then": {"required": ["x"]}})),
        // Two properties in one `if`.
        object(json!({
            "if": {"properties": {"kind": {"const": "a"}, "n": {"const": 1}}},
            "then": {}
        })),
        // Not a `const` or an `enum`.
        object(json!({"if": {"properties": {"kind": {"pattern": "^a"}}}, "then": {}})),
        // `if`s on two properties.
        object(json!({
            "properties": {"kind": {"type": "string"}, "mode": {"type": "string"}},
            "if": tag("a"),
            "then": {},
            "else": {"if": {"properties": {"mode": {"const": "b"}}}, "then": {}}
        })),
        // A part that closes itself.
        object(json!({"if": tag("a"), "then": {"additionalProperties": false}})),
        // A case that admits nothing.
        object(json!({"if": tag("a"), "then": {}, "else": false})),
        // A member two parts of one case declare differently.
        object(json!({
            "if": tag("a"),
            "then": {"properties": {"kind": {"maxLength": 1}}}
        })),
        // No `type: object`.
        json!({"if": tag("a"), "then": {"properties": {"x": {"type": "string"}}}}),
        // A case that is a `$ref` with a keyword beside it, or to another file.
        object(json!({
            "if": tag("a"),
            "then": {"$ref": "#/$defs/P", "required": ["kind"]},
            "$defs": {"P": {"properties": {"x": {"type": "string"}}}}
        })),
        object(json!({"if": tag("a"), "then": {"$ref": "f0.schema.json"}})),
        // A chain applied in place: as a `oneOf` branch, and as an `allOf` base (the chain in
        // `$defs` is typed; what applies it in place is not).
        json!({
            "$defs": {"C": object(json!({"if": tag("a"), "then": {}}))},
            "oneOf": [
                {"$ref": "#/$defs/C"},
                {"type": "object", "properties": {"z": {"type": "string"}}, "required": ["z"]}
            ]
        }),
        json!({
            "$defs": {"C": object(json!({"if": tag("a"), "then": {}}))},
            "allOf": [{"$ref": "#/$defs/C"}, {"type": "object", "properties": {"z": {}}}]
        }),
    ];
    let files: Vec<(String, String)> = files
        .into_iter()
        .enumerate()
        .map(|(i, body)| (format!("f{i}.schema.json"), schema(body)))
        .collect();
    let files: Vec<(&str, String)> = files.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    assert_snapshot!(outcomes(&files));
}

/// A chain of `if`s on one tag is a `oneOf` decided by the tag: one branch per case (here `a`,
/// which also takes a document without `kind` since the `if` does not require it, and any
/// other `kind`), each an object read as one of the `oneOf`'s variants only.
#[test]
fn if_then_else_chains_are_typed() {
    let body = json!({
        "title": "T",
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"properties": {"x": {"type": "integer"}}, "required": ["x"]},
        "else": {"title": "Rest", "properties": {"y": {"type": "string"}}}
    });
    let (members, tests, names) = decision_of(body.clone());
    assert_eq!(members, ["kind"]);
    assert_eq!(
        tests,
        [
            Test::Tag {
                member: 0,
                tags: vec![(vec![json!("a")], 1)],
                other: Some(2),
                absent: Some(1),
            },
            Test::Branch(0),
            Test::Branch(1),
        ]
    );
    assert_eq!(names, ["TA", "TRest"]);
    let set = load(&[("a.schema.json", schema(body))]);
    let variants: Vec<bool> = set
        .ir
        .nodes()
        .filter(|(_, n)| {
            n.name
                .as_deref()
                .is_some_and(|n| n.starts_with("TA") || n == "TRest")
        })
        .map(|(_, n)| n.implements_contract())
        .collect();
    assert_eq!(variants, [false, false], "the cases are no contracts alone");
}

/// A case written as a `$ref` to a `$defs` entry of the same file is typed as if written in
/// place, its variant named after the entry when no tag value names it.
#[test]
fn if_then_else_cases_by_ref_are_typed() {
    let body = json!({
        "title": "T",
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}},
        "required": ["kind"],
        "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        "then": {"$ref": "#/$defs/First"},
        "else": {"$ref": "#/$defs/Second", "description": "any other kind"},
        "$defs": {
            "First": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            "Second": {"type": "object", "properties": {"y": {"type": "string"}}}
        }
    });
    let (members, _, names) = decision_of(body);
    assert_eq!(members, ["kind"]);
    assert_eq!(names, ["TA", "TSecond"]);
}

/// `unevaluated*: false` where a value is entered keeps its type (it closes no more than the
/// type does); in an `allOf` branch it closes a part alone, and a schema in it opens the
/// object: both deferred whole.
#[test]
fn deferred_unevaluated() {
    assert_snapshot!(outcome(json!({
        "type": "object",
        "allOf": [{"$ref": "#/$defs/Base"}],
        "properties": {
            "pair": {"type": "array", "prefixItems": [{"type": "string"}], "minItems": 1, "unevaluatedItems": false},
            "part": {"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}, "unevaluatedProperties": false}]},
            "open": {"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": {"type": "integer"}}
        },
        "unevaluatedProperties": false,
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}}}}
    })));
    let set = load(&[(
        "a.schema.json",
        schema(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": false}),
        ),
    )]);
    let root = set
        .ir
        .node(set.ir.resolve(set.files[0].root.expect("a root")));
    assert!(
        matches!(root.shape, Shape::Object { .. }),
        "{:?}",
        root.shape
    );
}

#[test]
fn deferred_pattern_properties_beside_properties() {
    assert_snapshot!(outcome(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x-": {"type": "string"}}})
    ));
}

#[test]
fn format_not_a_string() {
    assert_snapshot!(lint(json!({"type": "string", "format": 1})));
}

#[test]
fn format_multiple_of_and_unique_items_on_the_wrong_type() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "format": "date"},
            "b": {"type": "string", "multipleOf": 2},
            "c": {"type": "object", "uniqueItems": true}
        }
    })));
}

#[test]
fn multiple_of_not_positive() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {
            "zero": {"type": "integer", "multipleOf": 0},
            "negative": {"type": "number", "multipleOf": -0.5},
            "text": {"type": "number", "multipleOf": "2"}
        }
    })));
}

#[test]
fn unique_items_not_a_boolean() {
    assert_snapshot!(lint(
        json!({"type": "array", "items": {"type": "string"}, "uniqueItems": "yes"})
    ));
}

/// `format`, `multipleOf` and `uniqueItems` are checks on the typed value; a format perago
/// does not check is an annotation (as the interpreter reads it).
#[test]
fn format_multiple_of_and_unique_items_are_checks() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "object",
            "properties": {
                "at": {"type": "string", "format": "date-time"},
                "colour": {"type": "string", "format": "x-colour"},
                "step": {"type": "number", "multipleOf": 0.5},
                "maybe_even": {"type": ["integer", "null"], "multipleOf": 2},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            }
        })),
    )]);
    let checks: Vec<String> = set
        .ir
        .nodes()
        .filter(|(_, n)| !n.checks.is_empty())
        .map(|(_, n)| format!("{} {:?}", n.location, n.checks))
        .collect();
    assert_eq!(
        checks,
        [
            "a.schema.json#/properties/at Checks { format: Some(DateTime), multiple_of: None, unique_items: false }",
            "a.schema.json#/properties/step Checks { format: None, multiple_of: Some(0.5), unique_items: false }",
            "a.schema.json#/properties/maybe_even Checks { format: None, multiple_of: Some(2.0), unique_items: false }",
            "a.schema.json#/properties/tags Checks { format: None, multiple_of: None, unique_items: true }",
        ]
    );
}

#[test]
fn deferred_prefix_items_without_min_items() {
    assert_snapshot!(outcome(
        json!({"type": "array", "prefixItems": [{"type": "string"}]})
    ));
}

#[test]
fn unsupported_definitions() {
    assert_snapshot!(lint(
        json!({"definitions": {"A": {"type": "string"}}, "$ref": "#/definitions/A"})
    ));
}

#[test]
fn unsupported_openapi_nullable() {
    assert_snapshot!(lint(json!({"type": "string", "nullable": true})));
}

#[test]
fn unsupported_misspelt_keyword() {
    assert_snapshot!(lint(json!({"type": "string", "minlength": 1, "ref": "#"})));
}

#[test]
fn unsupported_unknown_keyword() {
    assert_snapshot!(lint(json!({"type": "string", "x-internal": true})));
}

#[test]
fn deferred_keyword_beside_ref() {
    assert_snapshot!(outcome(
        json!({"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A", "format": "uuid"})
    ));
}

// ---------------------------------------------------------------------------------------------
// The root: $schema, $id, and keywords only the root may hold

#[test]
fn a_schema_without_dollar_schema_is_read_as_2020_12() {
    load(&[("a.schema.json", r#"{"type": "string"}"#.to_owned())]);
}

/// The two doors agree: codegen names `perago validate` for a schema exactly when the
/// interpreter takes it.
#[test]
fn codegen_names_perago_validate_only_for_what_the_interpreter_takes() {
    let draft_2019 = "https://json-schema.org/draft/2019-09/schema";
    for schema in [
        json!({"type": "object", "x-internal": true}),
        json!({"type": "string", "minlength": 1}),
        json!({"type": "string", "nullable": true}),
        json!({"definitions": {"a": {"type": "string"}}, "$ref": "#/definitions/a"}),
        json!({"type": "object", "discriminator": {"propertyName": "kind"}}),
        json!({"$recursiveRef": "#"}),
        json!({"$schema": draft_2019, "$recursiveAnchor": true, "type": "object",
               "properties": {"children": {"type": "array", "items": {"$recursiveRef": "#"}}}}),
    ] {
        let text = schema.to_string();
        let codegen = errors(&[("a.schema.json", text.clone())]);
        let interpreter = perago_schema::Validator::load_sources(
            [("a.schema.json", text.as_str())],
            "a.schema.json",
            perago_schema::Options::default(),
        );
        assert_eq!(
            codegen.contains("perago validate"),
            interpreter.is_ok(),
            "{schema}: codegen says {codegen}; the interpreter {interpreter:?}"
        );
    }
}

#[test]
fn draft_07_and_2019_09_schemas_generate() {
    let set = load(&[
        (
            "a.schema.json",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}],
                             "minItems": 2, "additionalItems": false},
                    "b": {"$ref": "#/definitions/B", "description": "the B"}
                },
                "dependencies": {"pair": ["b"]},
                "definitions": {"B": {"type": "string"}}
            })
            .to_string(),
        ),
        (
            "c.schema.json",
            json!({
                "$schema": "https://json-schema.org/draft/2019-09/schema",
                "type": "object",
                "properties": {"a": {"$ref": "a.schema.json#/definitions/B"}}
            })
            .to_string(),
        ),
    ]);
    let a = set.find("a").expect("a");
    assert_eq!(a.defs.len(), 1, "`definitions` are the `$defs`");
    let errors = errors(&[(
        "a.schema.json",
        json!({"$schema": "http://json-schema.org/draft-07/schema#",
               "definitions": {"B": {"type": "string", "minLength": "x"}}})
        .to_string(),
    )]);
    assert!(
        errors.starts_with("a.schema.json#/definitions/B: `minLength`"),
        "errors point into the file as written: {errors}"
    );
}

#[test]
fn wrong_schema_dialect() {
    assert_snapshot!(lint_text(
        r#"{"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"}"#
    ));
}

#[test]
fn schema_not_a_string() {
    assert_snapshot!(lint_text(r#"{"$schema": 2020, "type": "string"}"#));
}

#[test]
fn dialect_with_empty_fragment_is_accepted() {
    let text = format!(r#"{{"$schema": "{DIALECT}#", "type": "string"}}"#);
    load(&[("a.schema.json", text)]);
}

#[test]
fn relative_id() {
    assert_snapshot!(lint(json!({"$id": "a.schema.json", "type": "string"})));
}

#[test]
fn id_with_fragment() {
    assert_snapshot!(lint(
        json!({"$id": "https://example.com/a.schema.json#top", "type": "string"})
    ));
}

#[test]
fn nested_schema_and_id() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {
            "inner": {"$schema": DIALECT, "$id": "https://example.com/inner.schema.json", "type": "string"}
        }
    })));
}

#[test]
fn nested_defs() {
    assert_snapshot!(lint(json!({
        "$defs": {"Outer": {"type": "string", "$defs": {"Inner": {"type": "string"}}}},
        "$ref": "#/$defs/Outer"
    })));
}

#[test]
fn defs_not_an_object() {
    assert_snapshot!(lint(
        json!({"type": "string", "$defs": [{"type": "string"}]})
    ));
}

// ---------------------------------------------------------------------------------------------
// Schemas that are not objects

#[test]
fn false_schema_as_property() {
    assert_snapshot!(outcome(object(json!({"legacy": false}))));
}

#[test]
fn false_schema_as_items() {
    assert_snapshot!(outcome(json!({"type": "array", "items": false})));
}

#[test]
fn non_object_schema() {
    assert_snapshot!(lint(object(
        json!({"name": "string", "tags": ["string"], "count": null})
    )));
}

#[test]
fn non_object_root() {
    assert_snapshot!(lint_text(r#"["string"]"#));
}

// ---------------------------------------------------------------------------------------------
// type

#[test]
fn type_null_twice() {
    assert_snapshot!(lint(json!({"type": ["null", "null"]})));
}

#[test]
fn type_unknown() {
    assert_snapshot!(lint(object(
        json!({"a": {"type": "int"}, "b": {"type": ["float", "null"]}})
    )));
}

#[test]
fn type_not_a_name() {
    assert_snapshot!(lint(json!({"type": {"name": "string"}})));
}

#[test]
fn invalid_type_does_not_cascade() {
    // One error for the type, none for the keywords it would have made (in)applicable.
    assert_snapshot!(lint(json!({"type": "str", "minLength": 1})));
}

// ---------------------------------------------------------------------------------------------
// Keywords that do not apply to the declared type

#[test]
fn string_keywords_on_integer() {
    assert_snapshot!(lint(
        json!({"type": "integer", "minLength": 1, "pattern": "^[0-9]+$"})
    ));
}

#[test]
fn number_keyword_on_string() {
    assert_snapshot!(lint(json!({"type": "string", "maximum": 10})));
}

#[test]
fn array_keywords_on_nullable_object() {
    assert_snapshot!(lint(
        json!({"type": ["object", "null"], "items": {"type": "string"}, "maxItems": 3})
    ));
}

#[test]
fn properties_without_type() {
    assert_snapshot!(outcome(
        json!({"properties": {"a": {"type": "string"}}, "required": ["a"]})
    ));
}

#[test]
fn additional_properties_on_array() {
    assert_snapshot!(lint(
        json!({"type": "array", "additionalProperties": false})
    ));
}

#[test]
fn minimum_without_type() {
    assert_snapshot!(outcome(json!({"minimum": 0})));
}

// ---------------------------------------------------------------------------------------------
// Values of the validation keywords

#[test]
fn negative_min_length() {
    assert_snapshot!(lint(json!({"type": "string", "minLength": -1})));
}

#[test]
fn fractional_max_items() {
    assert_snapshot!(lint(json!({"type": "array", "maxItems": 2.5})));
}

#[test]
fn string_bound() {
    assert_snapshot!(lint(json!({"type": "integer", "minimum": "0"})));
}

#[test]
fn draft4_exclusive_minimum() {
    assert_snapshot!(lint(
        json!({"type": "number", "minimum": 0, "exclusiveMinimum": true})
    ));
}

#[test]
fn min_length_above_max_length() {
    assert_snapshot!(lint(
        json!({"type": "string", "minLength": 5, "maxLength": 3})
    ));
}

#[test]
fn min_items_above_max_items() {
    assert_snapshot!(lint(json!({"type": "array", "minItems": 2, "maxItems": 1})));
}

#[test]
fn minimum_above_maximum() {
    assert_snapshot!(lint(
        json!({"type": "integer", "minimum": 10, "maximum": 1})
    ));
}

#[test]
fn exclusive_bounds_leave_nothing() {
    assert_snapshot!(lint(
        json!({"type": "number", "exclusiveMinimum": 1, "maximum": 1})
    ));
}

#[test]
fn equal_inclusive_bounds_are_accepted() {
    load(&[(
        "a.schema.json",
        schema(json!({"type": "integer", "minimum": 1, "maximum": 1})),
    )]);
}

#[test]
fn invalid_pattern() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^(unclosed"})));
}

#[test]
fn pattern_invalid_in_unicode_mode() {
    // `\-` outside a class is fine in legacy ECMA-262 but an error in Unicode mode.
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^a\\-b$"})));
}

// Patterns run in linear time: what needs backtracking is refused, naming the construct.

#[test]
fn pattern_lookahead() {
    assert_snapshot!(lint(
        json!({"type": "string", "pattern": "^[a-z0-9]+(?=.*[0-9])"})
    ));
}

#[test]
fn pattern_negative_lookahead() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^x-(?!tmp-)"})));
}

/// Lookaheads that open a pattern at its `^` are matched as searches of their own (Pydantic's
/// `Decimal` pattern is one); before a top-level `|` they would not be at the start.
#[test]
fn pattern_leading_lookaheads() {
    load(&[(
        "a.schema.json",
        schema(json!({"type": "string", "pattern": "^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$"})),
    )]);
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^(?!tmp-)a|b"})));
}

#[test]
fn pattern_lookbehind() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "(?<=@)example$"})));
}

#[test]
fn pattern_negative_lookbehind() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "(?<!-)$"})));
}

#[test]
fn pattern_backreference() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^(a+)\\1$"})));
}

#[test]
fn pattern_named_backreference() {
    assert_snapshot!(lint(
        json!({"type": "string", "pattern": "^(?<q>['\"]).*\\k<q>$"})
    ));
}

#[test]
fn pattern_too_large() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^a{10000000}$"})));
}

#[test]
fn pattern_unknown_unicode_property() {
    // ECMA-262 names scripts `Script=…`; a lone script name is not a property there.
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^\\p{Greek}+$"})));
}

#[test]
fn pattern_modifier_group() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": "^(?i:yes)$"})));
}

/// What the linear-time engine takes, including the ECMA-262 classes it writes out in ASCII.
#[test]
fn patterns_in_the_linear_time_subset_load() {
    for pattern in [
        "^(a+)+$",
        "^\\d{3}-\\w+\\s?$",
        "^(?<year>\\d{4})-(?:0[1-9]|1[0-2])$",
        "^\\p{L}[\\p{L}\\p{Script=Greek}\\u{1F600}-\\u{1F64F}]*$",
        "\\bword\\b",
        "^[^]*$",
        "^[a&&b~~c[-]+$",
    ] {
        load(&[(
            "a.schema.json",
            schema(json!({"type": "string", "pattern": pattern})),
        )]);
    }
}

#[test]
fn pattern_not_a_string() {
    assert_snapshot!(lint(json!({"type": "string", "pattern": 42})));
}

#[test]
fn tuple_items() {
    assert_snapshot!(lint(
        json!({"type": "array", "items": [{"type": "string"}, {"type": "integer"}]})
    ));
}

// ---------------------------------------------------------------------------------------------
// Objects

#[test]
fn required_names_undeclared_property() {
    assert_snapshot!(lint(
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name", "nmae"]})
    ));
}

#[test]
fn required_without_properties() {
    assert_snapshot!(lint(json!({"type": "object", "required": ["name"]})));
}

#[test]
fn required_duplicated() {
    assert_snapshot!(lint(
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name", "name"]})
    ));
}

#[test]
fn required_not_an_array() {
    assert_snapshot!(lint(
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": "name"})
    ));
}

#[test]
fn required_not_names() {
    assert_snapshot!(lint(
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": [1]})
    ));
}

#[test]
fn properties_not_an_object() {
    assert_snapshot!(lint(json!({"type": "object", "properties": ["name"]})));
}

#[test]
fn additional_properties_not_a_schema() {
    assert_snapshot!(lint(
        json!({"type": "object", "additionalProperties": "string"})
    ));
}

// ---------------------------------------------------------------------------------------------
// const and enum

#[test]
fn const_not_of_type() {
    assert_snapshot!(lint(json!({"type": "integer", "const": "1"})));
}

#[test]
fn const_fraction_not_integer() {
    assert_snapshot!(lint(json!({"type": "integer", "const": 1.5})));
}

#[test]
fn enum_value_not_of_type() {
    assert_snapshot!(lint(json!({"type": "string", "enum": ["a", 1, null]})));
}

#[test]
fn enum_null_allowed_when_type_is_nullable() {
    load(&[(
        "a.schema.json",
        schema(json!({"type": ["string", "null"], "enum": ["a", null]})),
    )]);
}

#[test]
fn duplicate_enum_values() {
    assert_snapshot!(lint(json!({"enum": ["a", "b", "a", 1, 1.0]})));
}

#[test]
fn empty_enum() {
    assert_snapshot!(lint(json!({"type": "string", "enum": []})));
}

#[test]
fn enum_not_an_array() {
    assert_snapshot!(lint(json!({"enum": "a"})));
}

#[test]
fn const_and_enum() {
    assert_snapshot!(lint(json!({"const": "a", "enum": ["a"]})));
}

#[test]
fn constraints_beside_enum() {
    // The IR checks only the listed values, so a rule beside them would be silently ignored.
    assert_snapshot!(outcome(
        json!({"type": "string", "enum": ["a", "bb"], "minLength": 2})
    ));
}

#[test]
fn constraints_beside_const() {
    assert_snapshot!(outcome(
        json!({"type": "integer", "const": 3, "maximum": 2})
    ));
}

// ---------------------------------------------------------------------------------------------
// Siblings of $ref, oneOf, anyOf

#[test]
fn siblings_beside_ref() {
    assert_snapshot!(outcome(json!({
        "$defs": {"Name": {"type": "string"}},
        "type": "object",
        "properties": {"name": {"$ref": "#/$defs/Name", "type": "string", "maxLength": 10, "description": "fine"}}
    })));
}

#[test]
fn siblings_beside_one_of() {
    assert_snapshot!(outcome(json!({
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}
        ]
    })));
}

#[test]
fn one_of_of_type_string() {
    assert_snapshot!(outcome(
        json!({"type": "string", "oneOf": [branch("a"), branch("b")]})
    ));
}

#[test]
fn siblings_beside_any_of() {
    assert_snapshot!(outcome(
        json!({"type": "string", "minLength": 1, "anyOf": [{"type": "string"}, {"type": "null"}]})
    ));
}

// ---------------------------------------------------------------------------------------------
// anyOf

#[test]
fn union_of_types_loads() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "object",
            "properties": {
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "three": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "limit": {"oneOf": [{"const": "auto"}, {"type": "number"}]},
                "text": {"oneOf": [{"$ref": "#/$defs/Text"}, {"type": "array"}, {"type": "object", "properties": {}}]},
                "kinds": {"oneOf": [{"enum": [1, 2]}, {"type": "boolean"}]}
            },
            "$defs": {"Text": {"type": "string"}}
        })),
    )]);
    let kinds = |name: &str| {
        let root = set.files[0].root.expect("a root");
        let Shape::Object { properties, .. } = &set.ir.node(root).shape else {
            panic!("an object root")
        };
        let p = properties
            .iter()
            .find(|p| p.name == name)
            .expect("declared");
        let mut node = set.ir.resolve(p.node);
        let mut nullable = Vec::new();
        // `anyOf: [A, B, null]`: null, or the union of the others.
        if let Shape::Nullable(inner) = set.ir.node(node).shape {
            (node, nullable) = (inner, vec!["null"]);
        }
        match &set.ir.node(node).shape {
            Shape::Union(branches) => branches
                .iter()
                .map(|b| b.kind.name())
                .chain(nullable)
                .collect::<Vec<_>>(),
            other => panic!("{name}: expected a union, got {other:?}"),
        }
    };
    assert_eq!(kinds("id"), ["string", "integer"]);
    assert_eq!(kinds("three"), ["string", "integer", "null"]);
    assert_eq!(kinds("limit"), ["string", "number"]);
    assert_eq!(kinds("text"), ["string", "array", "object"]);
    assert_eq!(kinds("kinds"), ["integer", "boolean"]);
}

#[test]
fn union_integer_and_number_overlap() {
    assert_snapshot!(outcome(
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "number"}]})
    ));
}

#[test]
fn union_two_branches_of_one_type() {
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "string", "maxLength": 3},
        {"type": "object", "properties": {}},
        {"type": "string", "pattern": "^x"}
    ]})));
}

#[test]
fn union_branch_without_one_type() {
    assert_snapshot!(outcome(json!({"anyOf": [
        {"type": "string"},
        {"minimum": 1},
        {"type": ["integer", "null"]},
        {"enum": ["a", 1]}
    ]})));
}

#[test]
fn union_of_a_string_and_tagged_objects_loads() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({"oneOf": [{"type": "string"}, branch("a"), {"type": "null"}, branch("b")]})),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Union(branches) = &set.ir.node(root).shape else {
        panic!("a union root")
    };
    let kinds: Vec<&str> = branches.iter().map(|b| b.kind.name()).collect();
    assert_eq!(kinds, ["string", "object", "null"]);
    assert!(matches!(
        &set.ir.node(branches[1].node).shape,
        Shape::OneOf { discriminators, branches, .. } if *discriminators == ["kind"] && branches.len() == 2
    ));
}

#[test]
fn union_of_a_string_and_objects_by_required_keys_loads() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({"anyOf": [
            {"type": "string"},
            {"type": "object", "properties": {"host": {"type": "string"}, "port": {"type": "integer"}}, "required": ["host"]},
            {"type": "object", "properties": {"socket": {"type": "string"}, "port": {"type": "string"}}, "required": ["socket"]}
        ]})),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Union(alternatives) = &set.ir.node(root).shape else {
        panic!("a union root")
    };
    let objects = alternatives
        .iter()
        .find(|a| a.kind.name() == "object")
        .expect("an object branch");
    let Shape::OneOf {
        discriminators,
        branches,
        ..
    } = &set.ir.node(objects.node).shape
    else {
        panic!("the objects are one oneOf")
    };
    assert!(discriminators.is_empty());
    let keys: Vec<&[String]> = branches.iter().map(|b| b.keys.as_slice()).collect();
    assert_eq!(keys, [&["host".to_owned()][..], &["socket".to_owned()][..]]);
}

#[test]
fn union_objects_not_distinguished() {
    assert_snapshot!(outcome(json!({"anyOf": [
        {"type": "string"},
        branch("a"),
        {"type": "object", "properties": {"name": {"type": "string"}}},
        {"type": "object", "properties": {"size": {"type": "integer"}}}
    ]})));
}

#[test]
fn union_object_not_closed() {
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "integer"},
        branch("a"),
        {"type": "object", "additionalProperties": {"type": "string"}}
    ]})));
}

#[test]
fn union_with_siblings() {
    assert_snapshot!(outcome(
        json!({"type": "string", "minLength": 1, "anyOf": [{"type": "string"}, {"type": "integer"}]})
    ));
}

#[test]
fn any_of_branches_are_linted() {
    assert_snapshot!(lint(
        json!({"anyOf": [{"type": "string", "format": "email"}, {"type": "null", "minLength": 1}]})
    ));
}

// ---------------------------------------------------------------------------------------------
// oneOf

fn branch(tag: &str) -> Value {
    json!({"type": "object", "properties": {"kind": {"const": tag}}, "required": ["kind"]})
}

#[test]
fn one_of_empty() {
    assert_snapshot!(lint(json!({"oneOf": []})));
}

#[test]
fn one_of_branch_not_an_object() {
    assert_snapshot!(outcome(
        json!({"oneOf": [branch("a"), {"type": "string"}, {"properties": {"kind": {"const": "c"}}}]})
    ));
}

#[test]
fn one_of_branch_is_a_map() {
    assert_snapshot!(outcome(
        json!({"oneOf": [branch("a"), {"type": "object", "additionalProperties": {"type": "string"}}]})
    ));
}

#[test]
fn one_of_branch_ref_to_non_object() {
    assert_snapshot!(outcome(
        json!({"$defs": {"Text": {"type": ["string", "null"]}}, "oneOf": [branch("a"), {"$ref": "#/$defs/Text"}]})
    ));
}

#[test]
fn one_of_nested_one_of() {
    assert_snapshot!(outcome(
        json!({"oneOf": [branch("a"), {"type": "object", "oneOf": [branch("b"), branch("c")]}]})
    ));
}

#[test]
fn one_of_by_required_keys_loads() {
    // No `const`: each branch requires a key no other declares (`c` is shared, `d` optional).
    let set = load(&[(
        "a.schema.json",
        schema(json!({"oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}, "c": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}, "c": {"type": "string"}, "d": {"type": "null"}}, "required": ["b", "c"]}
        ]})),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf {
        discriminators,
        branches,
        ..
    } = &set.ir.node(root).shape
    else {
        panic!("a oneOf root")
    };
    assert!(discriminators.is_empty());
    let keys: Vec<&[String]> = branches.iter().map(|b| b.keys.as_slice()).collect();
    assert_eq!(
        keys,
        [&["a".to_owned()][..], &["b".to_owned(), "d".to_owned()][..]]
    );
}

#[test]
fn one_of_by_a_tag_and_by_keys_loads() {
    // `kind` tags two branches; the two that do not declare it each require a key no other of
    // them declares (`x` is one of them although a branch with a tag declares it too).
    let keyed = |key: &str| json!({"type": "object", "properties": {key: {"type": "string"}, "x": {"type": "string"}}, "required": [key]});
    let mut url = keyed("url");
    url["properties"]["z"] = json!({"type": "integer"});
    let set = load(&[(
        "a.schema.json",
        schema(json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind", "x"]},
            branch("b"),
            url,
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
        ]})),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf {
        discriminators,
        branches,
        ..
    } = &set.ir.node(root).shape
    else {
        panic!("a oneOf root")
    };
    assert_eq!(*discriminators, ["kind"]);
    let tags: Vec<Option<&str>> = branches.iter().map(|b| b.tag_text()).collect();
    assert_eq!(tags, [Some("a"), Some("b"), None, None]);
    let keys: Vec<Vec<&str>> = branches
        .iter()
        .map(|b| b.keys.iter().map(String::as_str).collect())
        .collect();
    let none: Vec<&str> = Vec::new();
    assert_eq!(
        keys,
        [none.clone(), none, vec!["url", "x", "z"], vec!["path"]]
    );
}

#[test]
fn union_of_tagged_and_keyed_objects_loads() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({"anyOf": [
            {"type": "integer"},
            branch("a"),
            {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]},
            branch("b"),
            {"type": "object", "properties": {"socket": {"type": "string"}}, "required": ["socket"]}
        ]})),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Union(alternatives) = &set.ir.node(root).shape else {
        panic!("a union root")
    };
    let Some(Shape::OneOf {
        discriminators,
        branches,
        ..
    }) = alternatives
        .iter()
        .find(|a| a.kind.name() == "object")
        .map(|a| &set.ir.node(a.node).shape)
    else {
        panic!("the objects are one oneOf")
    };
    assert_eq!(*discriminators, ["kind"]);
    let decided: Vec<(Option<&str>, &[String])> = branches
        .iter()
        .map(|b| (b.tag_text(), b.keys.as_slice()))
        .collect();
    assert_eq!(
        decided,
        [
            (Some("a"), &[][..]),
            (None, &["host".to_owned()][..]),
            (Some("b"), &[][..]),
            (None, &["socket".to_owned()][..])
        ]
    );
}

#[test]
fn one_of_untagged_branches_not_discriminated_by_keys() {
    // `kind` tags branch 0; branches 1 and 2 leave it out, and branch 1 requires only `x`,
    // which branch 2 declares too, requiring nothing: `{"x": ""}` is both.
    assert_snapshot!(outcome(json!({"oneOf": [
        branch("a"),
        {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}
    ]})));
}

#[test]
fn union_untagged_objects_not_discriminated_by_keys() {
    assert_snapshot!(outcome(json!({"anyOf": [
        {"type": "string"},
        branch("a"),
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    ]})));
}

#[test]
fn one_of_without_const() {
    // Neither a const nor a key only one branch requires (`a` is declared by both), but `a`'s
    // JSON type tells them apart: nothing is deferred.
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"]}
    ]})));
}

#[test]
fn one_of_duplicate_consts() {
    assert_snapshot!(outcome(
        json!({"oneOf": [branch("a"), branch("b"), branch("a")]})
    ));
}

#[test]
fn one_of_const_not_required() {
    // Not a discriminator, but a test tells them apart all the same: `kind` absent is branch
    // 1 (branch 0 requires it), "a" branch 0, "b" branch 1.
    assert_snapshot!(outcome(json!({"oneOf": [
        branch("a"),
        {"type": "object", "properties": {"kind": {"const": "b"}}}
    ]})));
}

#[test]
fn one_of_two_branches_lack_the_discriminator() {
    assert_snapshot!(outcome(json!({"oneOf": [
        branch("a"),
        {"type": "object", "properties": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"y": {"type": "string"}}}
    ]})));
}

#[test]
fn one_of_integer_consts_are_tags() {
    // Nothing is deferred: an integer `const` tags its branch as a string's does.
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "object", "properties": {"v": {"const": 1}}, "required": ["v"]},
        {"type": "object", "properties": {"v": {"const": 2}}, "required": ["v"]}
    ]})));
}

/// A branch as [`tags_of`] says: its tag (discriminator and `const`), its keys, its type's name.
type Tagged = (Option<(usize, Value)>, Vec<String>, String);

/// The discriminators of the `oneOf` at the root of `a.schema.json` with `body`, and per branch
/// its tag (discriminator and `const`), its keys and its type's name.
fn tags_of(body: Value) -> (Vec<String>, Vec<Tagged>) {
    let set = load(&[("a.schema.json", schema(body))]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf {
        discriminators,
        branches,
        ..
    } = &set.ir.node(root).shape
    else {
        panic!("a oneOf root, got {:?}", set.ir.node(root).shape)
    };
    let branches = branches
        .iter()
        .map(|b| {
            (
                b.tag.as_ref().map(|t| (t.property, t.first().clone())),
                b.keys.clone(),
                set.ir.node(b.node).name.clone().unwrap_or_default(),
            )
        })
        .collect();
    (discriminators.clone(), branches)
}

fn tagged(property: &str, tag: Value) -> Value {
    json!({"type": "object", "properties": {property: {"const": tag}, "x": {"type": "string"}}, "required": [property]})
}

#[test]
fn one_of_tagged_on_several_properties() {
    // Neither `kind` nor `type` alone tells the other branches apart (nor do keys).
    let (discriminators, branches) = tags_of(json!({"title": "Event", "oneOf": [
        tagged("kind", json!("a")),
        tagged("type", json!("c")),
        tagged("kind", json!("b")),
        tagged("type", json!("d")),
        {"type": "object", "properties": {"socket": {"type": "string"}}, "required": ["socket"]}
    ]}));
    assert_eq!(discriminators, ["kind", "type"]);
    assert_eq!(
        branches,
        [
            (Some((0, json!("a"))), vec![], "EventA".to_owned()),
            (Some((1, json!("c"))), vec![], "EventC".to_owned()),
            (Some((0, json!("b"))), vec![], "EventB".to_owned()),
            (Some((1, json!("d"))), vec![], "EventD".to_owned()),
            (None, vec![], "EventVariant4".to_owned()),
        ]
    );
}

#[test]
fn one_of_tagged_on_several_properties_and_discriminated_by_keys() {
    let (discriminators, branches) = tags_of(json!({"title": "Event", "oneOf": [
        tagged("kind", json!("a")),
        tagged("kind", json!("b")),
        tagged("type", json!("c")),
        tagged("type", json!("d")),
        {"type": "object", "properties": {"socket": {"type": "string"}, "x": {"type": "string"}}, "required": ["socket"]},
        {"type": "object", "properties": {"pipe": {"type": "string"}}, "required": ["pipe"]}
    ]}));
    assert_eq!(discriminators, ["kind", "type"]);
    let keys: Vec<&[String]> = branches.iter().map(|b| b.1.as_slice()).collect();
    let none: &[String] = &[];
    assert_eq!(
        keys,
        [
            none,
            none,
            none,
            none,
            &["socket".to_owned(), "x".to_owned()],
            &["pipe".to_owned()]
        ]
    );
}

#[test]
fn one_of_versioned_by_integers_and_booleans() {
    let (discriminators, branches) = tags_of(json!({"title": "Doc", "oneOf": [
        tagged("version", json!(1)),
        tagged("version", json!(2.0)),
        tagged("version", json!(-3)),
        tagged("legacy", json!(true))
    ]}));
    assert_eq!(discriminators, ["version", "legacy"]);
    let tags: Vec<(Option<(usize, Value)>, String)> =
        branches.into_iter().map(|(t, _, name)| (t, name)).collect();
    assert_eq!(
        tags,
        [
            (Some((0, json!(1))), "DocV1".to_owned()),
            (Some((0, json!(2))), "DocV2".to_owned()),
            (Some((0, json!(-3))), "DocVMinus3".to_owned()),
            (Some((1, json!(true))), "DocTrue".to_owned()),
        ]
    );
}

#[test]
fn one_of_a_branch_with_two_tags_has_the_larger_group_s() {
    // `kind` tags branches 0 and 1, `version` 0 and 2: `kind` comes first, so `version` is an
    // ordinary property and branch 2, alone without a tag, is the one without `kind`.
    let (discriminators, branches) = tags_of(json!({"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "version": {"const": 1}}, "required": ["kind", "version"]},
        tagged("kind", json!("b")),
        tagged("version", json!(2))
    ]}));
    assert_eq!(discriminators, ["kind"]);
    let tags: Vec<Option<(usize, Value)>> = branches.into_iter().map(|b| b.0).collect();
    assert_eq!(tags, [Some((0, json!("a"))), Some((0, json!("b"))), None]);
}

#[test]
fn one_of_tag_property_another_branch_declares_without_a_const() {
    assert_snapshot!(outcome(json!({"oneOf": [
        tagged("kind", json!("a")),
        tagged("kind", json!("b")),
        tagged("type", json!(1)),
        {"type": "object", "properties": {"kind": {"type": "string"}, "y": {"type": "string"}}, "required": ["kind"]}
    ]})));
}

#[test]
fn one_of_integer_tags_repeated_or_not_required() {
    assert_snapshot!(outcome(json!({"oneOf": [
        tagged("version", json!(1)),
        tagged("version", json!(1.0)),
        {"type": "object", "properties": {"v": {"const": 2}}}
    ]})));
}

#[test]
fn one_of_several_tag_properties_with_untagged_branches_not_distinguished() {
    assert_snapshot!(outcome(json!({"oneOf": [
        tagged("kind", json!("a")),
        tagged("type", json!("c")),
        {"type": "object", "properties": {"y": {"type": "string"}}},
        {"type": "object", "properties": {"z": {"type": "string"}}}
    ]})));
}

/// A branch as [`tag_values_of`] says: its tag (discriminator and every value), its type's name.
type TagValues = (Option<(usize, Vec<Value>)>, String);

/// Per branch of the `oneOf` at the root of `a.schema.json` with `body`: its tag
/// (discriminator and every value), and its type's name.
fn tag_values_of(body: Value) -> Vec<TagValues> {
    let set = load(&[("a.schema.json", schema(body))]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf { branches, .. } = &set.ir.node(root).shape else {
        panic!("a oneOf root, got {:?}", set.ir.node(root).shape)
    };
    branches
        .iter()
        .map(|b| {
            (
                b.tag.as_ref().map(|t| (t.property, t.values.clone())),
                set.ir.node(b.node).name.clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn enum_tagged(property: &str, tags: Value) -> Value {
    json!({"type": "object", "properties": {property: {"enum": tags}, "x": {"type": "string"}}, "required": [property]})
}

#[test]
fn one_of_enum_tags_name_their_branch() {
    // Several values name a branch; the first names its variant; integers as JSON compares
    // them (5.0 is 5); a `type` that takes every value, and annotations, may stand beside.
    let branches = tag_values_of(json!({"title": "Change", "oneOf": [
        enum_tagged("op", json!(["create", "insert"])),
        tagged("op", json!("delete")),
        {"type": "object", "properties": {"op": {"type": "string", "enum": ["move", "rename"], "title": "Op"}}, "required": ["op"]}
    ]}));
    assert_eq!(
        branches,
        [
            (
                Some((0, vec![json!("create"), json!("insert")])),
                "ChangeCreate".to_owned()
            ),
            (Some((0, vec![json!("delete")])), "ChangeDelete".to_owned()),
            (
                Some((0, vec![json!("move"), json!("rename")])),
                "ChangeMove".to_owned()
            ),
        ]
    );
    let branches = tag_values_of(json!({"title": "Level", "oneOf": [
        enum_tagged("level", json!([1, 2])),
        enum_tagged("level", json!([5.0, 4])),
        {"type": "object", "properties": {"raw": {"type": "string"}}, "required": ["raw"]}
    ]}));
    assert_eq!(
        branches,
        [
            (Some((0, vec![json!(1), json!(2)])), "LevelV1".to_owned()),
            (Some((0, vec![json!(5), json!(4)])), "LevelV5".to_owned()),
            (None, "LevelVariant2".to_owned()),
        ]
    );
}

#[test]
fn one_of_enum_tags_overlapping() {
    // `b` names two branches: nothing tells them apart.
    assert_snapshot!(outcome(json!({"oneOf": [
        enum_tagged("kind", json!(["a", "b"])),
        enum_tagged("kind", json!(["b", "c"]))
    ]})));
}

#[test]
fn one_of_enum_tags_not_tags() {
    // A value that is no tag (null), a `type` that refuses one, a keyword beside the `enum`,
    // a branch that does not require it: each property is no tag (nor does a test tell the
    // branches apart: `d` is optional in both).
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "object", "properties": {
            "a": {"enum": ["x", null]},
            "b": {"type": "string", "enum": ["x", 1]},
            "c": {"enum": ["x", "y"], "minLength": 1},
            "d": {"enum": ["x", "y"]}
        }, "required": ["a", "b", "c"]},
        {"type": "object", "properties": {
            "a": {"const": "z"},
            "b": {"const": "z"},
            "c": {"const": "z"},
            "d": {"const": "z"}
        }, "required": ["a", "b", "c"]}
    ]})));
}

/// Two closed objects that require `id`, of these (followed) schemas, each with one more key.
fn typed_id(a: Value, b: Value) -> Value {
    json!({"oneOf": [
        {"type": "object", "properties": {"id": a, "x": {"type": "string"}}, "required": ["id"]},
        {"type": "object", "properties": {"id": b, "x": {"type": "integer"}}, "required": ["id"]}
    ]})
}

#[test]
fn one_of_discriminated_by_a_member_type() {
    // `id`'s JSON type names the branch (`[T, "null"]` is T and null); nothing is deferred.
    let mut body = typed_id(
        json!({"type": "string", "format": "uuid"}),
        json!({"$ref": "#/$defs/n"}),
    );
    body["$defs"] = json!({"n": {"type": ["integer", "null"], "minimum": 1}});
    assert_eq!(outcome(body.clone()), "deferred:\n");
    let set = load(&[("a.schema.json", schema(body))]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf {
        discriminators,
        branches,
        decision,
    } = &set.ir.node(root).shape
    else {
        panic!("a oneOf root, got {:?}", set.ir.node(root).shape)
    };
    assert!(discriminators.is_empty());
    assert_eq!(
        decision
            .as_ref()
            .map(|d| (d.members.clone(), d.tests.clone())),
        Some((
            vec!["id".to_owned()],
            vec![
                Test::Type {
                    member: 0,
                    groups: vec![
                        (vec![Kind::String], 1),
                        (vec![Kind::Null, Kind::Integer], 2)
                    ],
                    expected: vec![Kind::String, Kind::Integer, Kind::Null],
                    absent: None,
                },
                Test::Branch(0),
                Test::Branch(1),
            ]
        ))
    );
    assert!(
        branches
            .iter()
            .all(|b| b.tag.is_none() && b.keys.is_empty())
    );
    // Tags and keys come first: a `const` on `id` in each branch is a tag.
    let (discriminators, _) = tags_of(typed_id(
        json!({"type": "string", "const": "a"}),
        json!({"type": "integer", "const": 1}),
    ));
    assert_eq!(discriminators, ["id"]);
}

/// The decision and the branches' names of a `oneOf` root that tests of its members distinguish.
fn decision_of(body: Value) -> (Vec<String>, Vec<Test>, Vec<String>) {
    assert_eq!(outcome(body.clone()), "deferred:\n");
    let set = load(&[("a.schema.json", schema(body))]);
    let root = set.files[0].root.expect("a root");
    let Shape::OneOf {
        branches,
        decision: Some(decision),
        ..
    } = &set.ir.node(root).shape
    else {
        panic!(
            "a oneOf discriminated by tests, got {:?}",
            set.ir.node(root).shape
        )
    };
    let names = branches
        .iter()
        .map(|b| set.ir.node(b.node).name.clone().unwrap_or_default())
        .collect();
    (decision.members.clone(), decision.tests.clone(), names)
}

fn closed(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

#[test]
fn one_of_discriminated_by_tests_one_after_another() {
    // The types of two members: `a`, then (both strings) `b`.
    let (members, tests, names) = decision_of(json!({"title": "T", "oneOf": [
        closed(json!({"a": {"type": "string"}, "b": {"type": "string"}}), &["a", "b"]),
        closed(json!({"a": {"type": "string"}, "b": {"type": "integer"}}), &["a", "b"]),
        closed(json!({"a": {"type": "integer"}, "b": {"type": "string"}}), &["a", "b"]),
    ]}));
    assert_eq!(members, ["a", "b"]);
    assert_eq!(
        tests,
        [
            Test::Type {
                member: 0,
                groups: vec![(vec![Kind::String], 1), (vec![Kind::Integer], 4)],
                expected: vec![Kind::String, Kind::Integer],
                absent: None,
            },
            Test::Type {
                member: 1,
                groups: vec![(vec![Kind::String], 2), (vec![Kind::Integer], 3)],
                expected: vec![Kind::String, Kind::Integer],
                absent: None,
            },
            Test::Branch(0),
            Test::Branch(1),
            Test::Branch(2),
        ]
    );
    assert_eq!(names, ["TStringString", "TStringInteger", "TInteger"]);
    // A tag, then (without it) a member's type.
    let (members, tests, names) = decision_of(json!({"title": "E", "oneOf": [
        closed(json!({"kind": {"const": "a"}, "x": {"type": "integer"}}), &["kind"]),
        closed(json!({"p": {"type": "string"}}), &["p"]),
        closed(json!({"p": {"type": "object", "properties": {}}}), &["p"]),
    ]}));
    assert_eq!(members, ["kind", "p"]);
    assert_eq!(
        tests,
        [
            Test::Tag {
                member: 0,
                tags: vec![(vec![json!("a")], 4)],
                other: None,
                absent: Some(1),
            },
            Test::Type {
                member: 1,
                groups: vec![(vec![Kind::String], 2), (vec![Kind::Object], 3)],
                expected: vec![Kind::String, Kind::Object],
                absent: None,
            },
            Test::Branch(1),
            Test::Branch(2),
            Test::Branch(0),
        ]
    );
    assert_eq!(names, ["EA", "EString", "EObject"]);
    // A member's type, then one only one of the branches left declares (and requires): its
    // presence names that branch (after it), its absence the other.
    let (members, tests, names) = decision_of(json!({"title": "L", "oneOf": [
        closed(json!({"max": {"type": "integer"}}), &["max"]),
        closed(json!({"max": {"type": "string"}}), &["max"]),
        closed(json!({"max": {"type": "integer"}, "w": {"type": "string"}}), &["max", "w"]),
    ]}));
    assert_eq!(members, ["max", "w"]);
    assert_eq!(
        tests,
        [
            Test::Type {
                member: 0,
                groups: vec![(vec![Kind::Integer], 1), (vec![Kind::String], 4)],
                expected: vec![Kind::Integer, Kind::String],
                absent: None,
            },
            Test::Type {
                member: 1,
                groups: vec![(vec![Kind::String], 3)],
                expected: vec![Kind::String],
                absent: Some(2),
            },
            Test::Branch(0),
            Test::Branch(2),
            Test::Branch(1),
        ]
    );
    assert_eq!(names, ["LInteger", "LString", "LIntegerW"]);
}

#[test]
fn one_of_tests_that_leave_branches_together() {
    // `kind` tags branch 0; branches 1 and 2 both take a string `p` and differ in nothing a
    // test reads.
    assert_snapshot!(outcome(json!({"oneOf": [
        closed(json!({"kind": {"const": "a"}}), &["kind"]),
        closed(json!({"p": {"type": "string"}, "q": {"type": "string"}}), &["p"]),
        closed(json!({"p": {"type": "string"}, "r": {"type": "integer"}}), &["p"]),
    ]})));
}

#[test]
fn one_of_member_types_overlap() {
    // `integer` and `number` overlap (1 is both); two strings do.
    assert_snapshot!(outcome(typed_id(
        json!({"type": "integer"}),
        json!({"type": ["number", "null"]}),
    )));
    assert_snapshot!(outcome(typed_id(
        json!({"type": "string"}),
        json!({"type": "string", "format": "uuid"}),
    )));
}

#[test]
fn one_of_member_type_optional_or_untyped_in_a_branch() {
    // A branch that does not require `id` takes an object without it: still distinguished (a
    // string `id` is branch 0, an integer one or none branch 1).
    let mut body = typed_id(json!({"type": "string"}), json!({"type": "integer"}));
    body["oneOf"][1]["required"] = json!([]);
    assert_eq!(outcome(body), "deferred:\n");
    // One that gives it no `type` takes a string too: no word of JSON types.
    let deferred = outcome(typed_id(json!({"type": "string"}), json!({"minimum": 1})));
    assert!(
        deferred.contains("kept as a `serde_json::Value`"),
        "{deferred}"
    );
    assert!(!deferred.contains("JSON type"), "{deferred}");
}

#[test]
fn one_of_reports_every_near_miss() {
    assert_snapshot!(outcome(json!({"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "version": {"const": "1"}}, "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "a"}, "version": {"const": "2"}}, "required": ["kind"]}
    ]})));
}

// ---------------------------------------------------------------------------------------------
// $ref

#[test]
fn ref_to_missing_file() {
    assert_snapshot!(lint(object(
        json!({"a": {"$ref": "other.schema.json#/$defs/A"}})
    )));
}

#[test]
fn ref_to_missing_def() {
    assert_snapshot!(lint(
        json!({"$defs": {"Name": {"type": "string"}, "Count": {"type": "integer"}}, "$ref": "#/$defs/Nmae"})
    ));
}

#[test]
fn ref_to_missing_def_in_file_without_defs() {
    assert_snapshot!(errors(&[
        (
            "a.schema.json",
            schema(json!({"$ref": "b.schema.json#/$defs/B"}))
        ),
        ("b.schema.json", schema(json!({"type": "string"}))),
    ]));
}

#[test]
fn ref_to_root_of_defs_only_file() {
    assert_snapshot!(errors(&[
        (
            "a.schema.json",
            schema(json!({"type": "object", "properties": {"id": {"$ref": "common.schema.json"}}}))
        ),
        (
            "common.schema.json",
            schema(json!({"title": "Common", "$defs": {"Id": {"type": "string"}}}))
        ),
    ]));
}

#[test]
fn ref_pointer_inside_a_schema() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}
    })));
}

#[test]
fn ref_pointer_inside_a_def() {
    assert_snapshot!(lint(json!({
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "$ref": "#/$defs/A/properties/x"
    })));
}

#[test]
fn ref_up_a_directory() {
    assert_snapshot!(lint(json!({"$ref": "../shared/common.schema.json"})));
}

#[test]
fn ref_into_a_subdirectory() {
    assert_snapshot!(lint(json!({"$ref": "shared/common.schema.json#/$defs/A"})));
}

#[test]
fn ref_anchor_fragment() {
    assert_snapshot!(lint(
        json!({"$defs": {"A": {"type": "string"}}, "$ref": "#A"})
    ));
}

#[test]
fn ref_not_a_string() {
    assert_snapshot!(lint(json!({"$ref": {"path": "#/$defs/A"}})));
}

#[test]
fn ref_to_unknown_id() {
    assert_snapshot!(lint(
        json!({"$ref": "https://example.com/schemas/missing.schema.json"})
    ));
}

#[test]
fn ref_cycle() {
    assert_snapshot!(lint(json!({
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}}
    })));
}

#[test]
fn ref_to_own_root() {
    assert_snapshot!(lint(json!({"$ref": "#"})));
}

#[test]
fn ref_cycle_through_nullable_any_of() {
    assert_snapshot!(lint(
        json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}, "$ref": "#/$defs/A"})
    ));
}

#[test]
fn ref_cycle_across_files() {
    assert_snapshot!(errors(&[
        ("a.schema.json", schema(json!({"$ref": "b.schema.json"}))),
        ("b.schema.json", schema(json!({"$ref": "a.schema.json"}))),
    ]));
}

#[test]
fn recursion_through_an_object_is_accepted() {
    let set = load(&[(
        "tree.schema.json",
        schema(json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "parent": {"$ref": "#"}}
        })),
    )]);
    assert!(set.find("tree").and_then(|f| f.root).is_some());
}

// ---------------------------------------------------------------------------------------------
// Files

#[test]
fn duplicate_id_across_files() {
    let id = "https://example.com/schemas/a.schema.json";
    assert_snapshot!(errors(&[
        (
            "a.schema.json",
            schema(json!({"$id": id, "type": "string"}))
        ),
        (
            "b.schema.json",
            schema(json!({"$id": id, "type": "integer"}))
        ),
    ]));
}

#[test]
fn duplicate_file_name() {
    assert_snapshot!(errors(&[
        ("a.schema.json", schema(json!({"type": "string"}))),
        ("a.schema.json", schema(json!({"type": "integer"}))),
    ]));
}

#[test]
fn duplicate_json_key() {
    let text = format!(
        "{{\n  \"$schema\": \"{DIALECT}\",\n  \"type\": \"string\",\n  \"maxLength\": 5,\n  \"type\": \"integer\"\n}}"
    );
    let e = lint_text(&text);
    assert_snapshot!(e);
}

#[test]
fn not_json() {
    assert_snapshot!(lint_text("{\"$schema\": \"x\",}"));
}

#[test]
fn not_json_is_a_parse_error() {
    let result = SchemaSet::load_sources([("a.schema.json", "{")]);
    assert!(matches!(result, Err(Error::Parse { file, .. }) if file == "a.schema.json"));
}

// ---------------------------------------------------------------------------------------------
// Annotations

#[test]
fn default_invalid() {
    assert_snapshot!(lint(object(json!({
        "retries": {"type": "integer", "minimum": 0, "default": -1},
        "mode": {"enum": ["fast", "slow"], "default": "medium"},
        "name": {"type": ["string", "null"], "maxLength": 3, "default": "too long"}
    }))));
}

#[test]
fn default_invalid_beside_ref() {
    assert_snapshot!(lint(json!({
        "$defs": {"Level": {"type": "integer", "maximum": 5}},
        "type": "object",
        "properties": {"level": {"$ref": "#/$defs/Level", "default": 9}}
    })));
}

#[test]
fn default_object_invalid() {
    assert_snapshot!(lint(object(json!({
        "limits": {
            "type": "object",
            "properties": {"cpu": {"type": "integer"}},
            "default": {"cpu": 1, "memory": 2}
        }
    }))));
}

#[test]
fn examples_invalid() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1, "examples": ["ok", ""]}},
        "required": ["name"],
        "examples": [{"name": "x"}, {}]
    })));
}

#[test]
fn annotations_of_the_wrong_type() {
    assert_snapshot!(lint(
        json!({"type": "string", "title": 1, "description": ["x"], "$comment": null, "examples": "abc"})
    ));
}

// ---------------------------------------------------------------------------------------------
// Several errors

#[test]
fn several_errors_in_document_order() {
    assert_snapshot!(outcome(json!({
        "$id": "relative.json",
        "title": "Several",
        "type": "object",
        "properties": {
            "a": {"type": "integer", "minLength": 1},
            "b": {"type": "string", "format": "uri"},
            "c": {"items": {"type": "strin"}},
            "d": {"$ref": "#/$defs/Missing"}
        },
        "required": ["a", "e"],
        "allOf": [],
        "$defs": {
            "D": {"type": "string", "pattern": "("}
        },
        "additionalProperties": 1
    })));
}

#[test]
fn errors_of_several_files_in_load_order() {
    assert_snapshot!(outcomes(&[
        (
            "a.schema.json",
            schema(
                json!({"type": "object", "properties": {"b": {"$ref": "b.schema.json"}}, "minProperties": "1"})
            )
        ),
        (
            "b.schema.json",
            schema(json!({"type": "string", "maxLength": -1}))
        ),
    ]));
}

// ---------------------------------------------------------------------------------------------
// Valid schemas

#[test]
fn every_supported_keyword_loads() {
    let set = load(&[(
        "everything.schema.json",
        schema(json!({
            "$id": "https://example.com/schemas/everything.schema.json",
            "$comment": "every keyword of the subset",
            "title": "Everything",
            "description": "A schema using every supported keyword.",
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z][a-z0-9-]*$", "default": "x", "examples": ["abc"]},
                "count": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "flag": {"type": "boolean", "default": false},
                "nothing": {"type": "null"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
                "anything": {"type": "array"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "open": {"type": "object", "additionalProperties": true},
                "closed": {"type": "object", "properties": {}, "additionalProperties": false},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "mixed": {"enum": ["a", 1, null, true]},
                "version": {"const": "v1"},
                "half": {"type": "number", "const": 0.5},
                "maybe_name": {"type": ["string", "null"], "maxLength": 3, "default": null},
                "maybe_ref": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
                "maybe_first": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
                "point": {"$ref": "#/$defs/Point", "description": "annotations are fine beside $ref"},
                "shape": {"$ref": "#/$defs/Shape"},
                "whatever": {},
                "also_whatever": true
            },
            "required": ["name", "count", "shape"],
            "additionalProperties": false,
            "examples": [{"name": "abc", "count": 1, "shape": {"kind": "circle", "radius": 1}}],
            "$defs": {
                "Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]},
                "Shape": {
                    "title": "Shape",
                    "type": "object",
                    "oneOf": [
                        {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number"}}, "required": ["kind", "radius"]},
                        {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind"]},
                        {"type": "object", "properties": {"points": {"type": "array", "items": {"$ref": "#/$defs/Point"}}}}
                    ]
                }
            }
        })),
    )]);
    let file = set.find("everything").expect("the file is in the set");
    assert_eq!(
        file.defs
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>(),
        ["Point", "Shape"]
    );
    let shape = set.ir.node(file.defs[1].1);
    match &shape.shape {
        Shape::OneOf {
            discriminators,
            branches,
            ..
        } => {
            assert_eq!(*discriminators, ["kind"]);
            let tags: Vec<_> = branches.iter().map(|b| b.tag_text()).collect();
            assert_eq!(tags, [Some("circle"), Some("square"), None]);
        }
        other => panic!("expected a oneOf, got {other:?}"),
    }
    // Absent additionalProperties is normalised to closed; the declared map stays open.
    assert_eq!(
        file.normalised["properties"]["tags"]["items"].get("additionalProperties"),
        None
    );
    assert_eq!(
        file.normalised["$defs"]["Point"]["additionalProperties"],
        false
    );
    assert_eq!(
        file.normalised["properties"]["labels"]["additionalProperties"],
        json!({"type": "string"})
    );
}

#[test]
fn defs_only_file_has_no_root() {
    let set = load(&[(
        "common.schema.json",
        schema(json!({"title": "Common", "$defs": {"Id": {"type": "string", "minLength": 1}}})),
    )]);
    let file = set.find("common").unwrap();
    assert!(file.root.is_none());
    assert_eq!(file.defs.len(), 1);
}

#[test]
fn cross_file_ref_by_relative_file_name() {
    let set = load(&[
        (
            "a.schema.json",
            schema(
                json!({"type": "object", "properties": {"id": {"$ref": "common.schema.json#/$defs/Id"}, "b": {"$ref": "./b.schema.json"}}}),
            ),
        ),
        ("b.schema.json", schema(json!({"type": "string"}))),
        (
            "common.schema.json",
            schema(json!({"$defs": {"Id": {"type": "string", "minLength": 1}}})),
        ),
    ]);
    assert_eq!(set.files.len(), 3);
    let a = set.find("a").and_then(|f| f.root).unwrap();
    assert!(validate(&set, a, &json!({"id": "x", "b": "y"})).is_empty());
    assert_eq!(validate(&set, a, &json!({"id": ""})).len(), 1);
    // The IR resolves both references to the nodes they name.
    let Shape::Object { properties, .. } = &set.ir.node(a).shape else {
        panic!("a is an object")
    };
    let shapes: Vec<&Shape> = properties
        .iter()
        .map(|p| &set.ir.node(set.ir.resolve(p.node)).shape)
        .collect();
    assert!(matches!(
        shapes[..],
        [
            Shape::String { lengths: l, .. },
            Shape::String { lengths: m, .. }
        ] if l.min == Some(1) && m.min.is_none()
    ));
}

/// What the set's interpreter says of `value` at node `id`.
fn validate(set: &SchemaSet, id: NodeId, value: &Value) -> Vec<perago_schema::Violation> {
    let validator = set.validator().expect("the set compiles");
    validator
        .at(&set.ir.node(id).location)
        .expect("the node was compiled")
        .validate_value(value)
}

#[test]
fn cross_file_ref_by_id() {
    let set = load(&[
        (
            "a.schema.json",
            schema(json!({
                "$id": "https://example.com/schemas/a.schema.json",
                "type": "object",
                "properties": {"x": {"$ref": "b.schema.json#/$defs/X"}, "y": {"$ref": "https://example.com/schemas/b.schema.json#/$defs/X"}}
            })),
        ),
        (
            "b.schema.json",
            schema(
                json!({"$id": "https://example.com/schemas/b.schema.json", "$defs": {"X": {"type": "integer"}}}),
            ),
        ),
    ]);
    let a = set
        .find("https://example.com/schemas/a.schema.json")
        .and_then(|f| f.root)
        .unwrap();
    assert!(validate(&set, a, &json!({"x": 1, "y": 2})).is_empty());
    assert_eq!(validate(&set, a, &json!({"x": 1, "y": "2"})).len(), 1);
}

#[test]
fn one_of_discriminator_through_refs_in_another_file() {
    // The branch is in b.schema.json, and its tag property is a `$ref` relative to that file.
    let set = load(&[
        (
            "a.schema.json",
            schema(
                json!({"oneOf": [{"$ref": "b.schema.json#/$defs/Circle"}, {"type": "object", "properties": {"kind": {"const": "square"}}, "required": ["kind"]}]}),
            ),
        ),
        (
            "b.schema.json",
            schema(json!({"$defs": {
                "Circle": {"type": "object", "properties": {"kind": {"$ref": "#/$defs/CircleKind"}}, "required": ["kind"]},
                "CircleKind": {"const": "circle"}
            }})),
        ),
    ]);
    let a = set.find("a").and_then(|f| f.root).unwrap();
    match &set.ir.node(a).shape {
        Shape::OneOf {
            discriminators,
            branches,
            ..
        } => {
            assert_eq!(*discriminators, ["kind"]);
            assert_eq!(
                branches.iter().map(|b| b.tag_text()).collect::<Vec<_>>(),
                [Some("circle"), Some("square")]
            );
        }
        other => panic!("expected a oneOf, got {other:?}"),
    }
}

#[test]
fn one_of_untagged_branch_may_come_first() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({"oneOf": [{"type": "object"}, branch("b")]})),
    )]);
    let a = set.find("a").and_then(|f| f.root).unwrap();
    assert!(
        matches!(&set.ir.node(a).shape, Shape::OneOf { discriminators, .. } if *discriminators == ["kind"])
    );
}

// ---------------------------------------------------------------------------------------------
// Files on disk

#[test]
fn load_file_follows_sibling_refs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.schema.json"),
        schema(json!({"type": "object", "properties": {"b": {"$ref": "b.schema.json#/$defs/B"}}})),
    )
    .unwrap();
    fs::write(
        dir.path().join("b.schema.json"),
        schema(json!({"$defs": {"B": {"type": "boolean"}}})),
    )
    .unwrap();
    let set = SchemaSet::load_file(&dir.path().join("a.schema.json")).unwrap();
    let names: Vec<_> = set.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(names, ["a.schema.json", "b.schema.json"]);
}

#[test]
fn load_dir_loads_every_json_file_sorted() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("z.schema.json"),
        schema(json!({"type": "string"})),
    )
    .unwrap();
    fs::write(
        dir.path().join("m.json"),
        schema(json!({"type": "object", "properties": {"z": {"$ref": "z.schema.json"}}})),
    )
    .unwrap();
    fs::write(
        dir.path().join("a.schema.json"),
        schema(json!({"type": "integer"})),
    )
    .unwrap();
    fs::write(dir.path().join("notes.txt"), "not a schema").unwrap();
    let set = SchemaSet::load_dir(dir.path()).unwrap();
    let names: Vec<_> = set.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(names, ["a.schema.json", "m.json", "z.schema.json"]);
}

#[test]
fn load_dir_reports_lint_errors() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.schema.json"),
        schema(json!({"type": "object", "properties": {"b": {"$ref": "b.schema.json"}}})),
    )
    .unwrap();
    fs::write(
        dir.path().join("c.schema.json"),
        schema(json!({"$ref": "../c.schema.json"})),
    )
    .unwrap();
    let e = SchemaSet::load_dir(dir.path()).unwrap_err();
    assert_snapshot!(e.to_string());
}

#[test]
fn load_file_reports_a_referenced_file_that_is_not_json() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.schema.json"),
        schema(json!({"$ref": "b.schema.json"})),
    )
    .unwrap();
    fs::write(dir.path().join("b.schema.json"), "{\"type\": }").unwrap();
    let e = SchemaSet::load_file(&dir.path().join("a.schema.json")).unwrap_err();
    assert_snapshot!(e.to_string());
}

#[test]
fn load_file_missing_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.schema.json");
    match SchemaSet::load_file(&path) {
        Err(Error::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// allOf merged into one object; object rules

#[test]
fn all_of_of_objects_loads_as_one_merged_object() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "object",
            "allOf": [
                {"$ref": "#/$defs/Base"},
                {"properties": {"b": {"type": "integer"}, "a": {"type": "string"}}, "required": ["a"]}
            ],
            "$defs": {"Base": {"type": "object", "properties": {"a": {"type": "string"}}}}
        })),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Object {
        properties, rules, ..
    } = &set.ir.node(root).shape
    else {
        panic!("the allOf is one object");
    };
    let names: Vec<(&str, bool)> = properties
        .iter()
        .map(|p| (p.name.as_str(), p.required))
        .collect();
    assert_eq!(names, [("a", true), ("b", false)]);
    assert!(rules.unknown_last, "closed over all parts, after them");
    // The normalised form closes the merge, not its parts: the base is written out in place.
    assert_eq!(
        set.files[0].normalised["unevaluatedProperties"],
        json!(false)
    );
    assert!(
        set.files[0].normalised["allOf"][1]
            .get("additionalProperties")
            .is_none()
    );
}

#[test]
fn all_of_property_declared_differently_names_both_places() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "allOf": [
            {"$ref": "#/$defs/Base"},
            {"properties": {"id": {"type": "integer"}}}
        ],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}}}}
    })));
}

#[test]
fn all_of_base_with_additional_properties() {
    assert_snapshot!(outcome(json!({
        "allOf": [
            {"$ref": "#/$defs/Base"},
            {"type": "object", "properties": {"b": {"type": "integer"}}}
        ],
        "$defs": {"Base": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}}
    })));
}

#[test]
fn all_of_without_an_object_type_and_undeclared_names() {
    assert_snapshot!(outcome(json!({
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["b"]},
            {"properties": {"c": {"type": "string"}}, "dependentRequired": {"c": ["d"]}}
        ],
        "items": {"type": "string"}
    })));
}

#[test]
fn all_of_in_a_one_of_branch() {
    assert_snapshot!(outcome(json!({
        "oneOf": [
            {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"], "allOf": [{"type": "object"}]}
        ]
    })));
}

#[test]
fn all_of_cycle() {
    assert_snapshot!(lint(json!({
        "$ref": "#/$defs/A",
        "$defs": {"A": {"type": "object", "allOf": [{"$ref": "#/$defs/A"}]}}
    })));
}

#[test]
fn object_rules_load() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "minProperties": 1,
            "maxProperties": 2,
            "dependentRequired": {"a": ["b"]}
        })),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Object { rules, .. } = &set.ir.node(root).shape else {
        panic!("an object");
    };
    use perago_codegen::ir::Step;
    assert_eq!(
        rules.steps,
        [
            Step::Property(0, false),
            Step::Property(1, false),
            Step::Count(Some(1), Some(2)),
            Step::DependentRequired(0, vec![1])
        ]
    );
}

#[test]
fn object_rules_malformed() {
    assert_snapshot!(lint(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "minProperties": 3,
        "maxProperties": 1.5,
        "dependentRequired": {"a": ["a", "a", "z"], "y": "a"},
        "$defs": {
            "Map": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
            "Text": {"type": "string", "maxProperties": 1}
        }
    })));
}

#[test]
fn checked_maps_load() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "object",
            "patternProperties": {"^x-": {"type": "integer"}},
            "propertyNames": {"maxLength": 8},
            "maxProperties": 4
        })),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Map {
        pattern,
        names,
        max,
        ..
    } = &set.ir.node(root).shape
    else {
        panic!("a checked map");
    };
    assert_eq!(pattern.as_ref().map(|p| p.source()), Some("^x-"));
    assert!(names.is_some());
    assert_eq!(*max, Some(4));
}

#[test]
fn checked_maps_deferred() {
    assert_snapshot!(outcome(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "propertyNames": {"maxLength": 3},
        "$defs": {
            "Two": {"type": "object", "patternProperties": {"^a": {"type": "string"}, "^b": {"type": "string"}}},
            "Rest": {"type": "object", "patternProperties": {"^a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
            "Closed": {"type": "object", "propertyNames": {"maxLength": 3}},
            "Numbers": {"type": "object", "additionalProperties": true, "propertyNames": {"type": "integer"}}
        }
    })));
}

#[test]
fn fixed_tuples_load() {
    let set = load(&[(
        "a.schema.json",
        schema(json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": false,
            "minItems": 2
        })),
    )]);
    let root = set.files[0].root.expect("a root");
    let Shape::Tuple { items, .. } = &set.ir.node(root).shape else {
        panic!("a tuple");
    };
    assert_eq!(items.len(), 2);
}

#[test]
fn tuples_deferred() {
    assert_snapshot!(outcome(json!({
        "type": "object",
        "properties": {
            "rest": {"type": "array", "prefixItems": [{"type": "string"}], "items": [{"type": "integer"}], "minItems": 1},
            "short": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}], "items": false},
            "long": {"type": "array", "prefixItems": [{}, {}, {}, {}, {}, {}, {}], "items": false, "minItems": 7},
            "empty": {"type": "array", "prefixItems": []}
        }
    })));
}

/// A `type` array of scalar types is a union of JSON types: a branch per type, in the order
/// written, each with the keywords that apply to it.
#[test]
fn type_arrays_of_scalars_are_unions() {
    use perago_codegen::ir::Kind;
    let kinds = |body: Value| {
        let set = load(&[("a.schema.json", schema(body))]);
        let root = set.files[0].root.expect("a root");
        match &set.ir.node(root).shape {
            Shape::Union(branches) => branches.iter().map(|b| b.kind).collect::<Vec<_>>(),
            other => panic!("not a union: {other:?}"),
        }
    };
    assert_eq!(
        kinds(json!({"type": ["string", "integer", "null"], "minLength": 1})),
        [Kind::String, Kind::Integer, Kind::Null]
    );
    assert_eq!(
        kinds(json!({"type": ["boolean", "number"], "minimum": 0})),
        [Kind::Boolean, Kind::Number]
    );
}

/// `integer` and `number` overlap, and objects or arrays beside other types are no union
/// generated code types: those are deferred to the interpreter.
#[test]
fn type_arrays_that_overlap_or_have_containers_are_deferred() {
    assert_snapshot!(outcome(json!({
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "number"]},
            "s": {"type": ["string", "object"]}
        }
    })));
}

// ---------------------------------------------------------------------------------------------
// OpenAPI's `discriminator`, as Pydantic writes it

/// A Pydantic model of a discriminated union's branch: `kind` tagged by `tag` (a `const`, or
/// an `enum` for several values), closed.
fn pydantic_branch(tag: Value, other: &str) -> Value {
    let kind = match tag {
        Value::Array(values) => json!({"enum": values, "title": "Kind", "type": "string"}),
        one => json!({"const": one, "title": "Kind", "type": "string"}),
    };
    json!({
        "additionalProperties": false,
        "properties": {"kind": kind, other: {"type": "integer"}, "note": {"type": "string", "const": other}},
        "required": ["kind", other],
        "title": other,
        "type": "object"
    })
}

/// `Field(discriminator="kind")` over two models, as Pydantic 2 writes it: `oneOf` of `$ref`s
/// and a `discriminator` whose `mapping` names them.
fn pydantic_union(mapping: Value) -> Value {
    json!({
        "$defs": {"Cat": pydantic_branch(json!("cat"), "meows"), "Dog": pydantic_branch(json!(["dog", "puppy"]), "barks")},
        "type": "object",
        "additionalProperties": false,
        "properties": {"pet": {
            "discriminator": {"mapping": mapping, "propertyName": "kind"},
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "title": "Pet"
        }},
        "required": ["pet"]
    })
}

/// The interpreter's refusal of a schema, as `perago validate` reports it.
fn interpreter_errors(text: &str) -> String {
    match perago_schema::Validator::load_sources(
        [("a.schema.json", text)],
        "a.schema.json",
        perago_schema::Options::default(),
    ) {
        Ok(_) => panic!("expected the interpreter to refuse {text}"),
        Err(e) => e.to_string(),
    }
}

/// A `discriminator` that agrees with its branches types the union by its property, although
/// another property (`note`) tags the branches too and comes first in neither; the
/// interpreter takes it.
#[test]
fn discriminator_types_the_union_by_its_property() {
    let body =
        pydantic_union(json!({"cat": "#/$defs/Cat", "dog": "#/$defs/Dog", "puppy": "#/$defs/Dog"}));
    let mut body = body;
    // `note` first in each branch: without the discriminator, it would be the tag.
    for def in ["Cat", "Dog"] {
        let props = body["$defs"][def]["properties"].as_object_mut().unwrap();
        let note = props.shift_remove("note").unwrap();
        props.shift_insert(0, "note".to_owned(), note);
        body["$defs"][def]["required"]
            .as_array_mut()
            .unwrap()
            .push(json!("note"));
    }
    let text = schema(body);
    let set = load(&[("a.schema.json", text.clone())]);
    let pet = set
        .ir
        .nodes()
        .find(|(_, n)| n.location == "a.schema.json#/properties/pet")
        .map(|(_, n)| &n.shape)
        .expect("the pet node");
    let Shape::OneOf {
        discriminators,
        branches,
        ..
    } = pet
    else {
        panic!("pet is a oneOf, found {pet:?}");
    };
    assert_eq!(discriminators, &["kind".to_owned()]);
    let tags: Vec<Vec<Value>> = branches
        .iter()
        .map(|b| b.tag.as_ref().expect("tagged").values.clone())
        .collect();
    assert_eq!(
        tags,
        [vec![json!("cat")], vec![json!("dog"), json!("puppy")]]
    );
    perago_schema::Validator::load_sources(
        [("a.schema.json", text.as_str())],
        "a.schema.json",
        perago_schema::Options::default(),
    )
    .expect("the interpreter takes it");
}

/// Every contradiction is an error at its JSON Pointer, the same from codegen and from the
/// interpreter (one check, `perago_schema::one_of::discriminator`).
#[test]
fn discriminator_contradictions() {
    let mut cases = vec![
        // A mapping value that names no branch, and a key the branch it names does not tag.
        pydantic_union(
            json!({"cat": "#/$defs/Dog", "dog": "#/$defs/Bird", "puppy": 7, "x": "#/$defs/Fish"}),
        ),
    ];
    cases[0]["$defs"]["Bird"] = json!({"type": "object"});
    // A propertyName the branches do not tag.
    let mut other = pydantic_union(json!({}));
    other["properties"]["pet"]["discriminator"]["propertyName"] = json!("barks");
    cases.push(other);
    // Two branches with one tag.
    let mut twice = pydantic_union(json!({}));
    twice["$defs"]["Dog"]["properties"]["kind"] = json!({"enum": ["dog", "cat"], "type": "string"});
    cases.push(twice);
    // Not required in one branch.
    let mut optional = pydantic_union(json!({}));
    optional["$defs"]["Cat"]["required"] = json!(["meows"]);
    cases.push(optional);
    // Beside no oneOf, and malformed.
    cases.push(json!({"type": "object", "discriminator": {"propertyName": "kind"}}));
    cases.push(json!({"oneOf": [{"type": "object"}], "discriminator": {"mapping": {}}}));
    cases.push(json!({"oneOf": [{"type": "object"}], "discriminator": {"propertyName": "kind", "extra": 1}}));
    let mut seen = String::new();
    for body in cases {
        let text = schema(body);
        let codegen = errors(&[("a.schema.json", text.clone())]);
        let interpreter = interpreter_errors(&text);
        let ours: Vec<&str> = codegen
            .lines()
            .filter(|l| l.contains("discriminator"))
            .collect();
        let theirs: Vec<&str> = interpreter
            .lines()
            .filter(|l| l.contains("discriminator"))
            .collect();
        assert_eq!(
            ours, theirs,
            "codegen:\n{codegen}\ninterpreter:\n{interpreter}"
        );
        assert!(!codegen.contains("perago validate"), "{codegen}");
        seen.push_str(&codegen);
        seen.push_str("\n---\n");
    }
    assert_snapshot!(seen);
}
