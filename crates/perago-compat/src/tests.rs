//! The comparison on small schemas, one family of keywords at a time.

use super::*;
use serde_json::{Value, json};

fn schema(body: Value) -> Schema {
    let mut body = body;
    if let Value::Object(map) = &mut body {
        map.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
    }
    Schema::from_value("s.json", &body).expect("a valid schema")
}

/// The changes from A to B, as `code effect path`, and the witnesses.
fn changes(a: Value, b: Value) -> Vec<(String, Option<Value>)> {
    let (a, b) = (schema(a), schema(b));
    let labels = Labels {
        a: "OLD".into(),
        b: "NEW".into(),
    };
    compare(&a, &Loc::root(), &b, &Loc::root(), &labels)
        .into_iter()
        .map(|c| {
            if let Some(w) = &c.witness {
                assert_eq!(a.accepts(&Loc::root(), w), Some(true), "{w}");
                assert_eq!(b.accepts(&Loc::root(), w), Some(false), "{w}");
            }
            (
                format!("{} {:?} {}", c.code, c.effect, json_path(&c.path)),
                c.witness,
            )
        })
        .collect()
}

fn codes(a: Value, b: Value) -> Vec<String> {
    changes(a, b).into_iter().map(|(c, _)| c).collect()
}

#[test]
fn identical_schemas_have_no_changes() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    assert!(codes(s.clone(), s).is_empty());
}

#[test]
fn a_nullable_value_into_a_non_null_one_breaks_with_null() {
    let got = changes(
        json!({"type": ["string", "null"]}),
        json!({"type": "string"}),
    );
    assert_eq!(
        got,
        [("type_narrowed Breaking $".into(), Some(Value::Null))]
    );
}

#[test]
fn integers_into_numbers_fit_and_numbers_into_integers_break() {
    assert_eq!(
        codes(json!({"type": "integer"}), json!({"type": "number"})),
        ["type_widened Compatible $"]
    );
    let got = changes(json!({"type": "number"}), json!({"type": "integer"}));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "type_narrowed Breaking $");
    assert!(
        got[0]
            .1
            .as_ref()
            .is_some_and(|w| w.as_f64().unwrap().fract() != 0.0)
    );
}

#[test]
fn required_added_breaks_and_removed_is_compatible() {
    let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
    let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"], "additionalProperties": false});
    assert_eq!(
        codes(old.clone(), new.clone()),
        ["required_added Breaking $.b"]
    );
    assert_eq!(codes(new, old), ["required_removed Compatible $.b"]);
}

#[test]
fn members_of_closed_and_open_objects() {
    let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    let more = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "additionalProperties": false});
    assert_eq!(
        codes(closed.clone(), more.clone()),
        ["property_added Compatible $.b"]
    );
    let got = changes(more, closed.clone());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "property_removed Breaking $.b");
    assert_eq!(got[0].1.as_ref().unwrap()["b"], json!(0));
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(
        codes(open.clone(), closed.clone()),
        ["additional_properties_narrowed Breaking $.*"]
    );
    assert_eq!(
        codes(closed, open),
        ["additional_properties_widened Compatible $.*"]
    );
}

#[test]
fn a_member_added_to_an_open_object_constrains_what_was_free() {
    let open = json!({"type": "object"});
    let typed = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let got = codes(open, typed);
    assert!(
        got.contains(&"type_narrowed Breaking $.n".to_owned()),
        "{got:?}"
    );
}

#[test]
fn enum_values_removed_break_with_the_value() {
    let got = changes(
        json!({"enum": ["a", "b", "c"]}),
        json!({"enum": ["a", "b"]}),
    );
    assert_eq!(
        got,
        [("enum_value_removed Breaking $".into(), Some(json!("c")))]
    );
    assert_eq!(
        codes(json!({"enum": ["a"]}), json!({"enum": ["a", "b"]})),
        ["enum_value_added Compatible $"]
    );
    assert_eq!(
        codes(json!({"type": "boolean"}), json!({"enum": [true, false]})),
        Vec::<String>::new()
    );
}

#[test]
fn bounds_tightened_break_and_loosened_fit() {
    let got = changes(
        json!({"type": "integer", "minimum": 0}),
        json!({"type": "integer", "minimum": 1}),
    );
    assert_eq!(got, [("bound_tightened Breaking $".into(), Some(json!(0)))]);
    assert_eq!(
        codes(
            json!({"type": "integer", "minimum": 1}),
            json!({"type": "integer", "minimum": 0})
        ),
        ["bound_loosened Compatible $"]
    );
    assert_eq!(
        codes(
            json!({"type": "string", "maxLength": 5}),
            json!({"type": "string", "maxLength": 3})
        ),
        ["bound_tightened Breaking $"]
    );
    assert_eq!(
        codes(
            json!({"type": "number", "exclusiveMinimum": 0}),
            json!({"type": "number", "minimum": 0})
        ),
        ["bound_loosened Compatible $"]
    );
    assert_eq!(
        codes(
            json!({"type": "array", "maxItems": 2}),
            json!({"type": "array", "maxItems": 1})
        ),
        ["bound_tightened Breaking $"]
    );
}

#[test]
fn a_pattern_added_breaks_with_a_witness_or_is_unproven() {
    assert_eq!(
        codes(
            json!({"type": "string"}),
            json!({"type": "string", "pattern": "^x"})
        ),
        ["pattern_changed Breaking $"]
    );
    // Every guess matches both: the analysis cannot tell.
    assert_eq!(
        codes(
            json!({"type": "string", "pattern": "^a"}),
            json!({"type": "string", "pattern": "^a+$"})
        ),
        ["pattern_changed Unproven $"]
    );
}

#[test]
fn nullable_unions_as_pydantic_writes_them() {
    let optional = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    assert!(codes(json!({"type": "string"}), optional.clone()).is_empty());
    assert!(codes(json!({"type": ["string", "null"]}), optional.clone()).is_empty());
    let got = changes(optional, json!({"type": "string"}));
    assert_eq!(
        got,
        [("type_narrowed Breaking $".into(), Some(Value::Null))]
    );
}

#[test]
fn a_branch_of_a_tagged_one_of_fits_the_union() {
    let defs = json!({
        "Done": {"type": "object", "properties": {"kind": {"const": "done"}, "n": {"type": "integer"}}, "required": ["kind", "n"], "additionalProperties": false},
        "Refused": {"type": "object", "properties": {"kind": {"const": "refused"}, "why": {"type": "string"}}, "required": ["kind", "why"], "additionalProperties": false}
    });
    let union =
        json!({"$defs": defs, "oneOf": [{"$ref": "#/$defs/Done"}, {"$ref": "#/$defs/Refused"}]});
    assert!(codes(union.clone(), union.clone()).is_empty());
    let done_only = json!({"$defs": defs, "$ref": "#/$defs/Done"});
    assert!(codes(done_only.clone(), union.clone()).is_empty());
    // The refusal branch, against the completion alone: its tag, and each member that differs.
    let got = codes(union, done_only);
    assert!(
        got.contains(&"enum_value_removed Breaking $.kind".to_owned()),
        "{got:?}"
    );
    assert!(
        got.contains(&"required_added Breaking $.n".to_owned()),
        "{got:?}"
    );
}

#[test]
fn recursive_schemas_end() {
    let tree = json!({"$defs": {"Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, "additionalProperties": false}}, "$ref": "#/$defs/Tree"});
    assert!(codes(tree.clone(), tree).is_empty());
}

#[test]
fn keywords_not_compared_are_unproven_unless_the_same() {
    let got = codes(
        json!({"type": "object"}),
        json!({"type": "object", "minProperties": 1}),
    );
    assert_eq!(got, ["keyword_unproven Breaking $"]);
    assert!(
        codes(
            json!({"not": {"type": "null"}}),
            json!({"not": {"type": "null"}})
        )
        .is_empty()
    );
    assert_eq!(
        codes(
            json!({"type": "string"}),
            json!({"type": "string", "not": {"const": "zz"}})
        ),
        ["keyword_unproven Unproven $"]
    );
}

#[test]
fn nested_changes_carry_their_path_and_a_whole_witness() {
    let old = json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": ["integer", "null"]}}, "required": ["id"], "additionalProperties": false}}}, "required": ["items"], "additionalProperties": false});
    let new = json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}}}, "required": ["items"], "additionalProperties": false});
    let got = changes(old, new);
    assert_eq!(
        got,
        [(
            "type_narrowed Breaking $.items[*].id".into(),
            Some(json!({"items": [{"id": null}]}))
        )]
    );
}

fn evolution(old: Value, new: Value, direction: Direction) -> Vec<String> {
    let (old, new) = (schema(old), schema(new));
    evolve(&old, &new, direction)
        .into_iter()
        .map(|e| {
            if let Some(w) = &e.witness {
                // Params: the old accepts the witness, the new refuses it; a result the other way.
                let (yes, no) = match e.direction {
                    Direction::Output => (&new, &old),
                    _ => (&old, &new),
                };
                assert_eq!(yes.accepts(&Loc::root(), w), Some(true), "{w}");
                assert_eq!(no.accepts(&Loc::root(), w), Some(false), "{w}");
            }
            format!(
                "{} {} {}",
                e.pointer,
                e.code_text(),
                if e.effect.breaks() {
                    "breaking"
                } else {
                    "compatible"
                }
            )
        })
        .collect()
}

#[test]
fn a_member_added_is_compatible_for_params_and_breaking_for_a_result() {
    let old = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "additionalProperties": false});
    assert_eq!(
        evolution(old.clone(), new.clone(), Direction::Input),
        [" property_added compatible"]
    );
    assert_eq!(
        evolution(old.clone(), new.clone(), Direction::Output),
        [" property_added breaking"]
    );
    assert_eq!(
        evolution(old, new, Direction::Both),
        [" property_added breaking"]
    );
}

#[test]
fn a_type_widened_is_compatible_for_params_and_breaking_for_a_result() {
    let old = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
    let new = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"], "additionalProperties": false});
    assert_eq!(
        evolution(old.clone(), new.clone(), Direction::Input),
        ["/properties/a type_widened compatible"]
    );
    assert_eq!(
        evolution(old, new, Direction::Output),
        ["/properties/a type_widened breaking"]
    );
}

#[test]
fn one_of_branches_added_and_removed() {
    let a = json!({"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"], "additionalProperties": false});
    let b = json!({"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"], "additionalProperties": false});
    let old = json!({"oneOf": [a.clone()]});
    let new = json!({"oneOf": [a, b]});
    assert_eq!(
        evolution(old.clone(), new.clone(), Direction::Input),
        ["/oneOf/1 branch_added compatible"]
    );
    assert_eq!(
        evolution(old.clone(), new.clone(), Direction::Output),
        ["/oneOf/1 branch_added breaking"]
    );
    assert_eq!(
        evolution(new, old, Direction::Input),
        ["/oneOf/1 branch_removed breaking"]
    );
}

#[test]
fn an_overlapping_branch_breaks_a_one_of() {
    let old = json!({"oneOf": [{"type": "integer"}, {"type": "string"}]});
    let new = json!({"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "number"}]});
    let got = evolution(old, new, Direction::Input);
    assert!(
        got.contains(&" branch_overlap breaking".to_owned()),
        "{got:?}"
    );
}

#[test]
fn unevaluated_properties_close_an_object_only_without_applicators_beside_it() {
    // Closed by `unevaluatedProperties` alone: as `additionalProperties: false`.
    let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "unevaluatedProperties": false});
    let new = json!({"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": false});
    assert_eq!(codes(old, new), ["property_removed Breaking $.b"]);
    // Beside an `allOf`, what is evaluated depends on the parts: the same keyword on both
    // sides proves nothing.
    let old = json!({"allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "string"}}}], "unevaluatedProperties": false});
    let new = json!({"allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {}}], "unevaluatedProperties": false});
    let got = changes(old, new);
    assert!(
        got.iter().any(|(c, _)| c.starts_with("keyword_unproven")),
        "{got:?}"
    );
    assert!(!compatible_codes(&got));
}

fn compatible_codes(got: &[(String, Option<Value>)]) -> bool {
    got.iter().all(|(c, _)| c.contains(" Compatible "))
}
