//! `$ref`: its target, followed, and cycles through references.

use super::*;

impl Linter<'_> {
    pub(super) fn reference(&mut self, reference: &Value, pointer: &str) {
        let Some(reference) = reference.as_str() else {
            self.err(pointer, "$ref", format!("must be a string such as \"#/$defs/Name\" or \"other.schema.json\", found {reference}"));
            return;
        };
        match self.target(self.doc, reference) {
            Ok((doc, ptr, _)) => {
                if let Some(cycle) = self.ref_cycle(pointer, doc, ptr) {
                    self.err(
                        pointer,
                        "$ref",
                        format!(
                            "{reference:?} leads back here through `$ref`s (and nullable `anyOf`s) only, so it never says what is admitted: {cycle}; make the chain end in a schema that is not a `$ref`"
                        ),
                    );
                }
            }
            Err(message) => self.err(pointer, "$ref", message),
        }
    }
    /// The schema a `$ref` written in document `from` names, loading its file if needed:
    /// its document, pointer and value. Generated types name what they reference, so only a
    /// file's root or a root `$defs` entry may be referenced, by a JSON Pointer (`$id` is
    /// root-only here, so every `$ref` of a document resolves against the document's `$id`).
    pub(super) fn target(
        &mut self,
        from: usize,
        reference: &str,
    ) -> Result<(usize, String, Value), String> {
        let fragment = reference.split_once('#').map_or("", |(_, f)| f);
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(format!(
                "{reference:?}: only JSON Pointer fragments such as \"#/$defs/Name\" are supported, not plain-name (anchor) fragments"
            ));
        }
        // Checked before resolving: a path could resolve, as a URI, to a loaded file.
        perago_schema::load::sibling_file(reference)?;
        let (doc, ptr) = self.docs.resolve(from, "", reference)?;
        let target = self.docs.get(doc);
        if ptr.is_empty() && !has_structure(&target.root) {
            return Err(format!(
                "{reference:?}: {} has no root schema, only `$defs` and annotations: reference one of its `$defs` entries (\"{}#/$defs/Name\")",
                target.file, target.file
            ));
        }
        let def = ptr
            .strip_prefix("/$defs/")
            .filter(|name| !name.contains('/'));
        if !ptr.is_empty() && def.is_none() {
            return Err(format!(
                "{reference:?} points inside a schema; only a file's root (\"other.schema.json\") or a `$defs` entry (\"#/$defs/Name\") may be referenced: move the schema into the root `$defs`"
            ));
        }
        let value = target
            .root
            .pointer(&ptr)
            .cloned()
            .unwrap_or(Value::Bool(true));
        Ok((doc, ptr, value))
    }
    /// Follows `$ref`s (a bounded number of hops) from document `doc` to the schema that says
    /// something, and the document it is in.
    pub(super) fn follow(&mut self, doc: usize, schema: &Value) -> Option<(usize, Value)> {
        let mut current = (doc, schema.clone());
        for _ in 0..64 {
            match current.1.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let (d, _, v) = self.target(current.0, r).ok()?;
                    current = (d, v);
                }
                None => return Some(current),
            }
        }
        None
    }
    /// When the `$ref` at `start` (in this document), which names `(doc, ptr)`, leads back to
    /// itself through `$ref`s and nullable `anyOf`s only, the cycle as text.
    pub(super) fn ref_cycle(
        &mut self,
        start: &str,
        mut doc: usize,
        mut ptr: String,
    ) -> Option<String> {
        let mut seen: Vec<(usize, String)> = Vec::new();
        loop {
            if doc == self.doc && ptr == start {
                let here = format!("{}#{start}", self.file);
                let mut path = vec![here.clone()];
                path.extend(
                    seen.iter()
                        .map(|(d, p)| format!("{}#{p}", self.docs.get(*d).file)),
                );
                path.push(here);
                return Some(path.join(" → "));
            }
            if seen.contains(&(doc, ptr.clone())) || seen.len() > 64 {
                return None;
            }
            seen.push((doc, ptr.clone()));
            let schema = self.docs.get(doc).root.pointer(&ptr)?.clone();
            if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
                (doc, ptr) = self.docs.resolve(doc, "", r).ok()?;
            } else if let Some(branches) = schema
                .get("anyOf")
                .and_then(Value::as_array)
                .filter(|b| b.len() == 2)
            {
                let i = branches.iter().position(|b| !is_null_schema(b))?;
                ptr = format!("{ptr}/anyOf/{i}");
            } else {
                return None;
            }
        }
    }
}
