//! [`SchemaSet`]: schema files, linted and normalised, and their IR.

use crate::build::{self, SchemaFile};
use crate::ir::Ir;
use crate::lint;
use perago_schema::error::Error;
use perago_schema::load::{self, Documents};
use perago_schema::{Options, Validator};
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

    /// The interpreter for the set's schemas, compiled from the files as written: what a
    /// document means against any of their nodes ([`Validator::at`] a node's location), the
    /// reference generated readers must agree with.
    pub fn validator(&self) -> Result<Validator, Error> {
        let first = self.files.first().map_or("", |f| f.file.as_str());
        Validator::load_sources(
            self.files
                .iter()
                .map(|f| (f.file.as_str(), f.source.as_str())),
            first,
            Options::default(),
        )
    }

    /// A file by `$id`, file name or short name (the file name without `.schema.json`).
    pub fn find(&self, name: &str) -> Option<&SchemaFile> {
        self.files
            .iter()
            .find(|f| f.id == name || f.file == name || f.short_name() == name)
    }
}

fn finish(mut docs: Documents) -> Result<SchemaSet, Error> {
    let (mut errors, deferrals) = lint::lint(&mut docs);
    if !deferrals.is_empty() {
        // What generated code defers, lint does not read further: the interpreter checks it, so
        // it must take those parts, and says what is wrong in them.
        if let Err(more) =
            perago_schema::Validator::from_documents(&mut docs, 0, Options::default())
        {
            for e in more {
                if !errors
                    .iter()
                    .any(|l| (&l.file, &l.pointer, &l.keyword) == (&e.file, &e.pointer, &e.keyword))
                {
                    errors.push(e);
                }
            }
            load::sort_errors(&docs, &mut errors);
        }
    }
    if !errors.is_empty() {
        docs.to_written(&mut errors);
        return Err(Error::Lint(errors));
    }
    let (ir, files) = match build::Builder::new(&mut docs, deferrals).finish() {
        Ok(built) => built,
        Err(mut errors) => {
            docs.to_written(&mut errors);
            return Err(Error::Lint(errors));
        }
    };
    Ok(SchemaSet { ir, files })
}
