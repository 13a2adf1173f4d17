//! The generator's fragments: one small schema set per keyword and per shape, under
//! `tests/fragments/<test name>/`, emitted to Rust and compared with the one checked-in copy
//! of their modules, `tests/src/fragments/<test name>/` at the workspace root, which
//! `cargo xtask codegen` writes, the `perago-tests` crate compiles and `tests/tests/fragments.rs`
//! checks against the interpreter on many documents.
//!
//! After an emitter change, run `cargo xtask codegen`, then read the diff of
//! `tests/src/fragments/` before committing it.

use perago_codegen::SchemaSet;
use perago_codegen::emit::{Module, Target, emit, module_name};
use std::path::{Path, PathBuf};

/// The command that regenerates the checked-in modules.
const REGENERATE: &str = "cargo xtask codegen";

/// `tests/fragments/`.
fn fragments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fragments")
}

/// The workspace root, where the paths generated files name are relative to.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The modules of `tests/fragments/<name>/`, emitted as `cargo xtask codegen` emits them.
fn emit_fragment(name: &str) -> Vec<Module> {
    let set = SchemaSet::load_dir(&fragments().join(name))
        .unwrap_or_else(|e| panic!("the schemas of {name} should load:\n{e}"));
    let dir = format!("crates/perago-codegen/tests/fragments/{name}");
    let target = Target {
        schemas: &dir,
        runtime: "perago",
        command: REGENERATE,
        typed_formats: Default::default(),
    };
    emit(&set, &target)
}

/// Every module of fragment `name` is the checked-in one; a stale or missing file fails,
/// naming it, where it first differs, and how to regenerate it.
fn check_fragment(name: &str) {
    let out = format!("tests/src/fragments/{}", module_name(name));
    for module in emit_fragment(name) {
        let shown = format!("{out}/{}.rs", module.name);
        let checked_in = std::fs::read_to_string(workspace_root().join(&shown));
        let problem = match &checked_in {
            Ok(text) if *text == module.source => continue,
            Ok(text) => first_difference(text, &module.source),
            Err(e) => format!("it cannot be read: {e}"),
        };
        panic!(
            "{shown} is not what the emitter gives for tests/fragments/{name}/: {problem}\n\
             run `{REGENERATE}`, read the diff of {out}/ and commit it"
        );
    }
}

/// The first line where `checked_in` and `emitted` differ, both sides shown.
fn first_difference(checked_in: &str, emitted: &str) -> String {
    let (mut old, mut new) = (checked_in.lines(), emitted.lines());
    let mut line = 1;
    loop {
        match (old.next(), new.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                let side =
                    |s: Option<&str>| s.map_or("(end of file)".to_owned(), |s| format!("{s:?}"));
                return format!(
                    "line {line} differs\n  checked in: {}\n  emitted:    {}",
                    side(a),
                    side(b)
                );
            }
        }
    }
}

/// One test per fragment directory, named after it, and a check that every directory has its
/// test.
macro_rules! fragments {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                check_fragment(stringify!($name));
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

fragments! {
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
    /// `number` together overlap, so that one is deferred to the interpreter.
    type_arrays,

    // What is deferred to the interpreter
    /// `not`, `contains`, `dependentSchemas` and `if`/`then` at the root (a deferred `Contract`,
    /// `then`'s member an optional field), and parts with no one JSON type kept as `Value`s:
    /// no `type`, a type array, `false`, keywords beside a `$ref`, overlapping `anyOf` branches.
    deferred,

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
    /// Discriminated by both: branches with a `kind` tag, and, without `kind`, branches
    /// discriminated by the key each requires (`url` and `size` differ by branch, tagged or not); the
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
    /// Discriminated by tests of the members one after another: the JSON types of two members
    /// (`value`, then `unit`), a tag then a member's type (`kind`, then `payload`), a type then
    /// a key (`max`, then `window`), tags beside a branch that takes any `level`, a member one
    /// branch leaves optional (`limit`); the same for the objects of a union (`kind`, then
    /// `port`).
    one_of_by_tests,

    // if/then/else
    /// Chains of `if`s on one tag, typed as a `oneOf` decided by it: a chain of `else`s whose
    /// last is absent (`refusal`), an `allOf` of `if`/`then`s on a tag the object does not
    /// declare (`event`), an `if` that does not require its tag, inside `$defs` (`notice`),
    /// integer tags and an `else` with members and a chain of its own (`config`); and an `if`
    /// on two properties, deferred to the interpreter (`loose`).
    if_then_else,

    // Unions of JSON types
    /// `anyOf` / `oneOf` whose branches each take their own JSON type: string-or-integer,
    /// const-or-number, string-or-object-or-null, a recursive number-or-array-or-map.
    union_of_types,
    /// A string, one of two objects discriminated by a `const` (one recursive), or null.
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
    check_fragment("names_that_would_shadow_std_types");
    let source: String = emit_fragment("names_that_would_shadow_std_types")
        .into_iter()
        .map(|m| m.source)
        .collect();
    assert!(source.contains("pub type StringType = String;"), "{source}");
    assert!(source.contains("pub struct OptionType"), "{source}");
}
