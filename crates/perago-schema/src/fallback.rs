//! The interpreter inside generated code: the parts of a schema generated types do not type
//! rule by rule (`not`, `if`/`then`/`else`, `dependentSchemas`, `contains`, parts with no one
//! JSON type) are deferred to [`crate::Validator`] compiled from the schemas as written, so a
//! generated reader reports exactly what `perago validate` reports for them.
//!
//! A generated module holds its schema files once ([`Schemas`], compiled on first use) and a
//! [`Fallback`] per deferred part; [`crate::reader::Deferred`] is the check that calls it.

use crate::check::{Out, push};
use crate::path::Path;
use crate::validator::{Options, Validator};
use crate::violation::Code;
use std::sync::OnceLock;

/// Schema files as written, `(file name, text)`, the first the one whose module holds them;
/// compiled once, on first use.
#[derive(Debug)]
pub struct Schemas {
    sources: &'static [(&'static str, &'static str)],
    compiled: OnceLock<Result<Validator, String>>,
}

impl Schemas {
    /// The files a generated module needs: its own first, then those its `$ref`s reach.
    pub const fn new(sources: &'static [(&'static str, &'static str)]) -> Schemas {
        Schemas {
            sources,
            compiled: OnceLock::new(),
        }
    }

    fn validator(&self) -> Result<&Validator, &str> {
        self.compiled
            .get_or_init(|| {
                let root = self.sources.first().map_or("", |(file, _)| *file);
                Validator::load_sources(self.sources.iter().copied(), root, Options::default())
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The interpreter at one node of [`Schemas`], found on first use.
#[derive(Debug)]
pub struct Fallback {
    schemas: &'static Schemas,
    location: &'static str,
    at: OnceLock<Result<Validator, String>>,
}

impl Fallback {
    /// The node at `location` (`file#/json/pointer`) of `schemas`.
    pub const fn new(schemas: &'static Schemas, location: &'static str) -> Fallback {
        Fallback {
            schemas,
            location,
            at: OnceLock::new(),
        }
    }

    /// Records the violations of the JSON `text` found at `path`; true when there are none.
    /// `None` when the text is not strict JSON (a repeated key), which the caller's reader
    /// reports where it meets it.
    pub(crate) fn check(&self, text: &str, path: &Path<'_>, out: &mut Out) -> Option<bool> {
        let at = self.at.get_or_init(|| {
            let validator = self.schemas.validator()?;
            validator.at(self.location).ok_or_else(|| {
                format!(
                    "the generated module's schemas have no node at {}",
                    self.location
                )
            })
        });
        match at {
            Ok(validator) => validator.check_part(text, path, out),
            // The generator compiled these same schemas; should they ever fail here, no value
            // passes unchecked.
            Err(e) => {
                push(
                    out,
                    path,
                    Code::Type,
                    format!("cannot be checked: the generated code's schema does not compile: {e}"),
                );
                Some(false)
            }
        }
    }
}
