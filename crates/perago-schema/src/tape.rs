//! A document read once, from its bytes, into a flat tape the interpreter walks: one token per
//! value (and per key), containers knowing where they end, strings pointing into the input
//! (or, when they had escapes, into one side buffer). No `Value` tree is built, nothing is
//! allocated per value, and the buffers are kept from one document to the next, so a stream
//! of documents runs in the memory of its largest one.
//!
//! serde_json does the lexing, so numbers, escapes, the nesting limit and every error are
//! exactly the strict parser's; a repeated key stops the read. The reader only says *that*
//! the text is not strict JSON: [`crate::json::parse_strict_slice`] says why, on that cold
//! path, so the violation is the strict parser's to the letter.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// One token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tok {
    Null,
    Bool(bool),
    /// A non-negative integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// Any other number (a fraction, an exponent, or an integer beyond 64 bits).
    F64(f64),
    /// A string (or, right after an object's token and its values, a key).
    Str(Span),
    /// An array: its item count and the index just past its last token.
    Array {
        len: u32,
        end: u32,
    },
    /// An object: its member count and the index just past its last token; each member is a
    /// key token followed by the value's tokens.
    Object {
        len: u32,
        end: u32,
    },
}

/// Where a string's text is: in the input, or in the side buffer (it had escapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    len: u32,
    owned: bool,
}

/// Objects with more keys than this check repeats with a hash set instead of a scan.
const SCAN_KEYS: usize = 16;

/// The tape of one document, and the buffers kept for the next.
#[derive(Debug, Default)]
pub(crate) struct Tape {
    pub(crate) toks: Vec<Tok>,
    owned: String,
    /// The keys of the objects being read (a stack: each object's keys follow its parent's).
    keys: Vec<Span>,
}

/// Why a text could not be put on the tape: it is not strict JSON, or too large to index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TapeError {
    NotStrictJson,
    TooLarge,
}

impl Tape {
    /// Reads `text` (already known to be UTF-8); the tape is valid until the next read.
    pub(crate) fn read(&mut self, text: &str) -> Result<(), TapeError> {
        if text.len() >= u32::MAX as usize {
            return Err(TapeError::TooLarge);
        }
        self.clear();
        let mut de = serde_json::Deserializer::from_str(text);
        let mut builder = Builder {
            tape: self,
            input: text,
        };
        let read = builder.value(&mut de).and_then(|()| de.end());
        read.map_err(|_| TapeError::NotStrictJson)
    }

    /// Reads a value that is already parsed (its strings are copied to the side buffer).
    pub(crate) fn read_value(&mut self, value: &serde_json::Value) -> Result<(), TapeError> {
        self.clear();
        let mut builder = Builder {
            tape: self,
            input: "",
        };
        builder
            .value(value)
            .map_err(|_: serde_json::Error| TapeError::NotStrictJson)
    }

    fn clear(&mut self) {
        self.toks.clear();
        self.owned.clear();
        self.keys.clear();
    }

    /// The text of a string token, given the input the tape was read from.
    #[inline]
    pub(crate) fn text<'a>(&'a self, input: &'a str, span: Span) -> &'a str {
        let (s, e) = (span.start as usize, (span.start + span.len) as usize);
        if span.owned {
            &self.owned[s..e]
        } else {
            &input[s..e]
        }
    }
}

struct Builder<'t, 'i> {
    tape: &'t mut Tape,
    /// The text being read: strings without escapes are spans of it.
    input: &'i str,
}

impl Builder<'_, '_> {
    fn value<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(ValueVisitor(self))
    }

    /// A span for `s`: its place in the input when it is borrowed from it, else a copy.
    fn span(&mut self, s: &str) -> Span {
        let at = (s.as_ptr() as usize).wrapping_sub(self.input.as_ptr() as usize);
        if !self.input.is_empty() && at <= self.input.len() && s.len() <= self.input.len() - at {
            return Span {
                start: at as u32,
                len: s.len() as u32,
                owned: false,
            };
        }
        let start = self.tape.owned.len() as u32;
        self.tape.owned.push_str(s);
        Span {
            start,
            len: s.len() as u32,
            owned: true,
        }
    }

    fn key_text(&self, span: Span) -> &str {
        self.tape.text(self.input, span)
    }
}

struct ValueVisitor<'b, 't, 'i>(&'b mut Builder<'t, 'i>);

impl<'de> Visitor<'de> for ValueVisitor<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.tape.toks.push(Tok::Null);
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.0.tape.toks.push(Tok::Bool(v));
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.0.tape.toks.push(Tok::U64(v));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.0.tape.toks.push(if v >= 0 {
            Tok::U64(v as u64)
        } else {
            Tok::I64(v)
        });
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.0.tape.toks.push(Tok::F64(v));
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        let span = self.0.span(v);
        self.0.tape.toks.push(Tok::Str(span));
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let b = self.0;
        let at = b.tape.toks.len();
        b.tape.toks.push(Tok::Array { len: 0, end: 0 });
        let mut len: u32 = 0;
        while seq.next_element_seed(Seed(&mut *b))?.is_some() {
            len += 1;
        }
        let end = b.tape.toks.len() as u32;
        b.tape.toks[at] = Tok::Array { len, end };
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.0;
        let at = b.tape.toks.len();
        b.tape.toks.push(Tok::Object { len: 0, end: 0 });
        let first_key = b.tape.keys.len();
        // Past SCAN_KEYS keys, a set (foldhash: no SipHash on this path) finds repeats.
        let mut large: Option<HashSet<String, foldhash::fast::RandomState>> = None;
        let mut len: u32 = 0;
        while let Some(span) = map.next_key_seed(KeySeed(&mut *b))? {
            let repeated = match &mut large {
                Some(set) => !set.insert(b.key_text(span).to_owned()),
                None => {
                    let key = b.key_text(span);
                    let earlier = &b.tape.keys[first_key..];
                    let repeated = earlier
                        .iter()
                        .any(|k| k.len == span.len && b.key_text(*k) == key);
                    if !repeated && earlier.len() >= SCAN_KEYS {
                        let mut set: HashSet<String, foldhash::fast::RandomState> =
                            HashSet::with_capacity_and_hasher(64, Default::default());
                        for k in earlier {
                            set.insert(b.key_text(*k).to_owned());
                        }
                        set.insert(key.to_owned());
                        large = Some(set);
                    }
                    repeated
                }
            };
            if repeated {
                return Err(de::Error::custom("repeated key"));
            }
            if large.is_none() {
                b.tape.keys.push(span);
            }
            b.tape.toks.push(Tok::Str(span));
            map.next_value_seed(Seed(&mut *b))?;
            len += 1;
        }
        b.tape.keys.truncate(first_key);
        let end = b.tape.toks.len() as u32;
        b.tape.toks[at] = Tok::Object { len, end };
        Ok(())
    }
}

struct Seed<'b, 't, 'i>(&'b mut Builder<'t, 'i>);

impl<'de> DeserializeSeed<'de> for Seed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.value(d)
    }
}

/// Reads a key into a span.
struct KeySeed<'b, 't, 'i>(&'b mut Builder<'t, 'i>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_, '_> {
    type Value = Span;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Span, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_, '_, '_> {
    type Value = Span;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Span, E> {
        Ok(self.0.span(v))
    }
}
