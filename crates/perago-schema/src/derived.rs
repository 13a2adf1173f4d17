//! Schema-backed types that start from Rust (`#[derive(perago::Contract)]` over a type that
//! derives `schemars::JsonSchema` and serde's traits; the `schemars` feature): the schema
//! schemars makes of the type, closed by perago's policy ([`crate::normalise`]), is what the
//! type reports ([`Contract::schema`](crate::Contract::schema)) and what the interpreter
//! validates with, every violation, before serde reads the value.

use crate::check::Out;
use crate::error::Error;
use crate::json;
use crate::normalise::close_objects;
use crate::path::Path;
use crate::validator::{Options, Validator};
use crate::violation::{Code, Violation};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde_json::value::RawValue;

/// The schema of a derived type and its compiled validator, made once (in the `static` the
/// derive declares).
#[derive(Debug)]
pub struct Derived {
    text: String,
    validator: Validator,
}

impl Derived {
    /// The closed 2020-12 schema schemars makes of `T` (as serde deserialises it), compiled.
    ///
    /// # Panics
    ///
    /// When the interpreter refuses the schema schemars made (a `JsonSchema` impl written by
    /// hand with a keyword perago does not take): the message names the type and the error,
    /// at the type's first use, as a malformed literal pattern would.
    pub fn new<T: JsonSchema>() -> Derived {
        Derived::try_new::<T>().unwrap_or_else(|e| {
            panic!(
                "`{}`: the schema schemars makes of it is not one perago takes: {e}",
                std::any::type_name::<T>()
            )
        })
    }

    /// [`new`](Self::new), the refusal returned.
    pub fn try_new<T: JsonSchema>() -> Result<Derived, Error> {
        let mut schema = SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        close_objects(&mut schema);
        // Closed in the text itself, so the text means to every validator (Conductor's
        // included) what the interpreter checks: the interpreter reads it as written.
        let validator = Validator::from_value(
            &schema,
            Options {
                close_objects: false,
            },
        )?;
        let text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
        Ok(Derived { text, validator })
    }

    /// The closed schema, as [`Contract::schema`](crate::Contract::schema) reports it.
    pub fn schema(&self) -> &str {
        &self.text
    }

    /// [`Contract::read`](crate::Contract::read) of a derived type: the interpreter records
    /// every violation at or below `path`; a value it finds valid is read by serde (whose
    /// refusal, where the type's serde and its schema disagree, is one violation at `path`).
    pub fn read<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<T>, D::Error> {
        let text = <Box<RawValue> as de::Deserialize>::deserialize(d)?;
        match self.validator.check_part(text.get(), path, out) {
            Some(true) => {}
            Some(false) => return Ok(None),
            // Not strict JSON: a repeated key, which stops the pass as it stops every reader.
            None => {
                json::value(&mut serde_json::Deserializer::from_str(text.get()))
                    .map_err(de::Error::custom)?;
                return Ok(None);
            }
        }
        // Read from the text once it is valid: no `Value` is built on the way.
        match serde_json::from_str::<T>(text.get()) {
            Ok(typed) => Ok(Some(typed)),
            Err(e) => {
                out.push(Violation::new(
                    path.render(),
                    Code::Type,
                    format!("cannot be read: {e}"),
                ));
                Ok(None)
            }
        }
    }
}
