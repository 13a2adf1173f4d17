//! perago's generator: schema files → the one IR of a [`SchemaSet`] → Rust types and their one
//! validator, formatted with prettyplease, each file headed with the command that regenerates it.
//!
//! - the front end: [`SchemaSet`]: schema files → load (`perago_schema::load`) → lint against
//!   the supported subset (`lint`) → normalise (close every object, `normalise`) → the one
//!   [`Ir`] of the set (`build`; [`ir`]); [`bundle`]: one schema standalone, with what it
//!   refers to;
//! - [`emit`]: the IR → Rust source;
//! - [`generate`] (and [`Codegen`], its settings) turns a directory of schemas into a directory
//!   of modules, or checks that the checked-in ones are fresh: what a task crate's own `xtask`
//!   or test calls, and (as [`Codegen`], for its `--runtime`) what `perago codegen` runs.
//!
//! Nothing at run time depends on this crate: generated code calls `perago-schema` alone.
//!
//! # The subset generated types cover (JSON Schema 2020-12)
//!
//! [`SchemaSet`] takes this subset and refuses the rest;
//! `perago_schema::Validator` takes draft 2020-12 whole (see `docs/src/schemas.md`).
//!
//! | keyword | notes |
//! |---|---|
//! | `type` | one of `string`, `integer`, `number`, `boolean`, `null`, `object`, `array`, or `[T, "null"]` |
//! | `properties`, `required` | `required` may only name declared properties |
//! | `additionalProperties` | `false`, or a schema (a map); absent means **closed** (normalised to `false`) |
//! | `items`, `minItems`, `maxItems` | single-schema `items` only |
//! | `enum`, `const` | string enums become Rust enums, string consts unit types |
//! | `minLength`, `maxLength` | counted in Unicode code points |
//! | `pattern` | ECMA-262 (Unicode mode), an unanchored search, as JSON Schema defines; matched in linear time (no backreferences or lookaround) |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | numbers in 2020-12 form |
//! | `format`, `multipleOf`, `uniqueItems` | checks on the typed value ([`ir::Checks`]), made by the interpreter's functions in `perago_schema::check` |
//! | `$ref` | to the root or a `$defs` entry of the same file or a sibling file; only annotations beside it |
//! | `oneOf` | branches are closed objects discriminated by one property with a distinct string `const` (one branch may leave it undeclared), or by keys: each branch requires a property no other branch declares; by tags on several properties, integer or boolean tags, `enum` tags; or by tests of their members one after another (`perago_schema::one_of::DecisionTree`: JSON types, tags, keys) |
//! | `anyOf` | only `[X, {"type": "null"}]` |
//! | `allOf` | of object schemas (inline or a `$ref` to a base object): one struct merged from every part, closed over all of them; a property declared differently by two parts is refused |
//! | `minProperties`, `maxProperties`, `dependentRequired` | checks on a struct (`dependentRequired` names declared properties) |
//! | `prefixItems` | a Rust tuple (up to 6 items, `minItems` at least that many), fixed with `"items": false`, else `perago_schema::reader::TupleRest` (the tuple and the items after it) |
//! | `patternProperties`, `propertyNames` | a checked map (no declared `properties` beside): one pattern its keys must match, names checked by `propertyNames`, counted by `minProperties`/`maxProperties` |
//! | `title`, `description`, `default`, `examples`, `$comment` | annotations; `default` is applied to the typed value of an absent optional property |
//! | `$schema`, `$id`, `$defs` | `$schema` at the root: 2020-12 (also without one), or 2019-09 or draft-07, read as their 2020-12 equivalents (`perago_schema::dialect::upgrade`) |
//!
//! `$defs` live at the root only; a `$ref` names a sibling file by its name (or its `$id`), whose
//! root must then be a schema. Beside `const`/`enum` only `type` and annotations are allowed.
//! `default` and `examples` are validated against their schema, and a duplicated key in a schema
//! file is an error. Anything else is a `perago_schema::LintError` naming the file, the JSON Pointer and the
//! keyword.

mod build;
pub mod bundle;
pub mod emit;
mod generate;
pub mod ir;
mod lint;
mod normalise;
mod set;

pub use build::{SchemaFile, pascal, tag_name};
pub use generate::{
    Change, ChangeKind, Codegen, Deferred, Error, Mode, ensure_file, generate, stale,
};
pub use ir::{Ir, NodeId};
pub use set::SchemaSet;
