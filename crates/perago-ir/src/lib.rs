//! perago's schema core, shared by the generator and the run time:
//!
//! - [`ir`]: the one intermediate representation of a set of normalised schemas, and its
//!   interpreter ([`Ir::validate`]) for schemas that were not compiled in;
//! - [`json`]: the strict JSON parser (a repeated key is an error, at its path);
//! - [`check`]: the keyword checks that both the interpreter and generated validators call, so
//!   both report the same violations with the same messages;
//! - [`Violation`], [`Violations`] and [`Path`]: what validators report;
//! - [`Contract`]: what every generated type implements.
//!
//! Task authors depend on `perago`, which re-exports what they need from here.

pub mod check;
pub mod de;
pub mod ir;
pub mod json;
pub mod path;
pub mod violation;

pub use ir::{Ir, NodeId};
pub use path::Path;
pub use violation::{Code, Violation, Violations};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A type generated from a schema: validated from JSON into a typed value, or every violation.
///
/// Implementing it is what makes a type *schema-backed*: task parameters and results must be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a schema-backed type",
    label = "not generated from a JSON Schema",
    note = "task params and results must implement `perago::Contract`: write their JSON Schema \
            under your crate's `schemas/` and generate the type from it with `cargo xtask codegen`"
)]
pub trait Contract: Sized + Serialize + DeserializeOwned {
    /// Where its schema is: the file and JSON Pointer it was generated from.
    const LOCATION: &'static str;

    /// Its closed JSON Schema standing alone: normalised (every object closed), with `$schema`
    /// and every `$ref` it reaches bundled into its own `$defs`.
    const SCHEMA: &'static str;

    /// Walks `value`, recording every violation at or below `path`; returns the typed value
    /// only when nothing was recorded.
    fn walk(value: &Value, path: &Path<'_>, out: &mut check::Out) -> Option<Self>;

    /// The rules serde's typed deserialisation cannot express (lengths, patterns, bounds).
    fn satisfies(&self) -> bool;

    /// Validates a parsed document.
    fn from_value(value: &Value) -> Result<Self, Violations> {
        let mut out = Vec::new();
        match Self::walk(value, &Path::Root, &mut out) {
            Some(typed) if out.is_empty() => Ok(typed),
            _ => Err(Violations::new(out)),
        }
    }

    /// Validates document bytes: a typed fast path for the valid case, and the full walk,
    /// which reports every violation, only when that fails.
    fn from_slice(bytes: &[u8]) -> Result<Self, Violations> {
        if let Ok(typed) = serde_json::from_slice::<Self>(bytes)
            && typed.satisfies()
        {
            return Ok(typed);
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => Self::from_value(&value),
            Err(e) => Err(Violations::new(vec![check::malformed(&e)])),
        }
    }

    /// Every violation of a parsed document (empty when valid).
    fn violations(value: &Value) -> Violations {
        match Self::from_value(value) {
            Ok(_) => Violations::default(),
            Err(v) => v,
        }
    }
}

#[doc(hidden)]
pub mod __private {
    pub use indexmap;
    pub use serde;
    pub use serde_json;
}
