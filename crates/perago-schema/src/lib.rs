//! perago's schema core: everything between a JSON Schema file and a verdict on a document,
//! with no code generation in it, so that the run time and the `perago` command never link
//! the generator.
//!
//! - [`SchemaSet`]: schema files → [`load`](SchemaSet::load_dir) → lint against the supported
//!   subset → normalise (close every object) → the one [`Ir`] of the set (`load`, `lint`,
//!   `normalise`, `build`, [`bundle`]);
//! - [`ir`]: that intermediate representation, what code generation reads;
//! - [`Validator`]: the interpreter for schemas loaded at run time (`perago validate`): JSON
//!   Schema 2020-12 whole (but `$dynamicRef` and references that would need the network),
//!   compiled once (`compile`, into a `program`), each document read once from its bytes into
//!   a reusable tape (`tape`) and checked there (`eval`), `format` included (`format`); it
//!   checks defaults and examples too, and is the reference generated readers are held to;
//! - [`check`]: the keyword checks that both the interpreter and generated readers call, so
//!   both report the same violations with the same messages;
//! - `stream`: what generated readers read documents with, in one pass (generated code
//!   reaches it through `__private`);
//! - [`json`]: the strict JSON parser (a repeated key is an error, at its path);
//!   [`input`]: documents read under a size limit;
//! - [`Violation`], [`Violations`] and [`Path`]: what validators report;
//! - [`Contract`]: what every generated type implements.
//!
//! Task authors depend on `perago`, which re-exports what they need from here.
//!
//! # The subset generated types cover (JSON Schema 2020-12)
//!
//! [`SchemaSet`] (what code generation reads) takes this subset and refuses the rest;
//! [`Validator`] takes draft 2020-12 whole (see `docs/src/schemas.md`).
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
//! | `format`, `multipleOf`, `uniqueItems` | checks on the typed value ([`ir::Checks`]), made by the interpreter's functions in [`check`] |
//! | `$ref` | to the root or a `$defs` entry of the same file or a sibling file; only annotations beside it |
//! | `oneOf` | branches are closed objects told apart by one property with a distinct string `const` (one branch may leave it undeclared), or by keys: each branch requires a property no other branch declares; by tags on several properties, integer or boolean tags, `enum` tags; or by tests of their members one after another ([`decision`]: JSON types, tags, keys) |
//! | `anyOf` | only `[X, {"type": "null"}]` |
//! | `allOf` | of object schemas (inline or a `$ref` to a base object): one struct merged from every part, closed over all of them; a property declared differently by two parts is refused |
//! | `minProperties`, `maxProperties`, `dependentRequired` | checks on a struct (`dependentRequired` names declared properties) |
//! | `prefixItems` | a Rust tuple (up to 6 items, `minItems` at least that many), fixed with `"items": false`, else [`stream::TupleRest`] (the tuple and the items after it) |
//! | `patternProperties`, `propertyNames` | a checked map (no declared `properties` beside): one pattern its keys must match, names checked by `propertyNames`, counted by `minProperties`/`maxProperties` |
//! | `title`, `description`, `default`, `examples`, `$comment` | annotations; `default` is applied to the typed value of an absent optional property |
//! | `$schema`, `$id`, `$defs` | `$schema` is required at the root and must be 2020-12 |
//!
//! `$defs` live at the root only; a `$ref` names a sibling file by its name (or its `$id`), whose
//! root must then be a schema. Beside `const`/`enum` only `type` and annotations are allowed.
//! `default` and `examples` are validated against their schema, and a duplicated key in a schema
//! file is an error. Anything else is a [`LintError`] naming the file, the JSON Pointer and the
//! keyword.

mod build;
pub mod bundle;
pub mod check;
mod compile;
mod contract;
pub mod decision;
mod ecma;
mod error;
mod eval;
mod format;
pub mod input;
pub mod ir;
pub mod json;
#[doc(hidden)] // generated code's, through `__private`
pub mod judge;
mod kind;
mod lint;
mod load;
mod normalise;
mod path;
mod program;
mod set;
#[doc(hidden)] // generated code's, through `__private`
pub mod stream;
mod tape;
mod validator;
mod violation;

pub use build::{SchemaFile, pascal, tag_name};
pub use contract::Contract;
pub use error::{Error, LintError};
pub use ir::{Ir, NodeId};
pub use lint::DIALECT;
pub use path::Path;
pub use set::SchemaSet;
pub use validator::{Options, Scratch, Validator};
pub use violation::{Code, Violation, Violations};

/// What generated code refers to, through the crate it names as its runtime (`perago`, which
/// re-exports this module, or this crate itself). Not an API: it changes with the generator.
#[doc(hidden)]
pub mod __private {
    pub use crate::check;
    pub use crate::decision;
    pub use crate::json;
    pub use crate::judge;
    pub use crate::path::Path;
    pub use crate::stream;
    pub use crate::violation::Violation;
    pub use indexmap;
    pub use serde;
    pub use serde_json;
}
