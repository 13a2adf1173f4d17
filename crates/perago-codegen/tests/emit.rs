//! Snapshot tests of the generator: one small schema per keyword and per shape, emitted to Rust
//! and compared with the reviewed output under `tests/snapshots/`.
//!
//! Accept changes with `INSTA_UPDATE=always cargo test -p perago-codegen --test emit`, then read
//! every changed `.snap` before committing it.

use perago_codegen::SchemaSet;
use perago_codegen::emit::emit;
use serde_json::{Value, json};

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema text with `"$schema"` first, then the given keywords.
fn schema(body: Value) -> String {
    let mut map = serde_json::Map::new();
    map.insert("$schema".to_owned(), json!(DIALECT));
    map.extend(body.as_object().expect("a schema object").clone());
    serde_json::to_string_pretty(&Value::Object(map)).expect("JSON")
}

/// Emits a set of in-memory schema files; several modules are joined with a banner each.
fn emit_files(files: &[(&str, Value)]) -> String {
    let texts: Vec<(&str, String)> = files
        .iter()
        .map(|(name, body)| (*name, schema(body.clone())))
        .collect();
    let set = SchemaSet::load_sources(texts.iter().map(|(name, text)| (*name, text.as_str())))
        .unwrap_or_else(|e| panic!("the schemas should load:\n{e}"));
    let modules = emit(&set);
    if let Ok(dir) = std::env::var("PERAGO_EMIT_DUMP") {
        dump(std::path::Path::new(&dir), &texts, &modules);
    }
    if let [module] = modules.as_slice() {
        return module.source.clone();
    }
    modules
        .iter()
        .map(|m| {
            format!(
                "// ===== mod {} (from {}) =====\n{}",
                m.name, m.file, m.source
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// With `PERAGO_EMIT_DUMP=<dir>`, each test also writes its schemas and modules to
/// `<dir>/<test name>/`, so a scratch crate can compile the generated code and compare it with
/// the interpreter (`Ir::validate`) on many documents.
fn dump(dir: &std::path::Path, texts: &[(&str, String)], modules: &[perago_codegen::emit::Module]) {
    let dir = dir.join(std::thread::current().name().unwrap_or("unnamed"));
    std::fs::create_dir_all(&dir).expect("create the dump directory");
    for (name, text) in texts {
        std::fs::write(dir.join(name), text).expect("write a schema");
    }
    for m in modules {
        std::fs::write(dir.join(format!("{}.rs", m.name)), &m.source).expect("write a module");
    }
}

/// Emits one schema file.
fn emit_one(file: &str, body: Value) -> String {
    emit_files(&[(file, body)])
}

// ---------------------------------------------------------------------------------------------
// Scalars

#[test]
fn string_lengths_and_pattern() {
    let source = emit_one(
        "strings.schema.json",
        json!({
            "title": "Strings",
            "type": "object",
            "properties": {
                "plain": {"type": "string"},
                "min": {"type": "string", "minLength": 1},
                "max": {"type": "string", "maxLength": 8},
                "both": {"type": "string", "minLength": 2, "maxLength": 4},
                "pattern": {"type": "string", "pattern": "^[a-z]+$"},
                "all": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+$", "description": "Reuses the compiled pattern."},
                "other_pattern": {"type": "string", "pattern": "\\d{3}\"'"}
            },
            "required": ["plain", "min", "max", "both", "pattern", "all", "other_pattern"]
        }),
    );
    insta::assert_snapshot!("string_lengths_and_pattern", source);
}

#[test]
fn integer_bounds() {
    let source = emit_one(
        "integers.schema.json",
        json!({
            "title": "Integers",
            "type": "object",
            "properties": {
                "unbounded": {"type": "integer"},
                "minimum": {"type": "integer", "minimum": 0},
                "maximum": {"type": "integer", "maximum": 10},
                "exclusive_minimum": {"type": "integer", "exclusiveMinimum": 0},
                "exclusive_maximum": {"type": "integer", "exclusiveMaximum": 10},
                "every_bound": {"type": "integer", "minimum": -5, "maximum": 5, "exclusiveMinimum": -6, "exclusiveMaximum": 6}
            },
            "required": ["unbounded", "minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "every_bound"]
        }),
    );
    insta::assert_snapshot!("integer_bounds", source);
}

#[test]
fn number_bounds() {
    let source = emit_one(
        "numbers.schema.json",
        json!({
            "title": "Numbers",
            "type": "object",
            "properties": {
                "unbounded": {"type": "number"},
                "minimum": {"type": "number", "minimum": 0.5},
                "maximum": {"type": "number", "maximum": 1},
                "exclusive_minimum": {"type": "number", "exclusiveMinimum": -1.25},
                "exclusive_maximum": {"type": "number", "exclusiveMaximum": 100},
                "every_bound": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": -0.5, "exclusiveMaximum": 1.5}
            },
            "required": ["unbounded", "minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "every_bound"]
        }),
    );
    insta::assert_snapshot!("number_bounds", source);
}

#[test]
fn boolean_and_null() {
    let source = emit_one(
        "flags.schema.json",
        json!({
            "title": "Flags",
            "type": "object",
            "properties": {
                "flag": {"type": "boolean"},
                "nothing": {"type": "null"},
                "maybe_flag": {"type": "boolean"}
            },
            "required": ["flag", "nothing"]
        }),
    );
    insta::assert_snapshot!("boolean_and_null", source);
}

// ---------------------------------------------------------------------------------------------
// const and enum

#[test]
fn const_string() {
    let source = emit_files(&[
        // A root string const: a unit type named after the file.
        (
            "api-version.schema.json",
            json!({"const": "v1", "description": "The only version."}),
        ),
        (
            "tagged.schema.json",
            json!({
                "title": "Tagged",
                "type": "object",
                "properties": {
                    "kind": {"const": "tagged"},
                    "quoted": {"const": "say \"hi\""}
                },
                "required": ["kind"]
            }),
        ),
    ]);
    insta::assert_snapshot!("const_string", source);
}

#[test]
fn const_non_string() {
    let source = emit_one(
        "constants.schema.json",
        json!({
            "title": "Constants",
            "type": "object",
            "properties": {
                "answer": {"const": 42},
                "yes": {"const": true},
                "nothing": {"const": null},
                "list": {"const": [1, "two"]},
                "object": {"const": {"a": 1}},
                "same_answer": {"const": 42}
            },
            "required": ["answer", "yes", "nothing", "list", "object"]
        }),
    );
    insta::assert_snapshot!("const_non_string", source);
}

#[test]
fn string_enum() {
    let source = emit_one(
        "colour.schema.json",
        json!({
            "title": "Palette",
            "type": "object",
            "properties": {
                "primary": {"enum": ["red", "green", "dark-blue"], "description": "A primary colour."},
                "secondary": {"type": "string", "enum": ["a-b", "a_b", "A B", "1st"]}
            },
            "required": ["primary"],
            "$defs": {
                "Shade": {"enum": ["light", "dark"]}
            }
        }),
    );
    insta::assert_snapshot!("string_enum", source);
}

#[test]
fn mixed_enum() {
    let source = emit_one(
        "mixed.schema.json",
        json!({
            "title": "Mixed",
            "type": "object",
            "properties": {
                "value": {"enum": ["auto", 1, 2.5, true, null]},
                "numbers": {"enum": [1, 2, 3]}
            },
            "required": ["value"]
        }),
    );
    insta::assert_snapshot!("mixed_enum", source);
}

// ---------------------------------------------------------------------------------------------
// Arrays

#[test]
fn arrays() {
    let source = emit_one(
        "lists.schema.json",
        json!({
            "title": "Lists",
            "type": "object",
            "properties": {
                "anything": {"type": "array"},
                "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 3},
                "at_least": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
                "at_most": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                "matrix": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1},
                    "maxItems": 4
                },
                "points": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
                }
            },
            "required": ["anything", "tags", "matrix"]
        }),
    );
    insta::assert_snapshot!("arrays", source);
}

// ---------------------------------------------------------------------------------------------
// Objects

#[test]
fn nested_closed_objects() {
    // No `additionalProperties` anywhere: normalisation closes every level.
    let source = emit_one(
        "outer.schema.json",
        json!({
            "title": "Outer",
            "type": "object",
            "properties": {
                "inner": {
                    "type": "object",
                    "description": "Closed although it says nothing about extra keys.",
                    "properties": {
                        "innermost": {
                            "type": "object",
                            "properties": {"leaf": {"type": "string"}},
                            "required": ["leaf"]
                        }
                    },
                    "required": ["innermost"]
                },
                "empty": {"type": "object"}
            },
            "required": ["inner"]
        }),
    );
    insta::assert_snapshot!("nested_closed_objects", source);
}

#[test]
fn map() {
    let source = emit_files(&[
        (
            "labels.schema.json",
            json!({
                "title": "Labelled",
                "type": "object",
                "properties": {
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}},
                    "counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
                    "nested": {
                        "type": "object",
                        "additionalProperties": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}
                    },
                    "any_values": {"type": "object", "additionalProperties": true}
                },
                "required": ["labels"]
            }),
        ),
        // A map at the root.
        (
            "root-map.schema.json",
            json!({"type": "object", "additionalProperties": {"type": "number"}}),
        ),
    ]);
    insta::assert_snapshot!("map", source);
}

#[test]
fn properties_and_additional_properties() {
    let source = emit_one(
        "open.schema.json",
        json!({
            "title": "Open",
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "size": {"type": "integer"}
            },
            "required": ["name"],
            "additionalProperties": {"type": "integer", "maximum": 9}
        }),
    );
    insta::assert_snapshot!("properties_and_additional_properties", source);
}

// ---------------------------------------------------------------------------------------------
// Nullable, optional, default

#[test]
fn nullable_type_array() {
    let source = emit_one(
        "nullable.schema.json",
        json!({
            "title": "Nullable",
            "type": "object",
            "properties": {
                "required_nullable": {"type": ["string", "null"], "minLength": 1},
                "optional_nullable": {"type": ["integer", "null"], "maximum": 3},
                "optional": {"type": "string", "pattern": "^x"},
                "required": {"type": "string"},
                "nullable_object": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}, "required": ["a"]}
            },
            "required": ["required_nullable", "required", "nullable_object"]
        }),
    );
    insta::assert_snapshot!("nullable_type_array", source);
}

#[test]
fn nullable_any_of() {
    let source = emit_one(
        "any-of.schema.json",
        json!({
            "title": "AnyOfNull",
            "type": "object",
            "properties": {
                "required_ref": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
                "optional_ref": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
                "required_inline": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
                "optional_inline": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}, "minItems": 1}]},
                "optional_enum": {"anyOf": [{"enum": ["on", "off"]}, {"type": "null"}]}
            },
            "required": ["required_ref", "required_inline"],
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer", "minimum": 0}},
                    "required": ["x"]
                }
            }
        }),
    );
    insta::assert_snapshot!("nullable_any_of", source);
}

#[test]
fn default_values() {
    let source = emit_one(
        "defaults.schema.json",
        json!({
            "title": "Defaults",
            "type": "object",
            "properties": {
                "retries": {"type": "integer", "minimum": 0, "default": 3},
                "mode": {"enum": ["fast", "slow"], "default": "slow"},
                "name": {"type": "string", "default": "anon"},
                "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
                "limit": {"type": ["integer", "null"], "default": null},
                "type": {"type": "string", "default": "plain"}
            }
        }),
    );
    insta::assert_snapshot!("default_values", source);
}

// ---------------------------------------------------------------------------------------------
// oneOf

#[test]
fn one_of_all_tagged() {
    let source = emit_one(
        "shape.schema.json",
        json!({
            "title": "Shape",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "circle"},
                        "radius": {"type": "number", "exclusiveMinimum": 0}
                    },
                    "required": ["kind", "radius"]
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "square"},
                        "side": {"type": "number", "exclusiveMinimum": 0},
                        "label": {"type": ["string", "null"]}
                    },
                    "required": ["kind", "side"]
                },
                {"$ref": "#/$defs/Empty"}
            ],
            "$defs": {
                "Empty": {
                    "type": "object",
                    "properties": {"kind": {"const": "empty-shape"}},
                    "required": ["kind"]
                }
            }
        }),
    );
    insta::assert_snapshot!("one_of_all_tagged", source);
}

#[test]
fn one_of_untagged_branch() {
    let source = emit_one(
        "outcome.schema.json",
        json!({
            "title": "Outcome",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "status": {"const": "FAILED"},
                        "reason": {"type": "string", "minLength": 1}
                    },
                    "required": ["status", "reason"]
                },
                {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string"},
                        "output": {"type": "object", "additionalProperties": true},
                        "retries": {"type": "integer", "default": 0}
                    },
                    "required": ["output"]
                }
            ]
        }),
    );
    insta::assert_snapshot!("one_of_untagged_branch", source);
}

#[test]
fn one_of_conflicting_field_types() {
    // `value` is a string in one branch and an integer in the other: the typed fast path goes
    // through `serde_json::Value` and the walk.
    let source = emit_one(
        "setting.schema.json",
        json!({
            "title": "Setting",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"type": {"const": "text"}, "value": {"type": "string"}},
                    "required": ["type", "value"]
                },
                {
                    "type": "object",
                    "properties": {"type": {"const": "count"}, "value": {"type": "integer"}},
                    "required": ["type", "value"]
                }
            ]
        }),
    );
    insta::assert_snapshot!("one_of_conflicting_field_types", source);
}

// ---------------------------------------------------------------------------------------------
// $ref

#[test]
fn ref_to_defs() {
    let source = emit_one(
        "order.schema.json",
        json!({
            "title": "Order",
            "type": "object",
            "properties": {
                "id": {"$ref": "#/$defs/Id"},
                "customer": {"$ref": "#/$defs/Customer", "description": "Annotations beside a $ref."},
                "status": {"$ref": "#/$defs/Status"},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}, "minItems": 1}
            },
            "required": ["id", "customer", "lines"],
            "$defs": {
                "Id": {"type": "string", "pattern": "^o-[0-9]+$"},
                "Customer": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "Status": {"enum": ["open", "closed"]},
                "Line": {
                    "type": "object",
                    "properties": {"sku": {"$ref": "#/$defs/Id"}, "qty": {"type": "integer", "minimum": 1}},
                    "required": ["sku", "qty"]
                }
            }
        }),
    );
    insta::assert_snapshot!("ref_to_defs", source);
}

#[test]
fn ref_across_files() {
    let source = emit_files(&[
        (
            "envelope.schema.json",
            json!({
                "title": "Envelope",
                "type": "object",
                "properties": {
                    "address": {"$ref": "common.schema.json#/$defs/Address"},
                    "priority": {"$ref": "common.schema.json#/$defs/Priority"},
                    "code": {"$ref": "common.schema.json#/$defs/Code"},
                    "whole": {"$ref": "common.schema.json"}
                },
                "required": ["address"]
            }),
        ),
        (
            "common.schema.json",
            json!({
                "title": "Common",
                "type": "object",
                "properties": {"note": {"type": "string"}},
                "$defs": {
                    "Address": {
                        "type": "object",
                        "properties": {"line": {"type": "string", "minLength": 1}},
                        "required": ["line"]
                    },
                    "Priority": {"enum": ["low", "high"]},
                    "Code": {"type": "integer", "minimum": 100, "maximum": 999}
                }
            }),
        ),
    ]);
    insta::assert_snapshot!("ref_across_files", source);
}

#[test]
fn recursive_tree() {
    let source = emit_one(
        "tree.schema.json",
        json!({
            "title": "Tree",
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                        "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
                    },
                    "required": ["name", "children"]
                }
            }
        }),
    );
    insta::assert_snapshot!("recursive_tree", source);
}

// ---------------------------------------------------------------------------------------------
// Names

#[test]
fn awkward_keys() {
    let source = emit_one(
        "keys.schema.json",
        json!({
            "title": "Keys",
            "type": "object",
            "properties": {
                "type": {"type": "string"},
                "ref": {"type": "string"},
                "self": {"type": "string"},
                "crate": {"type": "string"},
                "odd key": {"type": "string"},
                "camelCase": {"type": "string"},
                "1st": {"type": "string"},
                "async": {"type": "string", "default": "x"},
                "kebab-case": {"enum": ["x-y", "z"]}
            },
            "required": ["type", "ref", "self", "crate", "odd key", "camelCase", "1st"]
        }),
    );
    insta::assert_snapshot!("awkward_keys", source);
}

#[test]
fn title_less_roots() {
    let source = emit_files(&[
        (
            "worker-result.v2.schema.json",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        ),
        ("plain-name.json", json!({"type": "string", "minLength": 1})),
        ("9lives.schema.json", json!({"enum": ["one", "two"]})),
    ]);
    insta::assert_snapshot!("title_less_roots", source);
}

#[test]
fn colliding_and_unusual_names() {
    // Keys that map to one field name, to nothing usable (`_`), to an edition-2024 keyword
    // (`gen`), or to the field holding `additionalProperties`; enum values that would be `Self`.
    let source = emit_one(
        "collide.schema.json",
        json!({
            "title": "Collide",
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "A": {"type": "string"},
                "odd-key": {"type": "integer"},
                "odd_key": {"type": "integer", "default": 1},
                "_": {"type": "boolean"},
                "gen": {"type": "boolean"},
                "additional": {"type": "string"},
                "which": {"enum": ["self", "Self", "crate"]}
            },
            "required": ["a", "A"],
            "additionalProperties": {"type": "string", "minLength": 1}
        }),
    );
    insta::assert_snapshot!("colliding_and_unusual_names", source);
}

#[test]
fn keyword_file_names() {
    // Module names from files called `type` and `gen`, and the path between them.
    let source = emit_files(&[
        (
            "type.schema.json",
            json!({
                "title": "Kind",
                "type": "object",
                "properties": {"of": {"$ref": "gen.schema.json#/$defs/Generation"}},
                "required": ["of"]
            }),
        ),
        (
            "gen.schema.json",
            json!({"$defs": {"Generation": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}),
        ),
    ]);
    insta::assert_snapshot!("keyword_file_names", source);
}

#[test]
fn recursion_by_value() {
    // Recursion not behind an array or a map: the fields that lead back are boxed.
    let source = emit_one(
        "chain.schema.json",
        json!({
            "title": "Chain",
            "type": "object",
            "properties": {
                "value": {"type": "integer", "minimum": 0},
                "next": {"$ref": "#"},
                "pair": {"$ref": "#/$defs/Pair"},
                "maybe": {"type": ["object", "null"], "properties": {"back": {"$ref": "#"}}, "required": ["back"]}
            },
            "required": ["value"],
            "$defs": {
                "Pair": {
                    "type": "object",
                    "properties": {
                        "left": {"$ref": "#"},
                        "right": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
                        "fallback": {"$ref": "#", "default": {"value": 0}}
                    },
                    "required": ["left", "right"]
                }
            }
        }),
    );
    insta::assert_snapshot!("recursion_by_value", source);
}

#[test]
fn one_of_edge_cases() {
    // Tags that would be named `Self`, a branch defaulting a nullable field, recursion through
    // the `oneOf`, and a branch in another file whose default the union calls.
    let source = emit_files(&[
        (
            "expr.schema.json",
            json!({
                "title": "Expr",
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {
                            "op": {"const": "self"},
                            "limit": {"type": ["integer", "null"], "default": 5},
                            "inner": {"$ref": "#"}
                        },
                        "required": ["op"]
                    },
                    {
                        "type": "object",
                        "properties": {"op": {"const": "Self"}, "args": {"type": "array", "items": {"$ref": "#"}}},
                        "required": ["op", "args"]
                    },
                    {"$ref": "lit.schema.json#/$defs/Literal"}
                ]
            }),
        ),
        (
            "lit.schema.json",
            json!({
                "$defs": {
                    "Literal": {
                        "type": "object",
                        "properties": {
                            "op": {"const": "lit"},
                            "value": {"type": "number", "default": 0}
                        },
                        "required": ["op"]
                    }
                }
            }),
        ),
    ]);
    insta::assert_snapshot!("one_of_edge_cases", source);
}

#[test]
fn names_that_would_shadow_std_types() {
    let source = emit_files(&[(
        "shadow.schema.json",
        json!({
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/String"}, "o": {"$ref": "#/$defs/Option"}},
            "required": ["s"],
            "$defs": {
                "String": {"type": "string", "minLength": 1},
                "Option": {"type": "object", "properties": {"v": {"type": "string"}}}
            }
        }),
    )]);
    assert!(source.contains("pub type StringType = String;"), "{source}");
    assert!(source.contains("pub struct OptionType"), "{source}");
}
