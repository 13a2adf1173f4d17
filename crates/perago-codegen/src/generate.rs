//! Generating a directory of schemas into a directory of modules, or checking that the
//! checked-in modules are what the schemas give: what `perago codegen` and a task crate's own
//! `xtask` call.
//!
//! ```no_run
//! // In a task crate's xtask (or a test, with `Mode::Check`):
//! use perago_codegen::{Codegen, Mode};
//!
//! let changes = Codegen::new("schemas", "src/contracts").run(Mode::Write)?;
//! for change in &changes {
//!     eprintln!("{change}");
//! }
//! # Ok::<(), perago_codegen::Error>(())
//! ```

use crate::SchemaSet;
use crate::emit::{self, Target, TypedFormats};
use std::fmt;
use std::path::{Path, PathBuf};

/// Write generated files, or only compare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write every file whose contents differ; remove generated files whose schema is gone.
    Write,
    /// Write nothing; fail, naming every stale file, when anything differs.
    Check,
}

impl Mode {
    /// [`Mode::Check`] when `check`, else [`Mode::Write`]: a `--check` flag.
    pub fn checking(check: bool) -> Mode {
        if check { Mode::Check } else { Mode::Write }
    }
}

/// What writing does (or, in check mode, would do) to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// `created`, `updated` or `removed`.
    pub kind: ChangeKind,
}

/// See [`Change`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A file that did not exist.
    Created,
    /// A file whose contents differ.
    Updated,
    /// A generated file whose schema is gone.
    Removed,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ChangeKind::Created => "created",
            ChangeKind::Updated => "updated",
            ChangeKind::Removed => "removed",
        };
        write!(f, "{kind} {}", self.path.display())
    }
}

/// Why code generation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The schemas do not load (every problem, each naming its file and place).
    #[error("{dir}: {source}")]
    Schemas {
        /// The schema directory.
        dir: String,
        /// What is wrong.
        source: perago_schema::Error,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// Check mode: generated files differ from what the schemas give.
    #[error(
        "generated files are stale; run `{command}` and commit:{}",
        list(changes)
    )]
    Stale {
        /// The command that brings them up to date.
        command: String,
        /// Every stale file and what writing would do to it.
        changes: Vec<Change>,
    },
}

fn list(changes: &[Change]) -> String {
    changes.iter().map(|c| format!("\n  {c}")).collect()
}

/// A part of the schemas deferred to the interpreter at run time: its location and why.
pub type Deferred = (String, String);

/// One directory of schemas (`*.json`) generated into one directory of Rust modules: one per
/// schema file and a `mod.rs` declaring them, declared in the crate as
/// `#[rustfmt::skip] pub mod contracts;`. The out directory holds generated files only.
#[derive(Debug, Clone)]
pub struct Codegen {
    /// Where `schemas` and `out` are, when not the current directory.
    root: PathBuf,
    schemas: PathBuf,
    out: PathBuf,
    runtime: String,
    command: Option<String>,
    doc: String,
    embed_files: bool,
    typed_formats: TypedFormats,
}

impl Codegen {
    /// `schemas` → `out`, the paths as generated files should name them (relative to where the
    /// command runs); code reaches its runtime through `perago`.
    pub fn new(schemas: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Codegen {
        Codegen {
            root: PathBuf::new(),
            schemas: schemas.into(),
            out: out.into(),
            runtime: "perago".to_owned(),
            command: None,
            doc: "The generated types and validators of this crate's schemas.".to_owned(),
            embed_files: false,
            typed_formats: TypedFormats::default(),
        }
    }

    /// Gives the `format`s `typed` names a Rust type of their own (`uuid::Uuid`, chrono's
    /// types) instead of `String`; the crate then needs perago's features of those names.
    pub fn typed_formats(mut self, typed: TypedFormats) -> Codegen {
        self.typed_formats = typed;
        self
    }

    /// `schemas` and `out` are relative to `root` (files still name them as given).
    pub fn in_dir(mut self, root: impl Into<PathBuf>) -> Codegen {
        self.root = root.into();
        self
    }

    /// The crate generated code names its runtime (default `perago`; `perago_schema` for a
    /// crate that depends on that alone).
    pub fn runtime(mut self, runtime: impl Into<String>) -> Codegen {
        self.runtime = runtime.into();
        self
    }

    /// The command named in each file's header, and by a stale check (default
    /// `perago codegen --schemas <schemas> --out <out>`).
    pub fn command(mut self, command: impl Into<String>) -> Codegen {
        self.command = Some(command.into());
        self
    }

    /// The doc comment of the generated `mod.rs`.
    pub fn doc(mut self, doc: impl Into<String>) -> Codegen {
        self.doc = doc.into();
        self
    }

    /// Whether the generated `mod.rs` also holds every schema file as written (see
    /// [`emit::emit_mod_with_files`]; default no): for a crate that serves its schemas' text,
    /// which may live outside its own directory.
    pub fn embed_files(mut self, embed: bool) -> Codegen {
        self.embed_files = embed;
        self
    }

    /// The command that regenerates the files.
    pub fn regenerate(&self) -> String {
        self.command.clone().unwrap_or_else(|| {
            let mut command = format!(
                "perago codegen --schemas {} --out {}",
                shown(&self.schemas),
                shown(&self.out)
            );
            let features = self.typed_formats.features();
            if !features.is_empty() {
                command.push_str(&format!(" --typed-formats {features}"));
            }
            command
        })
    }

    /// The schemas, loaded and linted, and every file they give (under
    /// [`in_dir`](Self::in_dir)) with its contents.
    fn generate(&self) -> Result<(SchemaSet, Vec<(PathBuf, String)>), Error> {
        let schemas = shown(&self.schemas);
        let set = SchemaSet::load_dir(&self.root.join(&self.schemas)).map_err(|source| {
            Error::Schemas {
                dir: schemas.clone(),
                source,
            }
        })?;
        let command = self.regenerate();
        let target = Target {
            schemas: &schemas,
            runtime: &self.runtime,
            command: &command,
            typed_formats: self.typed_formats,
        };
        let modules = emit::emit(&set, &target);
        let out = self.root.join(&self.out);
        let mut files: Vec<(PathBuf, String)> = modules
            .iter()
            .map(|m| (out.join(format!("{}.rs", m.name)), m.source.clone()))
            .collect();
        let embedded: Vec<(&str, &str)> = set
            .files
            .iter()
            .filter(|_| self.embed_files)
            .map(|f| (f.file.as_str(), f.source.as_str()))
            .collect();
        files.push((
            out.join("mod.rs"),
            emit::emit_mod_with_files(&modules, &embedded, &self.doc, &target),
        ));
        Ok((set, files))
    }

    /// Every file the schemas give (under [`in_dir`](Self::in_dir)), with its contents.
    pub fn files(&self) -> Result<Vec<(PathBuf, String)>, Error> {
        Ok(self.generate()?.1)
    }

    /// Writes (or, in check mode, compares) the generated files; returns what changed. In check
    /// mode any change is [`Error::Stale`].
    pub fn run(&self, mode: Mode) -> Result<Vec<Change>, Error> {
        stale(mode, &self.regenerate(), self.sync(mode)?)
    }

    /// [`run`](Self::run), and the parts of the schemas the generated code does not check rule
    /// by rule, which are deferred to the interpreter at run time: each one's location and why, sorted
    /// by location (the generated doc comments say the same).
    pub fn run_with_deferred(&self, mode: Mode) -> Result<(Vec<Change>, Vec<Deferred>), Error> {
        let (set, files) = self.generate()?;
        let changes = stale(mode, &self.regenerate(), self.sync_files(&files, mode)?)?;
        let deferred: std::collections::BTreeMap<&str, &str> = set
            .ir
            .nodes()
            .filter_map(|(_, node)| Some((node.location.as_str(), node.deferred.as_deref()?)))
            .collect();
        let deferred = deferred
            .into_iter()
            .map(|(location, reason)| (location.to_owned(), reason.to_owned()))
            .collect();
        Ok((changes, deferred))
    }

    /// [`run`](Self::run) without the stale check: what writing did, or in check mode would
    /// do, for a caller that gathers the changes of several targets.
    pub fn sync(&self, mode: Mode) -> Result<Vec<Change>, Error> {
        self.sync_files(&self.files()?, mode)
    }

    /// [`sync`](Self::sync) of the generated `files`.
    fn sync_files(&self, files: &[(PathBuf, String)], mode: Mode) -> Result<Vec<Change>, Error> {
        let mut changes = Vec::new();
        for (path, contents) in files {
            if let Some(kind) = ensure_file(path, contents, mode)? {
                changes.push(Change {
                    path: path.clone(),
                    kind,
                });
            }
        }
        // A generated file whose schema is gone.
        for path in files_under(&self.root.join(&self.out)) {
            if !files.iter().any(|(p, _)| *p == path) {
                if mode == Mode::Write {
                    std::fs::remove_file(&path).map_err(|source| io(&path, source))?;
                }
                changes.push(Change {
                    path,
                    kind: ChangeKind::Removed,
                });
            }
        }
        Ok(changes)
    }
}

/// In check mode, any change is [`Error::Stale`] naming `command`; otherwise the changes.
pub fn stale(mode: Mode, command: &str, changes: Vec<Change>) -> Result<Vec<Change>, Error> {
    if mode == Mode::Check && !changes.is_empty() {
        return Err(Error::Stale {
            command: command.to_owned(),
            changes,
        });
    }
    Ok(changes)
}

/// `perago codegen --schemas DIR --out DIR [--check]`: [`Codegen::new`]`(schemas, out)` run in
/// [`Mode::Write`], or [`Mode::Check`] when `check`.
pub fn generate(schemas: &Path, out: &Path, check: bool) -> Result<Vec<Change>, Error> {
    Codegen::new(schemas, out).run(Mode::checking(check))
}

/// Writes `contents` to `path` unless it holds them already (in check mode, writes nothing);
/// returns what writing does, or `None` when the file is fresh.
pub fn ensure_file(path: &Path, contents: &str, mode: Mode) -> Result<Option<ChangeKind>, Error> {
    let kind = match std::fs::read_to_string(path) {
        Ok(old) if old == contents => return Ok(None),
        Ok(_) => ChangeKind::Updated,
        Err(_) => ChangeKind::Created,
    };
    if mode == Mode::Write {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| io(dir, source))?;
        }
        std::fs::write(path, contents).map_err(|source| io(path, source))?;
    }
    Ok(Some(kind))
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A path as files and messages show it: with `/`.
fn shown(path: &Path) -> String {
    path.display().to_string().replace('\\', "/")
}

/// Every file directly in `dir` (none when it does not exist), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}
