//! A document read once, from its bytes, into a flat tape the interpreter walks: one token per
//! value (and per key), containers knowing where they end, strings pointing into the input
//! (or, when they had escapes, into one side buffer). No `Value` tree is built, nothing is
//! allocated per value, and the buffers are kept from one document to the next, so a stream
//! of documents runs in the memory of its largest one.
//!
//! The reader lexes the bytes itself (JSON's grammar, strings scanned eight bytes at a
//! time) and accepts exactly what serde_json's `from_str` accepts, with the same values:
//! integers as serde_json types them (`-0` and integers beyond 64 bits are floats), a float
//! computed directly only where every correctly rounded parser agrees with serde_json's
//! (Clinger's fast path) and by serde_json itself otherwise, lone surrogates and control
//! characters refused, and the same nesting limit (no 128th container inside another, so a
//! hostile document cannot exhaust the stack). A repeated key stops the read. The reader only
//! says *that* the text is not strict JSON: [`crate::json::parse_strict_slice`] says why, on
//! that cold path, so the violation is the strict parser's to the letter.

use serde_json::Value;
use std::collections::HashSet;

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
    /// 1 when the text is in the side buffer, 0 when in the input: a whole word rather than a
    /// `bool`, so that a span has no padding and moves in registers.
    owned: u32,
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
    /// The containers being read, innermost last.
    open: Vec<Open>,
    /// The keys of the objects being read that have more than [`SCAN_KEYS`], as sets.
    sets: Vec<HashSet<String, foldhash::fast::RandomState>>,
}

/// A container being read.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Its token.
    at: u32,
    /// Its items (members) so far.
    len: u32,
    /// Where its keys start in `Tape::keys`.
    first_key: u32,
    object: bool,
    /// Its keys are in the last of `Tape::sets`, not in `Tape::keys`.
    large: bool,
}

/// Containers may nest this deep and no deeper: serde_json's recursion limit (it refuses the
/// 128th container inside another), which `crate::json` parses with.
const MAX_DEPTH: u32 = 127;

/// Why a text could not be put on the tape: it is not strict JSON, or too large to index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TapeError {
    NotStrictJson,
    TooLarge,
}

/// The text is not strict JSON (the strict parser says why, on the cold path).
#[derive(Debug)]
struct NotJson;

type Lexed<T> = Result<T, NotJson>;

impl Tape {
    /// Reads `text` (already known to be UTF-8); the tape is valid until the next read.
    pub(crate) fn read(&mut self, text: &str) -> Result<(), TapeError> {
        if text.len() >= u32::MAX as usize {
            return Err(TapeError::TooLarge);
        }
        self.clear();
        let mut open = std::mem::take(&mut self.open);
        open.clear();
        // Control characters may only be whitespace between tokens, and most documents have
        // none: then a string ends at its first quote or backslash, which SIMD finds.
        let read = if has_control(text.as_bytes()) {
            lex::<false>(self, text, &mut open)
        } else {
            lex::<true>(self, text, &mut open)
        };
        self.open = open;
        read.map_err(|NotJson| TapeError::NotStrictJson)
    }

    /// Reads a value that is already parsed (its strings are copied to the side buffer).
    pub(crate) fn read_value(&mut self, value: &Value) -> Result<(), TapeError> {
        self.clear();
        self.push_value(value)
    }

    fn push_value(&mut self, value: &Value) -> Result<(), TapeError> {
        let tok = match value {
            Value::Null => Tok::Null,
            Value::Bool(b) => Tok::Bool(*b),
            // As serde hands a number over: a `u64`, else an `i64` (negative), else an `f64`.
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Tok::U64(u),
                (None, Some(i), _) => Tok::I64(i),
                (None, None, Some(f)) => Tok::F64(f),
                (None, None, None) => return Err(TapeError::NotStrictJson),
            },
            Value::String(s) => Tok::Str(self.own(s)?),
            Value::Array(items) => {
                let at = self.open(Tok::Array { len: 0, end: 0 });
                for item in items {
                    self.push_value(item)?;
                }
                return self.close(at, items.len());
            }
            Value::Object(members) => {
                let at = self.open(Tok::Object { len: 0, end: 0 });
                for (key, member) in members {
                    let span = self.own(key)?;
                    self.toks.push(Tok::Str(span));
                    self.push_value(member)?;
                }
                return self.close(at, members.len());
            }
        };
        self.toks.push(tok);
        Ok(())
    }

    /// A copy of `s` in the side buffer.
    fn own(&mut self, s: &str) -> Result<Span, TapeError> {
        let start = u32::try_from(self.owned.len()).map_err(|_| TapeError::TooLarge)?;
        let len = u32::try_from(s.len()).map_err(|_| TapeError::TooLarge)?;
        self.owned.push_str(s);
        Ok(Span {
            start,
            len,
            owned: 1,
        })
    }

    /// Pushes a container's token, to be completed by [`close`](Self::close).
    fn open(&mut self, tok: Tok) -> usize {
        self.toks.push(tok);
        self.toks.len() - 1
    }

    /// Completes the container opened at `at` with its item count and end.
    fn close(&mut self, at: usize, count: usize) -> Result<(), TapeError> {
        let len = u32::try_from(count).map_err(|_| TapeError::TooLarge)?;
        let end = u32::try_from(self.toks.len()).map_err(|_| TapeError::TooLarge)?;
        self.toks[at] = match self.toks[at] {
            Tok::Array { .. } => Tok::Array { len, end },
            _ => Tok::Object { len, end },
        };
        Ok(())
    }

    fn clear(&mut self) {
        self.toks.clear();
        self.owned.clear();
        self.keys.clear();
        self.sets.clear();
    }

    /// The text of a string token, given the input the tape was read from.
    #[inline(always)]
    pub(crate) fn text<'a>(&'a self, input: &'a str, span: Span) -> &'a str {
        let (s, e) = (span.start as usize, (span.start + span.len) as usize);
        if span.owned != 0 {
            &self.owned[s..e]
        } else {
            &input[s..e]
        }
    }
}

/// Reads one document: one value, then nothing but whitespace. Containers are read without
/// recursion: the open ones are a stack (`open`, bounded by [`MAX_DEPTH`]), each value is read
/// in one loop, and after it the innermost open container says what may follow. The loop's
/// state is local, so it stays in registers; what is rare (escapes, long or distant numbers,
/// objects of many keys) is read out of line. `PLAIN`: the text has no control character.
fn lex<const PLAIN: bool>(tape: &mut Tape, text: &str, open: &mut Vec<Open>) -> Lexed<()> {
    let bytes = text.as_bytes();
    let mut at = 0;
    'value: loop {
        at = skip_whitespace(bytes, at);
        match bytes.get(at) {
            Some(b'"') => {
                let start = at + 1;
                let stop = string_end::<PLAIN>(bytes, start)?;
                if bytes[stop] == b'"' {
                    // Built where it is stored: a span that went through memory field by
                    // field and came back whole would stall on store forwarding.
                    tape.toks.push(Tok::Str(Span {
                        start: start as u32,
                        len: (stop - start) as u32,
                        owned: 0,
                    }));
                    at = stop + 1;
                } else {
                    let (span, next) = escaped(bytes, text, &mut tape.owned, start, stop)?;
                    tape.toks.push(Tok::Str(span));
                    at = next;
                }
            }
            Some(&bracket @ (b'{' | b'[')) => {
                if open.len() >= MAX_DEPTH as usize {
                    return Err(NotJson);
                }
                let object = bracket == b'{';
                open.push(Open {
                    at: tape.toks.len() as u32,
                    len: 0,
                    first_key: tape.keys.len() as u32,
                    object,
                    large: false,
                });
                tape.toks.push(if object {
                    Tok::Object { len: 0, end: 0 }
                } else {
                    Tok::Array { len: 0, end: 0 }
                });
                at = skip_whitespace(bytes, at + 1);
                let close = if object { b'}' } else { b']' };
                if bytes.get(at) != Some(&close) {
                    if object {
                        at = key::<PLAIN>(tape, bytes, text, at, open)?;
                    }
                    continue 'value;
                }
                at += 1;
                leave(tape, open);
            }
            Some(b'-' | b'0'..=b'9') => {
                at = number(bytes, text, at, &mut tape.toks)?;
            }
            Some(b't') if bytes[at..].starts_with(b"true") => {
                tape.toks.push(Tok::Bool(true));
                at += 4;
            }
            Some(b'f') if bytes[at..].starts_with(b"false") => {
                tape.toks.push(Tok::Bool(false));
                at += 5;
            }
            Some(b'n') if bytes[at..].starts_with(b"null") => {
                tape.toks.push(Tok::Null);
                at += 4;
            }
            _ => return Err(NotJson),
        }
        // After a value: the next item of the innermost container, or its end (and then the
        // next item or the end of the container around it).
        loop {
            let Some(top) = open.last_mut() else {
                return if skip_whitespace(bytes, at) == bytes.len() {
                    Ok(())
                } else {
                    Err(NotJson)
                };
            };
            top.len += 1;
            let object = top.object;
            at = skip_whitespace(bytes, at);
            match bytes.get(at) {
                Some(b',') if object => {
                    at = key::<PLAIN>(tape, bytes, text, at + 1, open)?;
                    continue 'value;
                }
                Some(b',') => {
                    at += 1;
                    continue 'value;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return Err(NotJson),
            }
            at += 1;
            leave(tape, open);
        }
    }
}

/// Closes the innermost container, whose closing bracket was read.
#[inline(always)]
fn leave(tape: &mut Tape, open: &mut Vec<Open>) {
    let Some(done) = open.pop() else { return };
    let end = tape.toks.len() as u32;
    let len = done.len;
    tape.toks[done.at as usize] = if done.object {
        tape.keys.truncate(done.first_key as usize);
        if done.large {
            tape.sets.pop();
        }
        Tok::Object { len, end }
    } else {
        Tok::Array { len, end }
    };
}

/// A member's key (from `at`, whitespace first) and its colon, for the innermost open
/// container, an object: a key it already has is refused. Returns the index past the colon.
#[inline(always)]
fn key<const PLAIN: bool>(
    tape: &mut Tape,
    bytes: &[u8],
    text: &str,
    at: usize,
    open: &mut [Open],
) -> Lexed<usize> {
    let at = skip_whitespace(bytes, at);
    if bytes.get(at) != Some(&b'"') {
        return Err(NotJson);
    }
    let start = at + 1;
    let stop = string_end::<PLAIN>(bytes, start)?;
    let (span_start, span_len, owned, at) = if bytes[stop] == b'"' {
        (start as u32, (stop - start) as u32, 0, stop + 1)
    } else {
        let (span, next) = escaped(bytes, text, &mut tape.owned, start, stop)?;
        (span.start, span.len, span.owned, next)
    };
    let span = Span {
        start: span_start,
        len: span_len,
        owned,
    };
    let Some(object) = open.last_mut() else {
        return Err(NotJson);
    };
    if object.large {
        repeated_in_set(tape, text, span)?;
    } else {
        let earlier = tape.keys.get(object.first_key as usize..).unwrap_or(&[]);
        if !earlier.is_empty() && repeated(bytes, &tape.owned, earlier, span) {
            return Err(NotJson);
        }
        if earlier.len() >= SCAN_KEYS {
            to_set(tape, text, object, span);
        } else {
            tape.keys.push(span);
        }
    }
    tape.toks.push(Tok::Str(span));
    let at = skip_whitespace(bytes, at);
    if bytes.get(at) != Some(&b':') {
        return Err(NotJson);
    }
    Ok(at + 1)
}

/// True when one of `earlier` is the key `span`: lengths compared first, text only when they
/// are equal.
#[inline(always)]
fn repeated(bytes: &[u8], owned: &str, earlier: &[Span], span: Span) -> bool {
    let key = span_bytes(bytes, owned, span);
    for k in earlier {
        if k.len == span.len && span_bytes(bytes, owned, *k) == key {
            return true;
        }
    }
    false
}

/// The bytes of a string token: in the input, or in the side buffer.
#[inline(always)]
fn span_bytes<'a>(bytes: &'a [u8], owned: &'a str, span: Span) -> &'a [u8] {
    let (s, e) = (span.start as usize, span.start as usize + span.len as usize);
    let from = if span.owned != 0 {
        owned.as_bytes()
    } else {
        bytes
    };
    from.get(s..e).unwrap_or(&[])
}

/// Past [`SCAN_KEYS`] keys, the object's keys go into a set (foldhash: no SipHash on this
/// path), which finds repeats from then on.
#[cold]
#[inline(never)]
fn to_set(tape: &mut Tape, text: &str, object: &mut Open, span: Span) {
    let mut set: HashSet<String, foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(64, Default::default());
    for k in tape.keys[object.first_key as usize..].iter().chain([&span]) {
        set.insert(tape.text(text, *k).to_owned());
    }
    tape.sets.push(set);
    object.large = true;
}

/// Refuses a key of a large object that its set already holds; adds it.
#[cold]
#[inline(never)]
fn repeated_in_set(tape: &mut Tape, text: &str, span: Span) -> Lexed<()> {
    let key = tape.text(text, span).to_owned();
    match tape.sets.last_mut() {
        Some(set) if !set.contains(&key) => {
            set.insert(key);
            Ok(())
        }
        _ => Err(NotJson),
    }
}

/// The index of the first byte from `at` that is not whitespace.
#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The rest of a string from its first escape (or control character) at `stop`, decoded into
/// the side buffer.
#[cold]
#[inline(never)]
fn escaped(
    bytes: &[u8],
    text: &str,
    owned: &mut String,
    start: usize,
    mut stop: usize,
) -> Lexed<(Span, usize)> {
    let owned_start = owned.len();
    let mut from = start;
    loop {
        match bytes[stop] {
            b'"' => {
                owned.push_str(&text[from..stop]);
                let span = Span {
                    start: owned_start as u32,
                    len: (owned.len() - owned_start) as u32,
                    owned: 1,
                };
                return Ok((span, stop + 1));
            }
            // A control character, which a JSON string must escape.
            b if b < 0x20 => return Err(NotJson),
            _ => {}
        }
        owned.push_str(&text[from..stop]);
        let decoded = match bytes.get(stop + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let (c, next) = unicode_escape(bytes, stop + 2)?;
                owned.push(c);
                from = next;
                stop = special(bytes, next)?;
                continue;
            }
            _ => return Err(NotJson),
        };
        owned.push(decoded);
        from = stop + 2;
        stop = special(bytes, from)?;
    }
}

/// The character of the `\u` escape whose hex digits start at `at`, and the index past it: a
/// surrogate pair is one character; a lone surrogate is refused, as serde_json refuses it in
/// a string.
fn unicode_escape(bytes: &[u8], at: usize) -> Lexed<(char, usize)> {
    let first = hex4(bytes, at)?;
    if (0xDC00..=0xDFFF).contains(&first) {
        return Err(NotJson);
    }
    if !(0xD800..=0xDBFF).contains(&first) {
        return char::from_u32(first).map(|c| (c, at + 4)).ok_or(NotJson);
    }
    if bytes.get(at + 4..at + 6) != Some(b"\\u") {
        return Err(NotJson);
    }
    let second = hex4(bytes, at + 6)?;
    if !(0xDC00..=0xDFFF).contains(&second) {
        return Err(NotJson);
    }
    let c = 0x1_0000 + ((first - 0xD800) << 10) + (second - 0xDC00);
    char::from_u32(c).map(|c| (c, at + 10)).ok_or(NotJson)
}

fn hex4(bytes: &[u8], at: usize) -> Lexed<u32> {
    let digits = bytes.get(at..at + 4).ok_or(NotJson)?;
    digits.iter().try_fold(0u32, |n, &d| {
        let v = (d as char).to_digit(16).ok_or(NotJson)?;
        Ok(n << 4 | v)
    })
}

/// Where the string from `at` stops: its closing quote, or the first escape (or control
/// character). In a text without control characters (`PLAIN`), the first quote or backslash:
/// two words at a time, then SIMD (memchr) for a long string.
#[inline(always)]
fn string_end<const PLAIN: bool>(bytes: &[u8], at: usize) -> Lexed<usize> {
    if !PLAIN {
        return special(bytes, at);
    }
    let mut from = at;
    for _ in 0..2 {
        let Some(chunk) = bytes.get(from..from + 8) else {
            break;
        };
        let found = quote_or_backslash(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if found != 0 {
            return Ok(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    memchr::memchr2(b'"', b'\\', &bytes[from..])
        .map(|i| from + i)
        .ok_or(NotJson)
}

/// True when `bytes` has a control character (below 0x20), 32 bytes at a time.
fn has_control(bytes: &[u8]) -> bool {
    let control = |chunk: &[u8]| chunk.iter().fold(false, |found, &b| found | (b < 0x20));
    let mut chunks = bytes.chunks_exact(32);
    chunks.any(control) || control(chunks.remainder())
}

/// The index of the first `"`, `\` or control character at or after `at`, eight bytes at a
/// time; none is an unterminated string.
#[inline(always)]
fn special(bytes: &[u8], mut at: usize) -> Lexed<usize> {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let found = special_bytes(word);
        if found != 0 {
            return Ok(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
        .ok_or(NotJson)
}

/// The number at `start`, typed as serde_json types it, onto `toks` (pushed here: a token
/// returned through memory would stall on store forwarding); the index past it.
fn number(bytes: &[u8], text: &str, start: usize, toks: &mut Vec<Tok>) -> Lexed<usize> {
    let negative = bytes[start] == b'-';
    let mut i = start + usize::from(negative);
    let digits_start = i;
    match bytes.get(i) {
        // One leading zero only: `01` ends at the `0` and the `1` is then out of place.
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = skip_digits(bytes, i),
        _ => return Err(NotJson),
    }
    let int_digits = i - digits_start;
    let mut fraction_digits = 0;
    if bytes.get(i) == Some(&b'.') {
        let end = skip_digits(bytes, i + 1);
        fraction_digits = end - (i + 1);
        if fraction_digits == 0 {
            return Err(NotJson);
        }
        i = end;
    }
    let mut exponent: Option<(bool, usize, usize)> = None;
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        let exponent_negative = bytes.get(i) == Some(&b'-');
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        let end = skip_digits(bytes, i);
        if end == i {
            return Err(NotJson);
        }
        exponent = Some((exponent_negative, i, end));
        i = end;
    }
    let end = i;
    let text = &text[start..end];
    if fraction_digits == 0 && exponent.is_none() {
        if int_digits > 19 {
            return serde_number(text, toks).map(|()| end);
        }
        let significand = digits_value(&bytes[digits_start..i]);
        if !negative {
            toks.push(Tok::U64(significand));
            return Ok(end);
        }
        // serde_json's reading: `-0`, and what is below `i64::MIN`, are floats.
        let value = (significand as i64).wrapping_neg();
        let tok = if value >= 0 {
            Tok::F64(-(significand as f64))
        } else {
            Tok::I64(value)
        };
        toks.push(tok);
        return Ok(end);
    }
    // Clinger's fast path: an exact significand below 2^53 scaled by an exact power of ten
    // is one correctly rounded operation, which every correct parser (and serde_json's
    // own, with or without `float_roundtrip`) agrees on.
    if int_digits + fraction_digits <= 19 {
        let int_end = digits_start + int_digits;
        let significand = digits_value(&bytes[digits_start..int_end]);
        let significand = bytes[int_end + 1..int_end + 1 + fraction_digits]
            .iter()
            .fold(significand, |n, d| n * 10 + u64::from(d - b'0'));
        let mut power = -(fraction_digits as i64);
        if let Some((exponent_negative, from, to)) = exponent {
            if to - from > 4 {
                return serde_number(text, toks).map(|()| end);
            }
            let e = digits_value(&bytes[from..to]) as i64;
            power += if exponent_negative { -e } else { e };
        }
        if significand < 1 << 53 && (-22..=22).contains(&power) {
            let scale = POWERS_OF_TEN[power.unsigned_abs() as usize];
            let magnitude = if power >= 0 {
                significand as f64 * scale
            } else {
                significand as f64 / scale
            };
            let tok = Tok::F64(if negative { -magnitude } else { magnitude });
            toks.push(tok);
            return Ok(end);
        }
    }
    serde_number(text, toks).map(|()| end)
}

/// 10^0 to 10^22: every one exact in an `f64`.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A number the fast paths leave (long, or far from 1) read by serde_json itself, so that
/// its value is serde_json's to the last bit, as is its refusal (`1e400` is out of range).
#[cold]
fn serde_number(text: &str, toks: &mut Vec<Tok>) -> Lexed<()> {
    struct Number;
    impl serde::de::Visitor<'_> for Number {
        type Value = Tok;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_u64<E>(self, v: u64) -> Result<Tok, E> {
            Ok(Tok::U64(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Tok, E> {
            Ok(if v >= 0 {
                Tok::U64(v as u64)
            } else {
                Tok::I64(v)
            })
        }
        fn visit_f64<E>(self, v: f64) -> Result<Tok, E> {
            Ok(Tok::F64(v))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let tok = serde::Deserializer::deserialize_any(&mut de, Number).map_err(|_| NotJson)?;
    de.end().map_err(|_| NotJson)?;
    toks.push(tok);
    Ok(())
}

/// The index past the ASCII digits from `at`.
#[inline]
fn skip_digits(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b'0'..=b'9') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The value of at most 19 ASCII digits (which cannot overflow a `u64`).
#[inline]
fn digits_value(digits: &[u8]) -> u64 {
    digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0'))
}

/// A byte of `word` (eight bytes, the first lowest) that is `"` or `\`, as its high bit set;
/// only the lowest is to be read (see [`special_bytes`]).
#[inline(always)]
fn quote_or_backslash(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')))
}

/// A byte of `word` (eight bytes, the first lowest) that is `"`, `\` or below 0x20, as its
/// high bit set. Bits above the lowest found may be set falsely (a borrow carries upwards), so
/// only the lowest is to be read.
#[inline]
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// A token with its text, a float by its bits (so `-0.0` differs from `0.0`).
    #[derive(Debug, PartialEq)]
    enum Seen {
        Null,
        Bool(bool),
        U64(u64),
        I64(i64),
        F64(u64),
        Str(String),
        Array(u32, u32),
        Object(u32, u32),
    }

    fn seen(tape: &Tape, input: &str) -> Vec<Seen> {
        tape.toks
            .iter()
            .map(|t| match *t {
                Tok::Null => Seen::Null,
                Tok::Bool(b) => Seen::Bool(b),
                Tok::U64(u) => Seen::U64(u),
                Tok::I64(i) => Seen::I64(i),
                Tok::F64(f) => Seen::F64(f.to_bits()),
                Tok::Str(span) => Seen::Str(tape.text(input, span).to_owned()),
                Tok::Array { len, end } => Seen::Array(len, end),
                Tok::Object { len, end } => Seen::Object(len, end),
            })
            .collect()
    }

    /// The tape reads `text` exactly as the strict parser does: it refuses what the parser
    /// refuses, and what it accepts gives the tokens of the parser's value.
    fn agrees(tape: &mut Tape, text: &str) {
        let read = tape.read(text);
        let got = read.map(|()| seen(tape, text));
        let expected = json::parse_strict(text).map(|value| {
            let mut reference = Tape::default();
            reference.read_value(&value).expect("a parsed value");
            seen(&reference, "")
        });
        match (got, expected) {
            (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{text:?}"),
            (Err(_), Err(_)) => {}
            (got, expected) => panic!("{text:?}: the tape {got:?}, the parser {expected:?}"),
        }
    }

    #[test]
    fn reads_what_the_strict_parser_reads() {
        let deep = |n: usize, open: &str, close: &str| open.repeat(n) + &close.repeat(n);
        let mut cases: Vec<String> = [
            "",
            " ",
            "null",
            " true ",
            "false",
            "nul",
            "nulll",
            "True",
            "[]",
            "{}",
            "[ ]",
            "{ }",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1:2}",
            "{\"a\":1 \"b\":2}",
            "\t\r\n[\n1\r,\t2 ]\n",
            "{} x",
            "[] []",
            "\u{feff}{}",
            "\"\"",
            "\"abc\"",
            "\"a\\\"b\"",
            "\"\\\\\"",
            "\"\\/\"",
            "\"\\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\u0000\"",
            "\"\\u00E9\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800x\"",
            "\"\\ud800\\n\"",
            "\"\\ud800\\u0041\"",
            "\"\\ud800\\ud800\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"\\x\"",
            "\"\\",
            "\"abc",
            "\"tab\there\"",
            "\"nl\nhere\"",
            "\"\u{1f}\"",
            "\"\u{7f}\"",
            "\"é ü 😀\"",
            "\"0123456789abcdef\\n0123456789abcdef\"",
            "\"long string with no escape at all\"",
            "0",
            "-0",
            "-",
            "+1",
            "01",
            "-01",
            "00",
            "1.",
            "1.e5",
            ".5",
            "1e",
            "1e+",
            "1E-2",
            "1e5",
            "1.5",
            "-1.5e-3",
            "0.1",
            "0.30000000000000004",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "123456789012345678",
            "1234567890123456789",
            "12345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "-18446744073709551616",
            "9007199254740993",
            "9007199254740993.0",
            "9007199254740992.5",
            "1e400",
            "-1e400",
            "1e-400",
            "0e999999999999",
            "1e99999999999",
            "1.7976931348623157e308",
            "4.9e-324",
            "2.2250738585072014e-308",
            "123.456e-7",
            "0.000000000000000000001",
            "1.00000000000000000000000001",
            "100000000000000000000000000000000e-10",
            "NaN",
            "Infinity",
            "-Infinity",
            "[1.5,-0,0,-0.0,2e0]",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"\\u0061\":2}",
            "{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}",
            "{\"x\":[{\"b\":1,\"b\":1}]}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Strings past two words, plain and not, ending, escaping and broken past them.
        let long = "a long string, forty bytes or so, then";
        for rest in [
            "\\u00e9 and more\"",
            "\u{1} and more\"",
            "\t more\"",
            "\\\" more\"",
            "unclosed",
        ] {
            cases.push(format!("\"{long}{rest}"));
            cases.push(format!("[\"short\",\t\"{long}{rest}]"));
        }
        let many: String = (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect();
        cases.push(format!("{{{many}\"k3\": 0}}"));
        cases.push(format!("{{{many}\"last\": {{\"k3\": \"\\u00e9\"}}}}"));
        cases.push(format!("{{{many}\"k\\u0033\": 0}}"));
        for n in [1, 126, 127, 128, 129, 10_000] {
            cases.push(deep(n, "[", "]"));
            cases.push(deep(n, "{\"a\":", "}"));
            cases.push(deep(n, "[{\"a\":", "}]"));
            cases.push("[".repeat(n));
        }
        let mut tape = Tape::default();
        for text in &cases {
            agrees(&mut tape, text);
        }
    }

    /// Mutations of valid documents (bytes inserted, removed and changed, from JSON's own
    /// punctuation and escapes): the tape accepts and refuses exactly what the parser does.
    #[test]
    fn mutated_documents_are_read_as_the_strict_parser_reads_them() {
        let seeds = [
            r#"{"workspace":{"repository":"song-962299","branch":"fix/null-rows","ref_type":"commit"},"params":{"dry_run":false,"threshold":0.9,"tags":["nightly","apac"],"n":-12}}"#,
            r#"[{"a\u00e9\n":"x\"y","b":[1e3,-0.5,12345678901234567890,null,true]},{"c":{}}]"#,
            r#"{"s":"\ud83d\ude00 \\ \/","e":1E-7,"z":-0,"k":[[],[[]],{"":""}]}"#,
        ];
        let alphabet: &[&str] = &[
            "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "0", "1", "-", "+", ".", "e", "E",
            "u", "d800", "\\u", "\\ud800", "\\udc00", "t", "n", "f", "\u{1}", "é", "a",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut tape = Tape::default();
        for _ in 0..20_000 {
            let mut text = seeds[next(seeds.len())].to_owned();
            for _ in 0..1 + next(3) {
                let boundaries: Vec<usize> = (0..=text.len())
                    .filter(|i| text.is_char_boundary(*i))
                    .collect();
                let at = boundaries[next(boundaries.len())];
                let end = boundaries.iter().copied().find(|i| *i > at).unwrap_or(at);
                match next(3) {
                    0 => text.insert_str(at, alphabet[next(alphabet.len())]),
                    1 => text.replace_range(at..end, ""),
                    _ => text.replace_range(at..end, alphabet[next(alphabet.len())]),
                }
            }
            agrees(&mut tape, &text);
        }
    }

    /// Floats of every length and scale have serde_json's value to the bit, on the fast path
    /// and off it.
    #[test]
    fn floats_are_serde_jsons_to_the_bit() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut tape = Tape::default();
        for _ in 0..50_000 {
            let digits: String = (0..1 + next(24))
                .map(|_| char::from(b'0' + next(10) as u8))
                .collect();
            let digits = digits.trim_start_matches('0');
            let digits = if digits.is_empty() { "0" } else { digits };
            let split = next(digits.len() as u64 + 1) as usize;
            let (int, fraction) = digits.split_at(split);
            let int = if int.is_empty() { "0" } else { int };
            let mut text = String::from(if next(2) == 0 { "-" } else { "" });
            text.push_str(int);
            if !fraction.is_empty() {
                text.push('.');
                text.push_str(fraction);
            }
            if next(2) == 0 {
                text.push_str(&format!("e{}", next(80) as i64 - 40));
            }
            agrees(&mut tape, &text);
        }
    }

    #[test]
    fn the_special_bytes_of_a_word_are_found_first_to_last() {
        for place in 0..8 {
            for special in [b'"', b'\\', 0, 0x1f] {
                let mut bytes = [b'a'; 8];
                bytes[place] = special;
                if place < 7 {
                    bytes[7] = b'"';
                }
                let found = special_bytes(u64::from_le_bytes(bytes));
                assert_eq!(found.trailing_zeros() / 8, place as u32);
            }
        }
        for ordinary in [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xa0, 0xff] {
            assert_eq!(special_bytes(u64::from_le_bytes([ordinary; 8])), 0);
        }
    }
}
