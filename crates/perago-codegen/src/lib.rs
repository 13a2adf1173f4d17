//! perago's generator: schema files → lint against the supported subset → normalise (close
//! every object) → one IR → Rust types and validators.
//!
//! # The supported subset (JSON Schema 2020-12)
//!
//! | keyword | notes |
//! |---|---|
//! | `type` | one of `string`, `integer`, `number`, `boolean`, `null`, `object`, `array`, or `[T, "null"]` |
//! | `properties`, `required` | `required` may only name declared properties |
//! | `additionalProperties` | `false`, or a schema (a map); absent means **closed** (normalised to `false`) |
//! | `items`, `minItems`, `maxItems` | single-schema `items` only |
//! | `enum`, `const` | string enums become Rust enums, string consts unit types |
//! | `minLength`, `maxLength` | counted in Unicode code points |
//! | `pattern` | ECMA-262 (Unicode mode), an unanchored search, as JSON Schema defines |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | numbers in 2020-12 form |
//! | `$ref` | to the root or a `$defs` entry of the same file or a sibling file; only annotations beside it |
//! | `oneOf` | branches are closed objects told apart by one property with a distinct string `const` (one branch may leave it undeclared) |
//! | `anyOf` | only `[X, {"type": "null"}]` |
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
pub mod emit;
mod error;
mod lint;
mod load;
pub mod normalise;
pub mod task;

pub use build::{SchemaFile, pascal};
pub use error::{Error, LintError};
pub use lint::DIALECT;
pub use perago_ir::{Ir, NodeId};

use load::Documents;
use std::path::Path;

/// A set of linted, normalised schemas and their IR.
#[derive(Debug)]
pub struct SchemaSet {
    /// The IR of every schema in the set.
    pub ir: Ir,
    /// The files, in load order (the ones asked for first, then those their `$ref`s named).
    pub files: Vec<SchemaFile>,
}

impl SchemaSet {
    /// Loads every `*.json` schema of a directory (sorted by name).
    pub fn load_dir(dir: &Path) -> Result<SchemaSet, Error> {
        let mut docs = Documents::default();
        for file in load::schema_files(dir)? {
            docs.add_file(&file)?;
        }
        finish(docs)
    }

    /// Loads one schema file and the sibling files its `$ref`s name.
    pub fn load_file(path: &Path) -> Result<SchemaSet, Error> {
        let mut docs = Documents::default();
        docs.add_file(path)?;
        finish(docs)
    }

    /// Loads schemas held in memory as `(file name, text)`; relative `$ref`s name other entries.
    pub fn load_sources<'a>(
        sources: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SchemaSet, Error> {
        let mut docs = Documents::default();
        for (file, text) in sources {
            docs.add_source(file, None, text.to_owned())?;
        }
        finish(docs)
    }

    /// A file by `$id`, file name or short name (the file name without `.schema.json`).
    pub fn find(&self, name: &str) -> Option<&SchemaFile> {
        self.files
            .iter()
            .find(|f| f.id == name || f.file == name || f.short_name() == name)
    }
}

fn finish(mut docs: Documents) -> Result<SchemaSet, Error> {
    let errors = lint::lint(&mut docs);
    if !errors.is_empty() {
        return Err(Error::Lint(errors));
    }
    let (ir, files) = build::Builder::new(&mut docs)
        .finish()
        .map_err(Error::Lint)?;
    Ok(SchemaSet { ir, files })
}
