//! [`Validator`]: a schema in JSON Schema 2020-12 (or draft-07 or 2019-09, read as their 2020-12
//! equivalents), whole, compiled for the interpreter, which
//! reads each document's bytes once (no `Value` tree) and reports every violation.

use crate::check::Out;
use crate::compile::{self, Options as CompileOptions};
use crate::error::{Error, LintError};
use crate::eval::Eval;
use crate::json;
use crate::load::Documents;
use crate::path::Path;
use crate::program::{Ix, Program};
use crate::tape::{Tape, TapeError};
use crate::violation::{Code, Violation};
use serde_json::Value;
use std::sync::Arc;

/// How schemas are read.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// perago's policy, on by default: an object schema that declares members and says
    /// nothing of others admits no others (an `unknown_field` each). Off, the schema is read
    /// as JSON Schema writes it (objects open), which is what conformance tests need.
    pub close_objects: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            close_objects: true,
        }
    }
}

/// A compiled schema: validate documents against it from their bytes.
#[derive(Debug)]
pub struct Validator {
    /// Shared by the validators of its subschemas ([`Validator::at`]).
    program: Arc<Program>,
    root: Ix,
}

/// The buffers a validator reads documents into, kept from one document to the next: a
/// stream of documents then runs in the memory of its largest one.
#[derive(Debug, Default)]
pub struct Scratch {
    tape: Tape,
}

impl Validator {
    /// Loads a schema file and the sibling files its `$ref`s name.
    pub fn load_file(path: &std::path::Path) -> Result<Validator, Error> {
        Validator::load_file_with(path, Options::default())
    }

    /// [`load_file`](Self::load_file) with options.
    pub fn load_file_with(path: &std::path::Path, options: Options) -> Result<Validator, Error> {
        let mut docs = Documents::default();
        docs.add_file(path)?;
        finish(docs, 0, options)
    }

    /// Loads schemas held in memory as `(file name, text)` and validates against the one
    /// whose file name or `$id` is `root`.
    pub fn load_sources<'a>(
        sources: impl IntoIterator<Item = (&'a str, &'a str)>,
        root: &str,
        options: Options,
    ) -> Result<Validator, Error> {
        let mut docs = Documents::default();
        for (file, text) in sources {
            docs.add_source(file, None, text.to_owned())?;
        }
        let index = docs
            .iter()
            .position(|d| d.file == root || d.id == root)
            .ok_or_else(|| {
                Error::Lint(vec![LintError::new(
                    root,
                    "",
                    "",
                    "no schema of this file name or `$id` was given",
                )])
            })?;
        finish(docs, index, options)
    }

    /// One schema given as a value (its `$ref`s name only what is inside it).
    pub fn from_value(schema: &Value, options: Options) -> Result<Validator, Error> {
        let text = schema.to_string();
        Validator::load_sources([("schema.json", text.as_str())], "schema.json", options)
    }

    /// The validator of the subschema at `location` (`file#/json/pointer`, as lint errors
    /// and IR nodes name places), sharing this one's compiled schemas; `None` when nothing
    /// was compiled there.
    pub fn at(&self, location: &str) -> Option<Validator> {
        let ix = self
            .program
            .nodes
            .iter()
            .position(|n| n.location == location)?;
        Some(Validator {
            program: Arc::clone(&self.program),
            root: Ix::try_from(ix).ok()?,
        })
    }

    /// Every violation of the document in `bytes`, in check order: malformed JSON is one
    /// violation at `$`, a repeated key one at its path.
    pub fn validate_slice(&self, bytes: &[u8]) -> Vec<Violation> {
        self.validate_slice_with(&mut Scratch::default(), bytes)
    }

    /// [`validate_slice`](Self::validate_slice), reusing `scratch`'s buffers.
    pub fn validate_slice_with(&self, scratch: &mut Scratch, bytes: &[u8]) -> Vec<Violation> {
        let text = match simdutf8::basic::from_utf8(bytes) {
            Ok(text) if !text.starts_with('\u{feff}') => text,
            _ => return not_strict_json(bytes),
        };
        match scratch.tape.read(text) {
            Ok(()) => self.run(&scratch.tape, text),
            Err(TapeError::NotStrictJson) => not_strict_json(bytes),
            Err(TapeError::TooLarge) => vec![Violation::new(
                "$",
                Code::MalformedJson,
                "the document is larger than the interpreter reads (4 GiB)",
            )],
        }
    }

    /// Every violation of a parsed value.
    pub fn validate_value(&self, value: &Value) -> Vec<Violation> {
        let mut tape = Tape::default();
        match tape.read_value(value) {
            Ok(()) => self.run(&tape, ""),
            Err(_) => vec![Violation::new(
                "$",
                Code::MalformedJson,
                "the value cannot be read",
            )],
        }
    }

    /// Records the violations of the JSON `text` found at `path` of a larger document, as
    /// the rest of that document's are recorded; true when there are none. `None` when the
    /// text is not strict JSON (a repeated key): the caller's own reader reports that.
    pub(crate) fn check_part(&self, text: &str, path: &Path<'_>, out: &mut Out) -> Option<bool> {
        thread_local! {
            /// One tape per thread for every deferred part: no allocation once it has grown.
            static TAPE: std::cell::RefCell<Tape> = std::cell::RefCell::default();
        }
        TAPE.with_borrow_mut(|tape| {
            tape.read(text).ok()?;
            let eval = Eval {
                program: &self.program,
                tape,
                input: text,
            };
            Some(eval.run(self.root, 0, path, out, true, None))
        })
    }

    /// True when the document is valid.
    pub fn is_valid(&self, bytes: &[u8]) -> bool {
        self.validate_slice(bytes).is_empty()
    }

    fn run(&self, tape: &Tape, input: &str) -> Vec<Violation> {
        let mut out = Vec::new();
        let eval = Eval {
            program: &self.program,
            tape,
            input,
        };
        eval.run(self.root, 0, &Path::Root, &mut out, true, None);
        out
    }
}

/// The strict parser's own account of why a text is not strict JSON.
#[cold]
fn not_strict_json(bytes: &[u8]) -> Vec<Violation> {
    match json::parse_strict_slice(bytes) {
        Err(e) => vec![e.to_violation()],
        // The tape and the parser read with the same lexer; should they ever disagree, the
        // document is still not read as valid.
        Ok(_) => vec![Violation::new(
            "$",
            Code::MalformedJson,
            "malformed JSON: the document could not be read",
        )],
    }
}

fn finish(mut docs: Documents, root: usize, options: Options) -> Result<Validator, Error> {
    Validator::from_documents(&mut docs, root, options).map_err(|mut errors| {
        docs.to_written(&mut errors);
        Error::Lint(errors)
    })
}

impl Validator {
    /// Compiles loaded documents (code generation's too, which checks defaults and examples
    /// with it) and validates against the root of document `root`. The errors are located in
    /// the documents as read ([`Documents::to_written`] points them into the files).
    pub fn from_documents(
        docs: &mut Documents,
        root: usize,
        options: Options,
    ) -> Result<Validator, Vec<LintError>> {
        let (program, roots) = compile::compile(
            docs,
            CompileOptions {
                close_objects: options.close_objects,
            },
        )?;
        Ok(Validator {
            program: Arc::new(program),
            root: roots[root],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: Value) -> Validator {
        Validator::from_value(&schema, Options::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// What the tape refuses is what the strict parser refuses, with the parser's words.
    #[test]
    fn documents_that_are_not_strict_json_are_the_parsers_violations() {
        let v = validator(json!({}));
        let many: String = (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect();
        let cases: Vec<Vec<u8>> = vec![
            b"{\"a\": 1, \"a\": 2}".to_vec(),
            b"{\"a\": 1, \"\\u0061\": 2}".to_vec(),
            b"{\"x\": [{\"b\": 1, \"b\": 1}]}".to_vec(),
            format!("{{{many}\"k3\": 0}}").into_bytes(),
            b"{\"a\": 1".to_vec(),
            b"".to_vec(),
            b"\xef\xbb\xbf{}".to_vec(),
            b"\"\xff\"".to_vec(),
            b"[1,]".to_vec(),
            b"{} x".to_vec(),
            "[".repeat(200).into_bytes(),
        ];
        for bytes in cases {
            let expected = vec![
                json::parse_strict_slice(&bytes)
                    .expect_err("not strict JSON")
                    .to_violation(),
            ];
            assert_eq!(
                v.validate_slice(&bytes),
                expected,
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
        let fine = format!("{{{many}\"last\": {{\"k3\": \"\\u00e9\"}}}}");
        assert!(v.validate_slice(fine.as_bytes()).is_empty());
    }

    #[test]
    fn a_scratch_is_reused_across_documents_of_any_size() {
        let v = validator(json!({"type": "array", "items": {"type": "string", "maxLength": 3}}));
        let mut scratch = Scratch::default();
        let big = serde_json::to_vec(&vec!["abc"; 10_000]).unwrap();
        assert!(v.validate_slice_with(&mut scratch, &big).is_empty());
        let bad = v.validate_slice_with(&mut scratch, b"[\"abcd\", \"a\\nb\", 3]");
        let paths: Vec<&str> = bad.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["$[0]", "$[2]"]);
        assert_eq!(v.validate_value(&json!(["abcd", "ab", 3])), bad);
    }

    #[test]
    fn objects_close_where_a_value_is_entered_over_everything_applied_to_it() {
        let v = validator(json!({
            "$defs": {"base": {"properties": {"id": {"type": "integer"}}, "required": ["id"]}},
            "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"extra": {"type": "string"}}}],
            "properties": {"inner": {"$ref": "#/$defs/base"}}
        }));
        assert!(
            v.validate_slice(br#"{"id": 1, "extra": "x", "inner": {"id": 2}}"#)
                .is_empty()
        );
        let bad = v.validate_slice(br#"{"id": 1, "other": 0, "inner": {"id": 2, "extra": "x"}}"#);
        let found: Vec<String> = bad
            .iter()
            .map(|x| format!("{} {}", x.path, x.code))
            .collect();
        assert_eq!(
            found,
            ["$.inner.extra unknown_field", "$.other unknown_field"]
        );
        let open = Validator::from_value(
            &json!({"properties": {"a": {}}}),
            Options {
                close_objects: false,
            },
        )
        .unwrap();
        assert!(open.validate_slice(br#"{"b": 1}"#).is_empty());
    }

    /// A `oneOf` discriminated by a tag and, without it, by keys: the tag (present) or the keys
    /// (absent) choose the one branch that runs, and what no branch can take is said once.
    #[test]
    fn a_one_of_discriminated_by_a_tag_and_by_keys_runs_the_branch_they_choose() {
        let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
        let v = validator(json!({"oneOf": [
            object(json!({"kind": {"const": "a"}, "x": {"type": "integer"}}), json!(["kind", "x"])),
            object(json!({"kind": {"const": "b"}}), json!(["kind"])),
            object(json!({"url": {"type": "string"}, "x": {"type": "string"}}), json!(["url"])),
            object(json!({"path": {"type": "string"}}), json!(["path"]))
        ]}));
        let found = |doc: &str| -> Vec<String> {
            let bytes = v.validate_slice(doc.as_bytes());
            assert_eq!(v.validate_value(&serde_json::from_str(doc).unwrap()), bytes);
            bytes
                .iter()
                .map(|x| format!("{} {}: {}", x.path, x.code, x.message))
                .collect()
        };
        for valid in [
            r#"{"kind": "a", "x": 1}"#,
            r#"{"kind": "b"}"#,
            r#"{"x": "s", "url": "u"}"#,
            r#"{"path": "p"}"#,
        ] {
            assert_eq!(found(valid), Vec::<String>::new(), "{valid}");
        }
        // `x` is checked as the branch chosen says, before or after the key that chooses it.
        assert_eq!(
            found(r#"{"x": 1, "url": "u"}"#),
            ["$.x type: must be a string, found an integer"]
        );
        assert_eq!(
            found(r#"{"x": "s", "kind": "a"}"#),
            ["$.x type: must be an integer, found a string"]
        );
        // The tag chooses: the keys of the branches without one are unknown to it.
        assert_eq!(
            found(r#"{"kind": "b", "url": "u"}"#),
            ["$.url unknown_field: unknown field"]
        );
        assert_eq!(
            found(r#"{"kind": "c", "url": "u"}"#),
            ["$.kind discriminator: must be one of: \"a\", \"b\""]
        );
        // Without the tag, the keys choose among the branches without one (`x` is a key only
        // the `url` branch of them declares).
        assert_eq!(
            found(r#"{"x": 1}"#),
            [
                "$.url required: required field is missing",
                "$.x type: must be a string, found an integer"
            ]
        );
        assert_eq!(
            found(r#"{"y": 1}"#),
            [
                "$ one_of: none of the branches' required keys is present: expected \"kind\", or \"url\", or \"path\""
            ]
        );
        assert_eq!(
            found(r#"{"path": "p", "url": "u"}"#),
            [
                "$ one_of: has keys of several branches (\"url\", \"path\"): only one branch may apply"
            ]
        );
    }

    /// A `oneOf` tagged on two properties, one of them by integers (`1.0` is `1`), with one
    /// branch without a tag: one tag chooses, two are keys of several branches, none leaves
    /// the branch without one.
    #[test]
    fn a_one_of_tagged_on_several_properties_runs_the_branch_its_tag_chooses() {
        let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
        let v = validator(json!({"oneOf": [
            object(json!({"kind": {"const": "a"}, "x": {"type": "integer"}}), json!(["kind"])),
            object(json!({"kind": {"const": "b"}, "x": {"type": "string"}}), json!(["kind"])),
            object(json!({"version": {"const": 1}, "x": {"type": "boolean"}}), json!(["version"])),
            object(json!({"version": {"const": 2}}), json!(["version"])),
            object(json!({"path": {"type": "string"}}), json!(["path"]))
        ]}));
        let found = |doc: &str| -> Vec<String> {
            let bytes = v.validate_slice(doc.as_bytes());
            assert_eq!(v.validate_value(&serde_json::from_str(doc).unwrap()), bytes);
            bytes
                .iter()
                .map(|x| format!("{} {}: {}", x.path, x.code, x.message))
                .collect()
        };
        for valid in [
            r#"{"kind": "a", "x": 1}"#,
            r#"{"x": "s", "kind": "b"}"#,
            r#"{"version": 1.0, "x": true}"#,
            r#"{"version": 2}"#,
            r#"{"path": "p"}"#,
        ] {
            assert_eq!(found(valid), Vec::<String>::new(), "{valid}");
        }
        assert_eq!(
            found(r#"{"x": 1, "version": 1}"#),
            ["$.x type: must be a boolean, found an integer"]
        );
        assert_eq!(
            found(r#"{"version": "1"}"#),
            ["$.version discriminator: must be one of: 1, 2"]
        );
        assert_eq!(
            found(r#"{"kind": "a", "version": 2}"#),
            [
                "$ one_of: has keys of several branches (\"kind\", \"version\"): only one branch may apply"
            ]
        );
        assert_eq!(
            found(r#"{"x": 1}"#),
            [
                "$.x unknown_field: unknown field",
                "$.path required: required field is missing"
            ]
        );
    }

    #[test]
    fn what_stays_out_is_refused_with_the_reason() {
        let refused = |schema: Value| {
            Validator::from_value(&schema, Options::default())
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused(json!({"$dynamicRef": "#a"}))
                .contains("`$dynamicRef`: perago does not support")
        );
        assert!(
            refused(json!({"$ref": "https://example.com/x.json"}))
                .contains("does not fetch schemas over the network")
        );
        assert!(refused(json!({"$ref": "#"})).contains("validating would never end"));
        assert!(refused(json!({"minLenght": 1})).contains("did you mean `minLength`?"));
        assert!(
            refused(json!({"$schema": "http://json-schema.org/draft-04/schema#"}))
                .contains("is a draft perago does not read")
        );
        assert!(
            refused(json!({"$schema": "http://json-schema.org/draft-07/schema#", "$defs": {}}))
                .contains("`$defs`: not a draft-07 keyword: write `definitions`")
        );
    }

    #[test]
    fn drafts_are_read_with_their_own_meaning() {
        let verdicts = |schema: Value, documents: &[Value]| -> Vec<bool> {
            let v = Validator::from_value(&schema, Options::default())
                .unwrap_or_else(|e| panic!("{e}"));
            documents
                .iter()
                .map(|d| v.is_valid(d.to_string().as_bytes()))
                .collect()
        };
        let draft07 = "http://json-schema.org/draft-07/schema#";
        // `$ref` overrides its siblings; `definitions`; `dependencies`; a tuple `items`.
        let schema = json!({
            "$schema": draft07,
            "definitions": {"pair": {"items": [{"type": "string"}], "additionalItems": false}},
            "properties": {
                "p": {"$ref": "#/definitions/pair", "maxItems": 0},
                "d": {"type": "object", "additionalProperties": true,
                      "dependencies": {"a": ["b"], "c": {"required": ["e"]}}}
            }
        });
        assert_eq!(
            verdicts(
                schema,
                &[
                    json!({"p": ["x"]}),
                    json!({"p": ["x", "y"]}),
                    json!({"p": [1]}),
                    json!({"d": {"a": 1}}),
                    json!({"d": {"c": 1, "e": 1}}),
                ]
            ),
            [true, false, false, false, true]
        );
        // 2019-09's `$recursiveRef`: the outermost resource with `$recursiveAnchor: true`.
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$id": "https://example.com/strict-tree",
            "$recursiveAnchor": true,
            "$ref": "tree",
            "unevaluatedProperties": false,
            "$defs": {"tree": {
                "$id": "tree", "$recursiveAnchor": true, "type": "object",
                "properties": {"data": true, "children": {"type": "array", "items": {"$recursiveRef": "#"}}}
            }}
        });
        assert_eq!(
            verdicts(
                schema,
                &[
                    json!({"children": [{"data": 1}]}),
                    json!({"children": [{"daat": 1}]}),
                ]
            ),
            [true, false]
        );
    }
}
