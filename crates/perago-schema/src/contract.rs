//! [`Contract`]: what every generated type implements.

use crate::check;
use crate::json;
use crate::path::Path;
use crate::violation::{Code, Violation, Violations};
use serde::{Deserializer, Serialize};
use serde_json::Value;

/// A type generated from a schema: validated from JSON into a typed value, or every violation.
///
/// Implementing it is what makes a type *schema-backed*: task parameters and results must be.
/// Its one validator is [`read`](Contract::read): document bytes ([`from_slice`]), an already
/// parsed [`Value`] ([`from_value`]) and serde's `Deserialize` all go through it.
///
/// [`from_slice`]: Contract::from_slice
/// [`from_value`]: Contract::from_value
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a schema-backed type",
    label = "not generated from a JSON Schema",
    note = "task params and results must implement `perago::Contract`: write their JSON Schema \
            under your crate's `schemas/` and generate the type from it with `perago codegen`, \
            or derive it beside `schemars::JsonSchema` (`#[derive(perago::Contract)]`, perago's \
            `schemars` feature)"
)]
pub trait Contract: Sized + Serialize {
    /// Where its schema is: the file and JSON Pointer it was generated from.
    const LOCATION: &'static str;

    /// Its closed JSON Schema standing alone: normalised (every object closed), with `$schema`
    /// and every `$ref` it reaches bundled into its own `$defs`. A function rather than a
    /// constant so that a type whose schema is made at run time (`#[derive(perago::Contract)]`
    /// over a `schemars::JsonSchema` type) can implement it.
    fn schema() -> &'static str;

    /// Reads one value from a deserialiser (the parser over document bytes, or a parsed
    /// `Value`) straight into the typed value, recording every violation at or below `path` in
    /// the interpreter's order; returns the typed value only when nothing was recorded. Errors
    /// are the parser's, or a data error at a repeated key (see [`crate::reader`]).
    fn read<'de, D: Deserializer<'de>>(
        d: D,
        path: &Path<'_>,
        out: &mut check::Out,
    ) -> Result<Option<Self>, D::Error>;

    /// Validates a parsed document with [`read`](Contract::read).
    fn from_value(value: &Value) -> Result<Self, Violations> {
        Self::from_value_at(value, &Path::Root)
    }

    /// [`from_value`](Contract::from_value) of a value found at `path` of a larger document
    /// (a task input's `params`): violations are reported under `path`.
    fn from_value_at(value: &Value, path: &Path<'_>) -> Result<Self, Violations> {
        let mut out = Vec::new();
        match Self::read(value, path, &mut out) {
            Ok(Some(typed)) if out.is_empty() => Ok(typed),
            Ok(_) => Err(Violations::new(out)),
            // A `Value` has no repeated key and is well formed: no reader errs on one.
            Err(e) => Err(Violations::new(vec![Violation::new(
                path.render(),
                Code::Type,
                format!("cannot be read: {e}"),
            )])),
        }
    }

    /// Validates document bytes in one pass ([`read`](Contract::read)): the typed value, or
    /// every violation. A document the pass cannot read (malformed JSON, a repeated key) is
    /// one violation, as [`json::parse_strict_slice`] reports it: at `$`, or at the key.
    fn from_slice(bytes: &[u8]) -> Result<Self, Violations> {
        // One SIMD pass checks the whole document's UTF-8, so the parser need not check each
        // string again (the larger part of parsing a text-heavy document).
        let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
            return read_whole(bytes);
        };
        let mut out = Vec::new();
        let mut de = serde_json::Deserializer::from_str(text);
        // Plain matches, not combinators: each would move the typed value once more.
        let Ok(typed) = Self::read(&mut de, &Path::Root, &mut out) else {
            return read_whole(bytes);
        };
        if de.end().is_err() {
            return read_whole(bytes);
        }
        match typed {
            Some(typed) if out.is_empty() => Ok(typed),
            _ => Err(Violations::new(out)),
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

/// Parses the whole document strictly, then reads the value: for what the single pass could
/// not read, so that its violation is worded as every other door words it.
fn read_whole<T: Contract>(bytes: &[u8]) -> Result<T, Violations> {
    match json::parse_strict_slice(bytes) {
        Ok(value) => T::from_value(&value),
        Err(e) => Err(Violations::new(vec![e.to_violation()])),
    }
}
