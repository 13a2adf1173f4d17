//! A strict JSON parser: `serde_json` with one more rule, that a key appears at most once in
//! an object. Parsers disagree on which of two equal keys wins, so a contract that is read by
//! more than one of them must not accept the ambiguity; the duplicate is reported at its path.
//! Every door that reads a document (a task input, `perago validate`, a completion payload)
//! rejects it the same way. A leading byte order mark is named as such, not as a bad value.

use crate::path::Path;
use crate::violation::{Code, Violation};
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// Why a text is not strict JSON.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all: serde_json's error, with its line and column.
    #[error("{0}")]
    Malformed(serde_json::Error),
    /// Text that starts with a byte order mark (RFC 8259 §8.1 forbids it).
    #[error(
        "the document starts with a byte order mark (U+FEFF), which JSON does not allow: \
         save it as UTF-8 without a BOM"
    )]
    ByteOrderMark,
    /// Valid JSON in which one object repeats a key.
    #[error("{error}")]
    DuplicateKey {
        /// The JSONPath of the repeated key, e.g. `$.verification.command`.
        path: String,
        /// The parser's error, whose message names the key, its line and column.
        error: serde_json::Error,
    },
}

impl ParseError {
    /// The line where the parser stopped (1 for a byte order mark).
    pub fn line(&self) -> usize {
        match self {
            ParseError::Malformed(error) | ParseError::DuplicateKey { error, .. } => {
                error.line().max(1)
            }
            ParseError::ByteOrderMark => 1,
        }
    }

    /// The error as a violation: `duplicate field` at the key's path, or `malformed JSON: …`
    /// at `$`.
    pub fn to_violation(&self) -> Violation {
        match self {
            ParseError::Malformed(_) | ParseError::ByteOrderMark => {
                Violation::new("$", Code::MalformedJson, format!("malformed JSON: {self}"))
            }
            ParseError::DuplicateKey { path, .. } => {
                Violation::new(path.clone(), Code::DuplicateField, "duplicate field")
            }
        }
    }
}

/// `serde_json::from_slice::<Value>`, with the same result and errors, faster: the whole text's
/// UTF-8 is checked in one SIMD pass, so the parser need not check each string again.
pub fn parse_value(bytes: &[u8]) -> serde_json::Result<Value> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// Parses `text` like `serde_json::from_str::<Value>`, but a repeated key is an error.
pub fn parse_strict(text: &str) -> Result<Value, ParseError> {
    if text.starts_with('\u{feff}') {
        return Err(ParseError::ByteOrderMark);
    }
    parse(serde_json::Deserializer::from_str(text))
}

/// [`parse_strict`] for bytes; text that is not UTF-8 is malformed.
pub fn parse_strict_slice(bytes: &[u8]) -> Result<Value, ParseError> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => parse_strict(text),
        Err(_) if bytes.starts_with("\u{feff}".as_bytes()) => Err(ParseError::ByteOrderMark),
        Err(_) => parse(serde_json::Deserializer::from_slice(bytes)),
    }
}

fn parse<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Value, ParseError> {
    let duplicate = RefCell::new(None);
    let root = Path::Root;
    let seed = Strict {
        path: &root,
        duplicate: &duplicate,
    };
    let parsed = seed.deserialize(&mut de).and_then(|value| {
        de.end()?;
        Ok(value)
    });
    parsed.map_err(|error| match duplicate.into_inner() {
        Some(path) => ParseError::DuplicateKey { path, error },
        None => ParseError::Malformed(error),
    })
}

/// Reads one [`Value`] from any deserialiser, a repeated key in an object being an error: what
/// generated readers read a value with when they need one whole (an open `{}`, a value of the
/// wrong type), so that a repeated key stops their pass as it stops the parser.
pub fn value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let duplicate = RefCell::new(None);
    Strict {
        path: &Path::Root,
        duplicate: &duplicate,
    }
    .deserialize(d)
}

/// [`value`] as a serde seed, for a map's or a sequence's next value.
#[derive(Debug, Clone, Copy, Default)]
pub struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        value(d)
    }
}

/// Builds a [`Value`] at `path`, rejecting duplicate keys. serde's error type cannot carry the
/// path, so it is left in `duplicate` beside the error.
struct Strict<'a> {
    path: &'a Path<'a>,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // serde_json never hands out a non-finite number from text.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = self.path.index(items.len());
            let seed = Strict {
                path: &path,
                duplicate: self.duplicate,
            };
            match seq.next_element_seed(seed)? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let path = self.path.key(&key);
            if map.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(path.render());
                return Err(A::Error::custom(format_args!(
                    "the key {key:?} appears twice in one object"
                )));
            }
            let value = access.next_value_seed(Strict {
                path: &path,
                duplicate: self.duplicate,
            })?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse_value` is `serde_json::from_slice` to the letter: values, and every error's
    /// wording, line and column.
    #[test]
    fn parse_value_is_from_slice() {
        let deep = "[".repeat(200);
        let cases: Vec<&[u8]> = vec![
            br#"{"a": [1, 2.5, -3, "\u00e9\ud83d\ude00", null, true], "b": {}}"#,
            "{\"é\": \"ü\\u3000\"}".as_bytes(),
            b"",
            b"   ",
            b"{\"a\": 1",
            b"{\"a\": 1} x",
            b"{\"a\" 1}",
            b"[1,]",
            br#""\x""#,
            br#""\ud800""#,
            br#""\udc00x""#,
            b"\"tab\there\"",
            b"\"a\xffb\"",
            b"{\"\xc3\": 1}",
            b"\xef\xbb\xbf{}",
            b"1e400",
            b"-",
            b"01",
            b"[1, 2]\n\n[3]",
            deep.as_bytes(),
        ];
        for bytes in cases {
            let expected = serde_json::from_slice::<Value>(bytes).map_err(|e| e.to_string());
            let got = parse_value(bytes).map_err(|e| e.to_string());
            assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    fn duplicate_path(text: &str) -> Option<String> {
        match parse_strict(text) {
            Err(ParseError::DuplicateKey { path, .. }) => Some(path),
            _ => None,
        }
    }

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"b": [1, -2, 3.5, "x", null, true], "a": {"c": {}}}"#;
        let strict = parse_strict(text).expect("valid");
        let plain: Value = serde_json::from_str(text).expect("valid");
        assert_eq!(strict, plain);
        let keys: Vec<&String> = strict.as_object().expect("an object").keys().collect();
        assert_eq!(keys, ["b", "a"], "document order is kept");
    }

    #[test]
    fn a_duplicate_key_is_reported_at_its_path() {
        assert_eq!(
            duplicate_path(r#"{"a": 1, "a": 2}"#).as_deref(),
            Some("$.a")
        );
        assert_eq!(
            duplicate_path(r#"{"v": {"command": "x", "command": "y"}}"#).as_deref(),
            Some("$.v.command")
        );
        assert_eq!(
            duplicate_path(r#"{"s": [0, {"odd key": 1, "odd key": 1}]}"#).as_deref(),
            Some("$.s[1]['odd key']")
        );
        let err = parse_strict("{\"a\": 1,\n \"a\": 1}").expect_err("duplicate");
        assert_eq!(
            err.to_string(),
            "the key \"a\" appears twice in one object at line 2 column 4"
        );
        assert_eq!(
            err.to_violation(),
            Violation::new("$.a", Code::DuplicateField, "duplicate field")
        );
    }

    #[test]
    fn equal_keys_in_different_objects_are_fine() {
        assert!(parse_strict(r#"{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}"#).is_ok());
    }

    #[test]
    fn malformed_text_keeps_serde_jsons_message() {
        for text in ["", "{", "{} x", "NaN", "[1,]", "{\"a\": 1e999}"] {
            let err = parse_strict(text).expect_err(text);
            let plain = serde_json::from_str::<Value>(text).expect_err(text);
            assert!(matches!(err, ParseError::Malformed(_)), "{text}");
            assert_eq!(err.to_string(), plain.to_string());
            assert!(err.to_violation().message.starts_with("malformed JSON: "));
        }
        assert!(matches!(
            parse_strict_slice(b"\"\xff\""),
            Err(ParseError::Malformed(_))
        ));
    }

    #[test]
    fn a_byte_order_mark_is_named() {
        let e = parse_strict("\u{feff}{}").unwrap_err();
        assert!(matches!(e, ParseError::ByteOrderMark));
        assert_eq!(
            e.to_violation().message,
            "malformed JSON: the document starts with a byte order mark (U+FEFF), which JSON \
             does not allow: save it as UTF-8 without a BOM"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(matches!(parse_strict(&deep), Err(ParseError::Malformed(_))));
    }
}
