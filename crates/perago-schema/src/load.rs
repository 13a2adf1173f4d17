//! Loading schema documents and resolving `$ref`s between them.

use crate::error::{Error, LintError};
use crate::json::parse_strict;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One schema file, parsed.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name as given (for messages), e.g. `workspace-input.schema.json`.
    pub file: String,
    /// The directory relative `$ref`s to other files are resolved in, when loaded from disk.
    pub dir: Option<PathBuf>,
    /// `$id`, or a `file:` URI when the document has none.
    pub id: String,
    /// The text as read.
    pub source: String,
    /// The parsed document.
    pub root: Value,
}

/// Documents by `$id`, in load order.
#[derive(Debug, Default)]
pub struct Documents {
    pub docs: Vec<Document>,
}

impl Documents {
    /// Every document in load order.
    pub fn iter(&self) -> impl Iterator<Item = &Document> {
        self.docs.iter()
    }

    pub fn index_of_id(&self, id: &str) -> Option<usize> {
        self.docs.iter().position(|d| d.id == id)
    }

    pub fn get(&self, index: usize) -> &Document {
        &self.docs[index]
    }

    /// Parses one document from text and adds it.
    pub fn add_source(
        &mut self,
        file: &str,
        dir: Option<PathBuf>,
        source: String,
    ) -> Result<usize, Error> {
        // A key that appears twice in one object is an error, not the last one silently winning.
        let root = parse_strict(&source).map_err(|e| Error::Parse {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        if let Some(existing) = self.docs.iter().find(|d| d.file == file) {
            let message = match (&existing.dir, &dir) {
                (Some(a), Some(b)) if a != b => format!(
                    "a schema file of this name was already loaded from {}; file names must be unique",
                    a.display()
                ),
                _ => "given twice; every schema file must have a distinct name".to_owned(),
            };
            return Err(Error::Lint(vec![LintError::new(file, "", "", message)]));
        }
        let id = match root.get("$id") {
            Some(Value::String(id)) => id.clone(),
            _ => format!("file:{file}"),
        };
        if let Some(existing) = self.index_of_id(&id) {
            return Err(Error::Lint(vec![LintError::new(
                file,
                "",
                "$id",
                format!(
                    "{id:?} is already the `$id` of {}; every schema file needs its own `$id`",
                    self.docs[existing].file
                ),
            )]));
        }
        self.docs.push(Document {
            file: file.to_owned(),
            dir,
            id,
            source,
            root,
        });
        Ok(self.docs.len() - 1)
    }

    /// Reads a file from disk and adds it.
    pub fn add_file(&mut self, path: &Path) -> Result<usize, Error> {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        if let Some(i) = self
            .docs
            .iter()
            .position(|d| d.file == file && d.dir.as_deref() == path.parent())
        {
            return Ok(i);
        }
        let source = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        self.add_source(&file, path.parent().map(Path::to_owned), source)
    }

    /// Resolves a `$ref` written in document `from` to (document, JSON Pointer), loading the
    /// referenced file from disk when it is not loaded yet.
    pub fn resolve(&mut self, from: usize, reference: &str) -> Result<(usize, String), String> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(format!(
                "{reference:?}: only JSON Pointer fragments such as \"#/$defs/Name\" are supported, not plain-name (anchor) fragments"
            ));
        }
        let pointer = decode_fragment(fragment);
        let base = base.strip_prefix("./").unwrap_or(base);
        if base.is_empty() {
            return Ok((from, pointer));
        }
        let absolute = join(&self.docs[from].id, base);
        if let Some(i) = self
            .index_of_id(&absolute)
            .or_else(|| self.index_of_id(base))
        {
            return Ok((i, pointer));
        }
        if base.contains(':') {
            return Err(format!(
                "{reference:?}: no loaded schema has the `$id` {base:?}"
            ));
        }
        if base.contains(['/', '\\']) || base.starts_with('.') {
            return Err(format!(
                "{reference:?}: a `$ref` may only name a sibling file by its file name (e.g. \"other.schema.json#/$defs/Name\"), not the path {base:?}"
            ));
        }
        let missing = || {
            format!(
                "{reference:?}: there is no schema file named {base:?} beside {}",
                self.docs[from].file
            )
        };
        let Some(dir) = self.docs[from].dir.clone() else {
            // In-memory documents resolve relative references by file name.
            return self
                .docs
                .iter()
                .position(|d| d.file == base)
                .map(|i| (i, pointer))
                .ok_or_else(missing);
        };
        let path = dir.join(base);
        if !path.is_file() {
            return Err(missing());
        }
        match self.add_file(&path) {
            Ok(i) => Ok((i, pointer)),
            Err(e) => Err(format!("{reference:?}: {e}")),
        }
    }
}

/// Resolves `reference` against a base URI (enough of RFC 3986 for sibling files).
fn join(base: &str, reference: &str) -> String {
    if reference.contains("://") || reference.starts_with("urn:") {
        return reference.to_owned();
    }
    match base.rfind('/') {
        Some(i) if base.contains("://") => format!("{}{reference}", &base[..=i]),
        _ => reference.to_owned(),
    }
}

/// `/$defs/A%20B` → `/$defs/A B` (URI fragments percent-encode; JSON Pointers do not).
pub fn decode_fragment(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes one JSON Pointer token.
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Collects the schema files of a directory (`*.json`), sorted by name.
pub fn schema_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Error::Io {
                path: dir.to_owned(),
                message: e.to_string(),
            })?
            .path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Puts errors in load order of their files and, within a file, in the order their location
/// (the keyword in the node at the pointer) appears in the document.
pub fn sort_errors(docs: &Documents, errors: &mut [LintError]) {
    let mut order: HashMap<&str, (usize, HashMap<String, usize>)> = HashMap::new();
    for (i, doc) in docs.iter().enumerate() {
        order.entry(doc.file.as_str()).or_insert_with(|| {
            let mut positions = HashMap::new();
            preorder(&doc.root, String::new(), &mut positions);
            (i, positions)
        });
    }
    errors.sort_by_cached_key(|e| match order.get(e.file.as_str()) {
        Some((i, positions)) => {
            let at_keyword = (!e.keyword.is_empty())
                .then(|| format!("{}/{}", e.pointer, pointer_token(&e.keyword)));
            let position = at_keyword
                .and_then(|p| positions.get(&p))
                .or_else(|| positions.get(&e.pointer));
            (*i, position.copied().unwrap_or(usize::MAX))
        }
        None => (usize::MAX, 0),
    });
}

fn preorder(value: &Value, pointer: String, positions: &mut HashMap<String, usize>) {
    let n = positions.len();
    positions.insert(pointer.clone(), n);
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                preorder(v, format!("{pointer}/{}", pointer_token(k)), positions);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                preorder(v, format!("{pointer}/{i}"), positions);
            }
        }
        _ => {}
    }
}
