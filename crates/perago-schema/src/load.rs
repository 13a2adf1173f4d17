//! Loading schema documents and resolving `$ref`s between them: the one resolver the
//! interpreter and code generation share. A `$ref` is resolved against the base URI in force
//! where it is written (the nearest enclosing `$id`, RFC 3986 §5.2) to a schema resource found
//! by `$id` anywhere in the loaded documents, then its fragment to a JSON Pointer or an
//! `$anchor`; a resource not loaded is a sibling file, loaded by its file name. A draft-07 or
//! 2019-09 document is held as its 2020-12 equivalent (`dialect::upgrade`), and a `$ref`'s
//! JSON Pointer, written against the document as written, is followed there.

use crate::dialect::{
    Dialect, SCHEMA_ARRAY_KEYWORDS, SCHEMA_KEYWORDS, SCHEMA_MAP_KEYWORDS, upgrade,
};
use crate::error::{Error, LintError};
use crate::json::parse_strict;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use crate::path::{pointer_token, unescape_pointer_token};

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
    /// The parsed document, in 2020-12 terms (as written, for a 2020-12 document).
    pub root: Value,
    /// The dialect its root's `$schema` names (2020-12 without one).
    pub dialect: Dialect,
    /// The document as written, when `root` is its upgrade from an earlier dialect.
    pub written: Option<Value>,
}

impl Document {
    /// Where the JSON Pointer `pointer` of [`Document::root`] is in the file as written.
    pub fn written_pointer(&self, pointer: &str) -> String {
        match &self.written {
            Some(w) => upgrade::written_pointer(self.dialect, w, pointer),
            None => pointer.to_owned(),
        }
    }

    /// Where the JSON Pointer `pointer` of the file as written is in [`Document::root`].
    pub fn upgraded_pointer(&self, pointer: &str) -> String {
        match &self.written {
            Some(w) => upgrade::upgraded_pointer(self.dialect, w, pointer),
            None => pointer.to_owned(),
        }
    }
}

/// Documents by `$id`, in load order, with the schema resources and anchors they hold.
#[derive(Debug, Default)]
pub struct Documents {
    pub docs: Vec<Document>,
    /// Absolute URI (no fragment) of every schema resource → where it is.
    resources: HashMap<String, (usize, String)>,
    /// `uri#name` of every `$anchor` and `$dynamicAnchor` → where it is.
    anchors: HashMap<String, (usize, String)>,
    /// The base URI of each schema with an `$id`.
    bases: HashMap<(usize, String), String>,
    /// An `$id` with a fragment, found while indexing: the interpreter refuses it.
    pub(crate) id_errors: Vec<LintError>,
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
        let dialect = Dialect::of(&root);
        let (root, written) = match dialect {
            Dialect::Draft2020_12 => (root, None),
            _ => {
                let (upgraded, refusals) = upgrade::upgrade(dialect, &root);
                if !refusals.is_empty() {
                    let errors = refusals
                        .into_iter()
                        .map(|(pointer, keyword, message)| {
                            LintError::new(file, &pointer, &keyword, message)
                        })
                        .collect();
                    return Err(Error::Lint(errors));
                }
                (upgraded, Some(root))
            }
        };
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
            dialect,
            written,
        });
        let index = self.docs.len() - 1;
        self.index(index);
        Ok(index)
    }

    /// Finds the schema resources and anchors of document `doc`.
    fn index(&mut self, doc: usize) {
        let d = &self.docs[doc];
        let (base, root) = (strip_empty_fragment(&d.id).to_owned(), d.root.clone());
        self.resources
            .entry(base.clone())
            .or_insert((doc, String::new()));
        self.index_schema(doc, "", &root, &base, true);
    }

    fn index_schema(&mut self, doc: usize, pointer: &str, schema: &Value, base: &str, root: bool) {
        let Value::Object(map) = schema else { return };
        let mut base = base.to_owned();
        if let Some(Value::String(id)) = map.get("$id") {
            if !root {
                base = resolve_uri(&base, strip_empty_fragment(id));
                if id.contains('#') && !id.ends_with('#') {
                    self.id_errors.push(LintError::new(
                        &self.docs[doc].file,
                        pointer,
                        "$id",
                        format!("{id:?} has a fragment: an `$id` names a resource; use `$anchor` for a name inside one"),
                    ));
                }
                self.resources
                    .entry(base.clone())
                    .or_insert((doc, pointer.to_owned()));
            }
            self.bases.insert((doc, pointer.to_owned()), base.clone());
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(name)) = map.get(key) {
                self.anchors
                    .entry(format!("{base}#{name}"))
                    .or_insert((doc, pointer.to_owned()));
            }
        }
        for (k, v) in map {
            let at = format!("{pointer}/{}", pointer_token(k));
            if SCHEMA_KEYWORDS.contains(&k.as_str()) {
                self.index_schema(doc, &at, v, &base, false);
            } else if SCHEMA_ARRAY_KEYWORDS.contains(&k.as_str()) {
                if let Value::Array(items) = v {
                    for (i, s) in items.iter().enumerate() {
                        self.index_schema(doc, &format!("{at}/{i}"), s, &base, false);
                    }
                }
            } else if SCHEMA_MAP_KEYWORDS.contains(&k.as_str())
                && let Value::Object(entries) = v
            {
                for (name, s) in entries {
                    let at = format!("{at}/{}", pointer_token(name));
                    self.index_schema(doc, &at, s, &base, false);
                }
            }
        }
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

    /// The base URI in force at `pointer` of document `doc`: the nearest enclosing `$id`'s.
    pub fn base_of(&self, doc: usize, pointer: &str) -> String {
        let mut p = pointer;
        loop {
            if let Some(b) = self.bases.get(&(doc, p.to_owned())) {
                return b.clone();
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return strip_empty_fragment(&self.docs[doc].id).to_owned(),
            }
        }
    }

    /// The schema resource `pointer` of document `doc` is in: (document, JSON Pointer of the
    /// nearest enclosing schema with an `$id`, or of the root).
    pub fn resource_of(&self, doc: usize, pointer: &str) -> (usize, String) {
        let mut p = pointer;
        loop {
            if self.bases.contains_key(&(doc, p.to_owned())) {
                return (doc, p.to_owned());
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return (doc, String::new()),
            }
        }
    }

    /// Resolves the `$ref` `reference` written at `at` in document `from` to (document, JSON
    /// Pointer), loading a sibling file from disk when it names one not loaded yet.
    pub fn resolve(
        &mut self,
        from: usize,
        at: &str,
        reference: &str,
    ) -> Result<(usize, String), String> {
        let absolute = resolve_uri(&self.base_of(from, at), reference);
        let (uri, fragment) = absolute.split_once('#').unwrap_or((&absolute, ""));
        let (rdoc, rptr) = match self.resources.get(uri) {
            Some(found) => found.clone(),
            None => self.load_sibling(from, reference, uri)?,
        };
        let target = if fragment.is_empty() {
            rptr
        } else if fragment.starts_with('/') {
            // The pointer is written against the resource as written.
            let d = &self.docs[rdoc];
            let written = format!("{}{}", d.written_pointer(&rptr), decode_fragment(fragment));
            d.upgraded_pointer(&written)
        } else {
            match self.anchors.get(&format!("{uri}#{fragment}")) {
                Some((d, p)) if *d == rdoc => p.clone(),
                _ => {
                    return Err(format!(
                        "{reference:?}: no `$anchor` named {fragment:?} in {uri}"
                    ));
                }
            }
        };
        if self.docs[rdoc].root.pointer(&target).is_none() {
            return Err(nothing_at(reference, &self.docs[rdoc], &target));
        }
        Ok((rdoc, target))
    }

    /// A reference to a resource not loaded: a sibling file by its file name (in memory, or
    /// beside the referring file on disk), else a refusal that says why.
    fn load_sibling(
        &mut self,
        from: usize,
        reference: &str,
        uri: &str,
    ) -> Result<(usize, String), String> {
        let Some(name) = sibling_file(reference)? else {
            return Err(format!(
                "{reference:?}: no loaded schema has the URI {uri:?}; perago does not fetch schemas over the network: load the schema it names beside this one"
            ));
        };
        if let Some(i) = self.docs.iter().position(|d| d.file == name) {
            return Ok((i, String::new()));
        }
        let missing = || {
            format!(
                "{reference:?}: there is no schema file named {name:?} beside {}",
                self.docs[from].file
            )
        };
        let Some(path) = self.docs[from].dir.as_ref().map(|dir| dir.join(name)) else {
            return Err(missing());
        };
        if !path.is_file() {
            return Err(missing());
        }
        let i = self
            .add_file(&path)
            .map_err(|e| format!("{reference:?}: {e}"))?;
        self.resources
            .entry(uri.to_owned())
            .or_insert((i, String::new()));
        Ok((i, String::new()))
    }
}

impl Documents {
    /// Points `errors` found in the documents as read into the files as written (`/$defs/A`
    /// of an upgraded draft-07 file is its `/definitions/A`).
    pub fn to_written(&self, errors: &mut [LintError]) {
        for e in errors {
            let Some(doc) = self
                .docs
                .iter()
                .find(|d| d.file == e.file && d.written.is_some())
            else {
                continue;
            };
            if e.keyword.is_empty() {
                e.pointer = doc.written_pointer(&e.pointer);
                continue;
            }
            let at = doc.written_pointer(&format!("{}/{}", e.pointer, pointer_token(&e.keyword)));
            if let Some((pointer, keyword)) = at.rsplit_once('/') {
                e.keyword = crate::path::unescape_pointer_token(keyword);
                e.pointer = pointer.to_owned();
            }
        }
    }
}

/// The file a `$ref` names beside the referring one (`other.schema.json`,
/// `./other.schema.json#/$defs/A`), `None` for one that names no file (`#/$defs/A`) or a URI
/// with a scheme; a path (`../x.json`, `sub/x.json`) is refused: schemas are loaded from one
/// directory.
pub fn sibling_file(reference: &str) -> Result<Option<&str>, String> {
    let name = reference.split('#').next().unwrap_or("");
    let name = name.strip_prefix("./").unwrap_or(name);
    if name.is_empty() || name.contains(':') {
        return Ok(None);
    }
    if name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(format!(
            "{reference:?}: a `$ref` may only name a sibling file by its file name (e.g. \"other.schema.json#/$defs/Name\"), not the path {name:?}"
        ));
    }
    Ok(Some(name))
}

/// Why `reference` names nothing: a `$defs` entry that is not there, with those that are, or
/// any other pointer.
fn nothing_at(reference: &str, doc: &Document, target: &str) -> String {
    let Some(name) = target
        .strip_prefix("/$defs/")
        .filter(|name| !name.contains('/'))
    else {
        let target = doc.written_pointer(target);
        return format!("{reference:?}: nothing at {target:?} in {}", doc.file);
    };
    let name = crate::path::unescape_pointer_token(name);
    let defs = match doc.dialect {
        Dialect::Draft07 => "definitions",
        _ => "$defs",
    };
    let entries = match doc.root.get("$defs").and_then(Value::as_object) {
        Some(defs) if !defs.is_empty() => {
            let names: Vec<String> = defs.keys().map(|k| format!("{k:?}")).collect();
            format!("its entries are {}", names.join(", "))
        }
        _ => format!("it has no `{defs}`"),
    };
    format!(
        "{reference:?}: {} has no `{defs}` entry {name:?} ({entries})",
        doc.file
    )
}

fn strip_empty_fragment(id: &str) -> &str {
    id.strip_suffix('#').unwrap_or(id)
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

/// Resolves `reference` against `base` (RFC 3986 §5.2).
pub fn resolve_uri(base: &str, reference: &str) -> String {
    let r = crate::format::parts(reference);
    let b = crate::format::parts(base);
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        scheme = r.scheme;
        authority = r.authority;
        path = remove_dots(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dots(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_owned();
                query = r.query.or(b.query);
            } else {
                path = if r.path.starts_with('/') {
                    remove_dots(r.path)
                } else if b.authority.is_some() && b.path.is_empty() {
                    remove_dots(&format!("/{}", r.path))
                } else {
                    let dir = b.path.rfind('/').map_or("", |i| &b.path[..=i]);
                    remove_dots(&format!("{dir}{}", r.path))
                };
                query = r.query;
            }
        }
    }
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = r.fragment.filter(|f| !f.is_empty()) {
        out.push('#');
        out.push_str(f);
    }
    out
}

fn remove_dots(path: &str) -> String {
    if !path.contains('.') {
        return path.to_owned();
    }
    let mut out: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    for (i, s) in segments.iter().enumerate() {
        match *s {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > usize::from(absolute) {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if absolute && !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_uri as resolve;

    #[test]
    fn resolves_references_as_rfc_3986_does() {
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("../g", "http://a/b/g"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("g:h", "g:h"),
            ("", "http://a/b/c/d;p?q"),
        ] {
            assert_eq!(resolve(base, r), want, "{r}");
        }
        assert_eq!(
            resolve("urn:uuid:1234", "#/$defs/a"),
            "urn:uuid:1234#/$defs/a"
        );
        assert_eq!(
            resolve("file:a.schema.json", "b.schema.json"),
            "file:b.schema.json"
        );
        assert_eq!(
            resolve("https://perago.dev/schemas/a.json", "b.json#/$defs/X"),
            "https://perago.dev/schemas/b.json#/$defs/X"
        );
    }
}
