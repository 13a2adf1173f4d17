//! Snapshot tests of the generator: one small schema set per keyword and per shape, under
//! `tests/fragments/<test name>/`, emitted to Rust and compared with the reviewed output under
//! `tests/snapshots/`.
//!
//! The same fragments are generated into `tests/src/fragments/` at the workspace root by
//! `cargo xtask codegen`, where the `perago-tests` crate compiles them and
//! `tests/tests/fragments.rs` checks them against the interpreter on many documents.
//!
//! Accept changes with `INSTA_UPDATE=always cargo test -p perago-codegen --test emit`, then read
//! every changed `.snap` before committing it.

use perago_codegen::SchemaSet;
use perago_codegen::emit::{Target, emit};
use std::path::{Path, PathBuf};

/// `tests/fragments/`.
fn fragments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fragments")
}

/// Emits the schemas of `tests/fragments/<name>/`; several modules are joined with a banner each.
fn emit_fragment(name: &str) -> String {
    let set = SchemaSet::load_dir(&fragments().join(name))
        .unwrap_or_else(|e| panic!("the schemas of {name} should load:\n{e}"));
    let dir = format!("tests/fragments/{name}");
    let target = Target {
        schemas: &dir,
        runtime: "perago",
        command: "cargo xtask codegen",
    };
    let modules = emit(&set, &target);
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

/// One snapshot test per fragment directory, named after it, and a check that every directory
/// has its test.
macro_rules! snapshots {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                let source = emit_fragment(stringify!($name));
                insta::assert_snapshot!(stringify!($name), source);
            }
        )*

        /// Every directory under `tests/fragments/` is tested here.
        #[test]
        fn every_fragment_is_tested() {
            let mut tested = vec![$(stringify!($name),)* "names_that_would_shadow_std_types"];
            tested.sort_unstable();
            let mut dirs: Vec<String> = std::fs::read_dir(fragments())
                .expect("tests/fragments/")
                .map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned())
                .collect();
            dirs.sort_unstable();
            assert_eq!(dirs, tested, "one test per directory of tests/fragments/");
        }
    };
}

snapshots! {
    // Scalars
    string_lengths_and_pattern,
    integer_bounds,
    number_bounds,
    boolean_and_null,
    /// Every format the interpreter checks, one it does not (an annotation), with lengths, nullable, in items.
    string_formats,
    /// `multipleOf` on integers and numbers (fractional steps too), with bounds, nullable, in items.
    multiple_of,

    // const and enum
    /// A root string const (a unit type named after the file) and string consts in an object.
    const_string,
    const_non_string,
    string_enum,
    mixed_enum,

    // Arrays
    arrays,
    /// `prefixItems` with `items: false`: fixed Rust tuples.
    tuples,
    /// `uniqueItems` on strings, numbers, any values, objects and nested arrays.
    unique_items,

    // Objects
    /// No `additionalProperties` anywhere: normalisation closes every level.
    nested_closed_objects,
    /// Maps in properties, and a map at the root.
    map,
    properties_and_additional_properties,
    /// `patternProperties` (one pattern), `propertyNames` and counts on maps.
    checked_maps,
    /// `minProperties`, `maxProperties` and `dependentRequired`: checked after the members.
    object_rules,

    // allOf
    /// Objects merged into one struct: a base by `$ref` (an `allOf` itself), inline parts, a
    /// property declared identically twice, closed over all parts after they have run.
    all_of,
    /// A part that is another file's root.
    all_of_across_files,

    /// `type` arrays of two or more JSON types: enums like unions of JSON types; `integer` and
    /// `number` together overlap, so that one is held for the interpreter.
    type_arrays,

    // What the interpreter judges
    /// `not`, `contains`, `dependentSchemas` and `if`/`then` at the root (a judged `Contract`,
    /// `then`'s member an optional field), and parts with no one JSON type held as `Value`s:
    /// no `type`, a type array, `false`, keywords beside a `$ref`, overlapping `anyOf` branches.
    judged,

    // Nullable, optional, default
    nullable_type_array,
    nullable_any_of,
    default_values,

    // oneOf
    one_of_all_tagged,
    one_of_untagged_branch,
    /// No discriminator: each branch requires a key no other declares (`depth` differs by
    /// branch, so it is kept as text until a deciding key is read).
    one_of_by_required,
    /// `value` is a string in one branch and an integer in the other: `read` reads it with the
    /// chosen branch's check when the discriminator came first, else keeps its text and reads
    /// it once the discriminator has chosen the branch.
    one_of_conflicting_field_types,
    /// Every branch inline with its own `const`s, one (`version`) written alike in each: read
    /// once as the bare constant, each branch's unit type afterwards.
    one_of_inline_consts,
    /// One key with an object, a string or an array by branch, an untagged branch among them.
    one_of_conflicting_shapes,
    /// A `oneOf` inside a branch, where another branch has an object under the same key.
    one_of_nested,
    /// Told apart by both: branches with a `kind` tag, and, without `kind`, branches told
    /// apart by the key each requires (`url` and `size` differ by branch, tagged or not); the
    /// same for the objects of a union.
    one_of_mixed,
    /// Tags on several properties (`kind`, `type`) with keyed branches without a tag; integer
    /// and boolean tags (`version`: 1, 2, 3.0; `legacy`: true), an untagged branch alone; the
    /// same for the objects of a union.
    one_of_tags,
    /// Tags written as `enum`s (several values name a branch: `op` create/insert, move/rename
    /// by a `$ref` to a definition, beside a `const`; integer levels 1-3, 4 and 5.0, with keyed branches without a tag; the
    /// same for the objects of a union).
    one_of_enum_and_type,
    /// Told apart by tests of the members one after another: the JSON types of two members
    /// (`value`, then `unit`), a tag then a member's type (`kind`, then `payload`), a type then
    /// a key (`max`, then `window`), tags beside a branch that takes any `level`, a member one
    /// branch leaves optional (`limit`); the same for the objects of a union (`kind`, then
    /// `port`).
    one_of_by_tests,

    // Unions of JSON types
    /// `anyOf` / `oneOf` whose branches each take their own JSON type: string-or-integer,
    /// const-or-number, string-or-object-or-null, a recursive number-or-array-or-map.
    union_of_types,
    /// A string, one of two objects told apart by a `const` (one recursive), or null.
    union_with_tagged_objects,

    // $ref
    ref_to_defs,
    ref_across_files,
    recursive_tree,

    // Names
    awkward_keys,
    title_less_roots,
    /// Keys that map to one field name, to nothing usable (`_`), to an edition-2024 keyword
    /// (`gen`), or to the field holding `additionalProperties`; enum values that would be `Self`.
    colliding_and_unusual_names,
    /// Module names from files called `type` and `gen`, and the path between them.
    keyword_file_names,
    /// Recursion not behind an array or a map: the fields that lead back are boxed.
    recursion_by_value,
    /// Tags that would be named `Self`, a branch defaulting a nullable field, recursion through
    /// the `oneOf`, and a branch in another file whose default the union calls.
    one_of_edge_cases,
}

/// `$defs` named `String` and `Option` must not shadow the std types the generated code uses.
#[test]
fn names_that_would_shadow_std_types() {
    let source = emit_fragment("names_that_would_shadow_std_types");
    assert!(source.contains("pub type StringType = String;"), "{source}");
    assert!(source.contains("pub struct OptionType"), "{source}");
}
