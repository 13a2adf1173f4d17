//! The keyword checks, shared by generated validators and the run-time interpreter so both
//! report the same violation, with the same message, for the same value.

pub use crate::format::Format;
use crate::path::Path;
use crate::violation::{Code, Violation};
pub use perago_regex::PatternError;
use serde_json::{Map, Value};
use std::fmt::Write;

/// Where checks put what they find.
pub type Out = Vec<Violation>;

/// Numeric bounds of an `integer` or `number` schema.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    /// `minimum`
    pub minimum: Option<f64>,
    /// `maximum`
    pub maximum: Option<f64>,
    /// `exclusiveMinimum`
    pub exclusive_minimum: Option<f64>,
    /// `exclusiveMaximum`
    pub exclusive_maximum: Option<f64>,
}

impl Bounds {
    /// No bounds at all.
    pub const NONE: Bounds = Bounds {
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
    };

    /// True when `x` is within every bound.
    #[inline]
    pub fn contains(&self, x: f64) -> bool {
        self.minimum.is_none_or(|m| x >= m)
            && self.maximum.is_none_or(|m| x <= m)
            && self.exclusive_minimum.is_none_or(|m| x > m)
            && self.exclusive_maximum.is_none_or(|m| x < m)
    }

    fn check(&self, x: f64, path: &Path<'_>, out: &mut Out) -> bool {
        let before = out.len();
        if let Some(m) = self.minimum.filter(|m| x < *m) {
            push(out, path, Code::Minimum, format!("must be >= {}", num(m)));
        }
        if let Some(m) = self.maximum.filter(|m| x > *m) {
            push(out, path, Code::Maximum, format!("must be <= {}", num(m)));
        }
        if let Some(m) = self.exclusive_minimum.filter(|m| x <= *m) {
            push(
                out,
                path,
                Code::ExclusiveMinimum,
                format!("must be > {}", num(m)),
            );
        }
        if let Some(m) = self.exclusive_maximum.filter(|m| x >= *m) {
            push(
                out,
                path,
                Code::ExclusiveMaximum,
                format!("must be < {}", num(m)),
            );
        }
        out.len() == before
    }
}

/// Renders a bound the way it was written: `30`, not `30.0`.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Length rules of a `string` schema, in Unicode code points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lengths {
    /// `minLength`
    pub min: Option<u64>,
    /// `maxLength`
    pub max: Option<u64>,
}

impl Lengths {
    /// True when the code-point length of `s` is within bounds, counting only when needed.
    #[inline]
    pub fn contains(&self, s: &str) -> bool {
        // A code point takes 1 to 4 bytes, so the byte length often decides without counting.
        let bytes = s.len() as u64;
        let min_ok = self
            .min
            .is_none_or(|m| bytes >= m.saturating_mul(4) || char_len(s) >= m);
        let max_ok = self.max.is_none_or(|m| bytes <= m || char_len(s) <= m);
        min_ok && max_ok
    }

    #[inline]
    fn check(&self, s: &str, path: &Path<'_>, out: &mut Out) -> bool {
        self.contains(s) || self.report(s, path, out)
    }

    /// Records why `s`, which [`contains`](Self::contains) refused, is too short or too long;
    /// false.
    #[cold]
    fn report(&self, s: &str, path: &Path<'_>, out: &mut Out) -> bool {
        let n = char_len(s);
        if let Some(m) = self.min.filter(|m| n < *m) {
            push(
                out,
                path,
                Code::MinLength,
                format!("must be at least {m} {} long", chars(m)),
            );
        }
        if let Some(m) = self.max.filter(|m| n > *m) {
            push(
                out,
                path,
                Code::MaxLength,
                format!("must be at most {m} {} long", chars(m)),
            );
        }
        false
    }
}

fn chars(n: u64) -> &'static str {
    if n == 1 { "character" } else { "characters" }
}

fn char_len(s: &str) -> u64 {
    s.chars().count() as u64
}

/// A compiled ECMA-262 `pattern`, matched as an unanchored search as JSON Schema defines, in
/// time linear in the string: what needs backtracking (backreferences, lookaround but for the
/// lookaheads that open a pattern at its `^`) is refused when the pattern is compiled, as is
/// a pattern compiling to over 10 MiB.
#[derive(Debug)]
pub struct Pattern {
    source: String,
    regex: perago_regex::Matcher,
    /// The pattern as a set of code points, when it is one character class of literals and
    /// ranges (`[^ \t…]`, the non-blank rule): a search is then a plain scan, tens of times
    /// faster than the regex engine on the short strings contracts hold.
    class: Option<CharClass>,
    /// The pattern as an anchored run of classes (see [`Sequence`]), matched by one walk.
    sequence: Option<Sequence>,
}

/// One bracketed character class: `[a-z_]` or `[^…]`, ranges of code points.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CharClass {
    negated: bool,
    ranges: Vec<(char, char)>,
    /// Which ASCII characters are in the class (negation applied): one load for them.
    ascii: [bool; 128],
}

impl CharClass {
    fn new(negated: bool, ranges: Vec<(char, char)>) -> CharClass {
        let mut ascii = [false; 128];
        for (b, slot) in (0..128u8).zip(&mut ascii) {
            let c = char::from(b);
            *slot = ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != negated;
        }
        CharClass {
            negated,
            ranges,
            ascii,
        }
    }

    /// Parses `[…]` made only of literal characters and `a-b` ranges; anything with an
    /// escape, a nested class or another construct is left to the regex engine.
    fn parse(source: &str) -> Option<CharClass> {
        let body = source.strip_prefix('[')?.strip_suffix(']')?;
        let (negated, body) = match body.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let chars: Vec<char> = body.chars().collect();
        if chars.is_empty() || chars.iter().any(|c| matches!(c, '\\' | '[' | ']')) {
            return None;
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            // `-` is a literal first, last, or right after a range.
            if i + 2 < chars.len() && chars[i + 1] == '-' {
                if chars[i] > chars[i + 2] {
                    return None;
                }
                ranges.push((chars[i], chars[i + 2]));
                i += 3;
            } else {
                ranges.push((chars[i], chars[i]));
                i += 1;
            }
        }
        Some(CharClass::new(negated, ranges))
    }

    /// Parses the `regex` syntax perago's ECMA translator gives a pattern that is one class
    /// (`\S`, `\d`, `[^\s]`, …): a bracketed class of literals, `\x{HEX}` escapes and ranges
    /// of them. Anything else (a property, an anchor, a repetition) is `None`.
    fn parse_translated(regex: &str) -> Option<CharClass> {
        let body = regex.strip_prefix('[')?.strip_suffix(']')?;
        let (negated, body) = match body.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let mut chars = body.chars().peekable();
        let atom = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<char> {
            match chars.next()? {
                '\\' => {
                    if chars.next()? != 'x' || chars.next()? != '{' {
                        return None;
                    }
                    let hex: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
                }
                '[' | ']' | '-' | '^' | '&' | '~' => None,
                c => Some(c),
            }
        };
        let mut ranges = Vec::new();
        while chars.peek().is_some() {
            let lo = atom(&mut chars)?;
            let hi = if chars.peek() == Some(&'-') {
                chars.next();
                atom(&mut chars)?
            } else {
                lo
            };
            if lo > hi {
                return None;
            }
            ranges.push((lo, hi));
        }
        (!ranges.is_empty()).then(|| CharClass::new(negated, ranges))
    }

    #[inline]
    fn contains(&self, c: char) -> bool {
        let u = c as u32;
        if u < 128 {
            return self.ascii[u as usize];
        }
        self.ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != self.negated
    }
}

/// A pattern anchored at the start that is a run of characters or classes, each repeated an
/// exact number of times but the last (`^[0-9a-f]{64}$`, `^\d{4}-\d{2}-\d{2}$`, `^https://`,
/// `^[a-z][a-z0-9_]*$`): matched by one walk over the string, with no backtracking to do.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sequence {
    /// Each atom: its characters and how many times, at least and at most (`None`: any).
    atoms: Vec<(CharClass, u32, Option<u32>)>,
    /// Anchored at the end too.
    end: bool,
}

impl Sequence {
    /// Parses the `regex` syntax perago's ECMA translator gives such a pattern:
    /// `\A`, then classes, `\x{HEX}` escapes and plain characters with `{n}`, `{n,m}`, `{n,}`,
    /// `*`, `+` or `?`, then maybe `\z`. Anything else is `None`.
    fn parse_translated(regex: &str) -> Option<Sequence> {
        let mut rest = regex.strip_prefix("\\A")?;
        let mut atoms: Vec<(CharClass, u32, Option<u32>)> = Vec::new();
        let mut end = false;
        while !rest.is_empty() {
            if rest == "\\z" {
                end = true;
                break;
            }
            // An atom before this one must repeat an exact number of times.
            if atoms.last().is_some_and(|(_, min, max)| Some(*min) != *max) {
                return None;
            }
            let class = if rest.starts_with('[') {
                let close = rest.find(']')?;
                let class = CharClass::parse_translated(&rest[..=close])?;
                rest = &rest[close + 1..];
                class
            } else if let Some(escape) = rest.strip_prefix("\\x{") {
                let close = escape.find('}')?;
                let c = char::from_u32(u32::from_str_radix(&escape[..close], 16).ok()?)?;
                rest = &escape[close + 1..];
                CharClass::new(false, vec![(c, c)])
            } else {
                let c = rest.chars().next()?;
                if "\\()|.^$*+?{}[]".contains(c) {
                    return None;
                }
                rest = &rest[c.len_utf8()..];
                CharClass::new(false, vec![(c, c)])
            };
            let (min, max, taken) = Sequence::quantifier(rest)?;
            rest = &rest[taken..];
            atoms.push((class, min, max));
        }
        Some(Sequence { atoms, end })
    }

    /// The quantifier at the start of `rest`: `(min, max, bytes)`; `(1, Some(1), 0)` for none.
    fn quantifier(rest: &str) -> Option<(u32, Option<u32>, usize)> {
        let (min, max, taken) = match rest.chars().next() {
            Some('*') => (0, None, 1),
            Some('+') => (1, None, 1),
            Some('?') => (0, Some(1), 1),
            Some('{') => {
                let close = rest.find('}')?;
                let body = &rest[1..close];
                let (min, max) = match body.split_once(',') {
                    None => {
                        let n = body.parse().ok()?;
                        (n, Some(n))
                    }
                    Some((lo, "")) => (lo.parse().ok()?, None),
                    Some((lo, hi)) => (lo.parse().ok()?, Some(hi.parse().ok()?)),
                };
                (min, max, close + 1)
            }
            _ => return Some((1, Some(1), 0)),
        };
        // A lazy or possessive mark, or bounds the wrong way round: leave it to the engine.
        if rest[taken..].starts_with(['?', '+']) || max.is_some_and(|m| m < min) {
            return None;
        }
        Some((min, max, taken))
    }

    fn is_match(&self, s: &str) -> bool {
        if s.is_ascii() {
            return self.is_match_ascii(s.as_bytes());
        }
        let mut chars = s.chars();
        let Some(((last, last_min, last_max), exact)) = self.atoms.split_last() else {
            return !self.end || s.is_empty();
        };
        for (class, n, _) in exact {
            for _ in 0..*n {
                match chars.next() {
                    Some(c) if class.contains(c) => {}
                    _ => return false,
                }
            }
        }
        let mut count = 0u32;
        for c in chars.by_ref() {
            if !last.contains(c) {
                // Unanchored at the end, what follows the run is anything.
                return !self.end && count >= *last_min;
            }
            count += 1;
            if !self.end && count >= *last_min {
                return true;
            }
            if last_max.is_some_and(|m| count > m) {
                return false;
            }
        }
        count >= *last_min
    }

    /// [`is_match`](Self::is_match) of an ASCII string: the lengths first, then one table
    /// load a byte, without a branch (a 64-digit hash is checked on every document).
    fn is_match_ascii(&self, s: &[u8]) -> bool {
        let Some(((last, last_min, last_max), exact)) = self.atoms.split_last() else {
            return !self.end || s.is_empty();
        };
        // Every byte of `run` in `class` (the bytes are ASCII: `& 0x7f` changes none).
        let all_in = |class: &CharClass, run: &[u8]| {
            run.iter()
                .fold(true, |ok, b| ok & class.ascii[usize::from(b & 0x7f)])
        };
        let mut at = 0;
        for (class, n, _) in exact {
            let n = *n as usize;
            match s.get(at..at + n) {
                Some(run) if all_in(class, run) => at += n,
                _ => return false,
            }
        }
        let rest = &s[at..];
        let min = *last_min as usize;
        if self.end {
            // Anchored at the end: the run is all that is left.
            rest.len() >= min
                && last_max.is_none_or(|m| rest.len() <= m as usize)
                && all_in(last, rest)
        } else {
            // Whatever follows the first `min` is allowed.
            rest.len() >= min && all_in(last, &rest[..min])
        }
    }
}

impl Pattern {
    /// Compiles an ECMA-262 regular expression (Unicode mode).
    pub fn new(source: &str) -> Result<Self, PatternError> {
        let regex = perago_regex::compile(source)?;
        // The fast forms, for a pattern of one `regex` program (no lookahead).
        let translated = perago_regex::translate(source).ok();
        let translated = translated.as_deref();
        let class =
            CharClass::parse(source).or_else(|| translated.and_then(CharClass::parse_translated));
        let sequence = match class {
            Some(_) => None,
            None => translated.and_then(Sequence::parse_translated),
        };
        Ok(Pattern {
            source: source.to_owned(),
            regex,
            class,
            sequence,
        })
    }

    /// Compiles a pattern the generator has already checked.
    pub fn checked(source: &str) -> Self {
        match Pattern::new(source) {
            Ok(p) => p,
            Err(e) => panic!("pattern {source:?} was accepted by perago-codegen but fails: {e}"),
        }
    }

    /// The source as written in the schema.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the pattern matches anywhere in `s`.
    #[inline]
    pub fn is_match(&self, s: &str) -> bool {
        match (&self.class, &self.sequence) {
            (Some(class), _) => s.chars().any(|c| class.contains(c)),
            (None, Some(sequence)) => sequence.is_match(s),
            (None, None) => self.regex.is_match(s),
        }
    }

    #[inline]
    fn check(&self, s: &str, path: &Path<'_>, out: &mut Out) -> bool {
        self.is_match(s) || self.report(path, out)
    }

    /// Records that a string does not match; false.
    #[cold]
    fn report(&self, path: &Path<'_>, out: &mut Out) -> bool {
        push(
            out,
            path,
            Code::Pattern,
            format!("must match the pattern {}", escaped(&self.source)),
        );
        false
    }
}

/// Records a violation at `path`.
#[cold]
pub fn push(out: &mut Out, path: &Path<'_>, code: Code, message: impl Into<String>) {
    out.push(Violation::new(path.render(), code, message));
}

/// `a string`, `an object`, … : the JSON type of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Types as a message lists them: `a string`, `a string or an integer`, `null, a boolean or
/// an array`.
pub fn type_list(phrases: &[&str]) -> String {
    match phrases {
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => String::new(),
    }
}

/// A JSON value written compactly for a message; strings keep their escapes.
pub fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A pattern for a message: quoted, with every whitespace or control character but the plain
/// space written as `\uXXXX`, so invisible characters stay readable.
fn escaped(source: &str) -> String {
    let mut out = String::from("\"");
    for c in source.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' ' => out.push(' '),
            c if c.is_whitespace() || c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cold]
/// A value of another type than `expected` (`an integer`, `a string or null`).
pub fn type_error(out: &mut Out, path: &Path<'_>, expected: &str, found: &Value) {
    type_error_named(out, path, expected, type_name(found));
}

#[cold]
/// [`type_error`] with the found type named ([`type_name`]'s words).
pub(crate) fn type_error_named(out: &mut Out, path: &Path<'_>, expected: &str, found: &str) {
    push(
        out,
        path,
        Code::Type,
        format!("must be {expected}, found {found}"),
    );
}

/// `type: string` with its length and pattern rules.
pub fn string<'v>(
    v: &'v Value,
    path: &Path<'_>,
    out: &mut Out,
    lengths: &Lengths,
    pattern: Option<&Pattern>,
) -> Option<&'v str> {
    let Value::String(s) = v else {
        type_error(out, path, "a string", v);
        return None;
    };
    string_rules(s, path, out, lengths, pattern).then_some(s.as_str())
}

/// The length and pattern rules of a string.
#[inline]
pub fn string_rules(
    s: &str,
    path: &Path<'_>,
    out: &mut Out,
    lengths: &Lengths,
    pattern: Option<&Pattern>,
) -> bool {
    let lengths_ok = lengths.check(s, path, out);
    let pattern_ok = pattern.is_none_or(|p| p.check(s, path, out));
    lengths_ok && pattern_ok
}

/// `type: integer` with its bounds. JSON Schema counts `1.0` as an integer; the typed value is
/// an `i64`, so an integer beyond its range is reported rather than silently rounded.
pub fn integer(v: &Value, path: &Path<'_>, out: &mut Out, bounds: &Bounds) -> Option<i64> {
    let Value::Number(n) = v else {
        type_error(out, path, "an integer", v);
        return None;
    };
    integer_num(Num::of(n), path, out, bounds)
}

/// [`integer`] of a number as the parser hands it over (no `Value` needed).
pub fn integer_num(n: Num, path: &Path<'_>, out: &mut Out, bounds: &Bounds) -> Option<i64> {
    let x = n.f64();
    let float = matches!(n, Num::F(_));
    if float && x.fract() != 0.0 {
        type_error_named(out, path, "an integer", "a number");
        return None;
    }
    let in_bounds = bounds.check(x, path, out);
    let Some(typed) = n.as_i64() else {
        push(
            out,
            path,
            Code::IntegerRange,
            "integer does not fit in a signed 64-bit value",
        );
        return None;
    };
    in_bounds.then_some(typed)
}

/// `type: number` with its bounds.
pub fn number(v: &Value, path: &Path<'_>, out: &mut Out, bounds: &Bounds) -> Option<f64> {
    let Value::Number(n) = v else {
        type_error(out, path, "a number", v);
        return None;
    };
    number_num(Num::of(n), path, out, bounds)
}

/// [`number`] of a number as the parser hands it over (no `Value` needed).
pub fn number_num(n: Num, path: &Path<'_>, out: &mut Out, bounds: &Bounds) -> Option<f64> {
    let x = n.f64();
    bounds.check(x, path, out).then_some(x)
}

/// `type: boolean`.
pub fn boolean(v: &Value, path: &Path<'_>, out: &mut Out) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => {
            type_error(out, path, "a boolean", v);
            None
        }
    }
}

/// `type: null`.
pub fn null(v: &Value, path: &Path<'_>, out: &mut Out) -> Option<()> {
    match v {
        Value::Null => Some(()),
        _ => {
            type_error(out, path, "null", v);
            None
        }
    }
}

/// `type: object`: the map to walk.
pub fn object<'v>(v: &'v Value, path: &Path<'_>, out: &mut Out) -> Option<&'v Map<String, Value>> {
    match v {
        Value::Object(map) => Some(map),
        _ => {
            type_error(out, path, "an object", v);
            None
        }
    }
}

/// `type: array` with `minItems`/`maxItems`: the items to walk, and whether the count is fine.
pub fn array<'v>(
    v: &'v Value,
    path: &Path<'_>,
    out: &mut Out,
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> Option<(&'v [Value], bool)> {
    let Value::Array(items) = v else {
        type_error(out, path, "an array", v);
        return None;
    };
    let ok = item_count(items.len() as u64, path, out, min_items, max_items);
    Some((items, ok))
}

/// `minItems`/`maxItems` of an array of `n` items.
pub fn item_count(
    n: u64,
    path: &Path<'_>,
    out: &mut Out,
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> bool {
    let mut ok = true;
    if let Some(m) = min_items.filter(|m| n < *m) {
        push(
            out,
            path,
            Code::MinItems,
            format!("must contain at least {m} {}", item_s(m)),
        );
        ok = false;
    }
    if let Some(m) = max_items.filter(|m| n > *m) {
        push(
            out,
            path,
            Code::MaxItems,
            format!("must contain at most {m} {}", item_s(m)),
        );
        ok = false;
    }
    ok
}

fn item_s(n: u64) -> &'static str {
    if n == 1 { "item" } else { "items" }
}

/// `const` with a string value.
pub fn const_str(v: &Value, path: &Path<'_>, out: &mut Out, expected: &str) -> bool {
    const_text(v.as_str(), path, out, expected)
}

/// `const` with a string value, given the value's text (`None` when it is not a string).
pub fn const_text(s: Option<&str>, path: &Path<'_>, out: &mut Out, expected: &str) -> bool {
    if s == Some(expected) {
        return true;
    }
    push(
        out,
        path,
        Code::Const,
        format!("must be {}", quoted(expected)),
    );
    false
}

/// `const` with any value (JSON equality: `1` equals `1.0`).
pub fn const_value(v: &Value, path: &Path<'_>, out: &mut Out, expected: &Value) -> bool {
    if json_equal(v, expected) {
        return true;
    }
    push(out, path, Code::Const, format!("must be {expected}"));
    false
}

/// `enum` of strings: the index of the matching value.
pub fn string_enum(v: &Value, path: &Path<'_>, out: &mut Out, allowed: &[&str]) -> Option<usize> {
    enum_text(v.as_str(), path, out, allowed)
}

/// `enum` of strings, given the value's text (`None` when it is not a string).
pub fn enum_text(
    s: Option<&str>,
    path: &Path<'_>,
    out: &mut Out,
    allowed: &[&str],
) -> Option<usize> {
    if let Some(i) = s.and_then(|s| allowed.iter().position(|a| *a == s)) {
        return Some(i);
    }
    push(
        out,
        path,
        Code::Enum,
        one_of(allowed.iter().map(|a| quoted(a))),
    );
    None
}

/// `enum` of arbitrary values.
pub fn value_enum(v: &Value, path: &Path<'_>, out: &mut Out, allowed: &[Value]) -> bool {
    if allowed.iter().any(|a| json_equal(v, a)) {
        return true;
    }
    push(
        out,
        path,
        Code::Enum,
        one_of(allowed.iter().map(Value::to_string)),
    );
    false
}

/// `const` with a non-string value, not met.
pub fn const_violation(path: &Path<'_>, out: &mut Out, expected: &Value) {
    push(out, path, Code::Const, format!("must be {expected}"));
}

/// `enum` of arbitrary values, none met.
pub fn enum_violation(path: &Path<'_>, out: &mut Out, allowed: &[Value]) {
    push(
        out,
        path,
        Code::Enum,
        one_of(allowed.iter().map(Value::to_string)),
    );
}

/// `minProperties`/`maxProperties` of an object of `n` members.
pub fn property_count(
    n: u64,
    path: &Path<'_>,
    out: &mut Out,
    min: Option<u64>,
    max: Option<u64>,
) -> bool {
    let mut ok = true;
    if let Some(m) = min.filter(|m| n < *m) {
        let s = if m == 1 { "property" } else { "properties" };
        push(
            out,
            path,
            Code::MinProperties,
            format!("must have at least {m} {s}"),
        );
        ok = false;
    }
    if let Some(m) = max.filter(|m| n > *m) {
        let s = if m == 1 { "property" } else { "properties" };
        push(
            out,
            path,
            Code::MaxProperties,
            format!("must have at most {m} {s}"),
        );
        ok = false;
    }
    ok
}

/// A discriminator value that names no branch.
pub fn unknown_discriminator(path: &Path<'_>, out: &mut Out, allowed: &[&str]) {
    push(
        out,
        path,
        Code::Discriminator,
        one_of(allowed.iter().map(|a| quoted(a))),
    );
}

/// A `oneOf`'s tag as generated code writes it: a string, an integer or a boolean `const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagValue<'a> {
    /// A string.
    Str(&'a str),
    /// An integer (`1.0` is `1`, as JSON Schema compares numbers).
    Int(i64),
    /// A boolean.
    Bool(bool),
}

impl<'a> TagValue<'a> {
    /// The tag a `Value` is, if it is one (an integer within `i64`, however written).
    pub fn of(v: &'a Value) -> Option<TagValue<'a>> {
        match v {
            Value::String(s) => Some(TagValue::Str(s)),
            Value::Bool(b) => Some(TagValue::Bool(*b)),
            Value::Number(n) => Num::of(n).as_i64().map(TagValue::Int),
            _ => None,
        }
    }

    /// True when the number `n` is this tag (JSON equality: `1.0` is `1`).
    pub fn is_number(self, n: Num) -> bool {
        matches!(self, TagValue::Int(i) if n.as_i64() == Some(i))
    }

    /// How a message writes it: as JSON.
    fn text(self) -> String {
        match self {
            TagValue::Str(s) => quoted(s),
            TagValue::Int(i) => i.to_string(),
            TagValue::Bool(b) => b.to_string(),
        }
    }
}

/// A tag value that names no branch of a `oneOf` whose tags are not all strings, or that has
/// several discriminators (the same message as [`unknown_discriminator`] for strings).
pub fn unknown_tag(path: &Path<'_>, out: &mut Out, allowed: &[TagValue<'_>]) {
    push(
        out,
        path,
        Code::Discriminator,
        one_of(allowed.iter().map(|a| a.text())),
    );
}

/// A `oneOf` discriminated by keys, handed an object with none of the keys that choose a
/// branch: `required` lists, branch by branch, the keys each requires that no other declares
/// (the discriminator, for the branches with a tag of a `oneOf` discriminated by both: listed
/// once).
pub fn no_branch_key(path: &Path<'_>, out: &mut Out, required: &[&[&str]]) {
    let branches: Vec<String> = required
        .iter()
        .enumerate()
        .filter(|(i, keys)| !required[..*i].contains(keys))
        .map(|(_, keys)| {
            let keys: Vec<String> = keys.iter().map(|k| quoted(k)).collect();
            keys.join(" and ")
        })
        .collect();
    // `oneOf`, not `required`: no one member is missing, so the violation is the object's.
    push(
        out,
        path,
        Code::OneOf,
        format!(
            "none of the branches' required keys is present: expected {}",
            branches.join(", or ")
        ),
    );
}

/// A `oneOf` discriminated by keys, handed an object with the keys of several branches (`found`,
/// in schema order): every branch refuses the keys of the others.
pub fn several_branch_keys(path: &Path<'_>, out: &mut Out, found: &[&str]) {
    let keys: Vec<String> = found.iter().map(|k| quoted(k)).collect();
    push(
        out,
        path,
        Code::OneOf,
        format!(
            "has keys of several branches ({}): only one branch may apply",
            keys.join(", ")
        ),
    );
}

fn one_of(items: impl Iterator<Item = String>) -> String {
    let mut msg = String::from("must be one of: ");
    for (i, item) in items.enumerate() {
        if i > 0 {
            msg.push_str(", ");
        }
        let _ = write!(msg, "{item}");
    }
    msg
}

/// The `false` schema: no value is allowed at `path` (an item beyond a fixed tuple).
pub fn not_allowed(path: &Path<'_>, out: &mut Out) {
    push(out, path, Code::NotAllowed, "no value is allowed here");
}

/// `propertyNames`: what the check of key `key` recorded from `out[start..]` is about the
/// name, so says so.
pub fn property_name(key: &str, out: &mut Out, start: usize) {
    for v in &mut out[start..] {
        v.message = format!("property name {}: {}", quoted(key), v.message);
    }
}

/// `dependentRequired`: the property at `path` is missing although `name` is present.
pub fn dependent_required(path: &Path<'_>, out: &mut Out, name: &str) {
    push(
        out,
        path,
        Code::Required,
        format!("required when {} is present", quoted(name)),
    );
}

/// A required property that is absent.
pub fn required(path: &Path<'_>, out: &mut Out) {
    push(out, path, Code::Required, "required field is missing");
}

/// A property a closed object does not declare.
pub fn unknown_field(path: &Path<'_>, out: &mut Out) {
    push(out, path, Code::UnknownField, "unknown field");
}

/// `format` on a string.
pub fn format(s: &str, path: &Path<'_>, out: &mut Out, format: Format) -> bool {
    if format.is_valid(s) {
        return true;
    }
    push(out, path, Code::Format, format.message());
    false
}

/// A JSON number as the parser has it: the tape's, or a `Value`'s.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// A non-negative integer.
    U(u64),
    /// A negative integer.
    I(i64),
    /// Anything else.
    F(f64),
}

impl Num {
    /// As a float.
    pub fn f64(self) -> f64 {
        match self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    /// The `i64` an integral number is, however written (`1.0` is `1`); `None` for a
    /// fraction or beyond the 64-bit range.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Num::U(u) => i64::try_from(u).ok(),
            Num::I(i) => Some(i),
            // -2^63 <= x < 2^63 holds exactly for integral floats in i64 range.
            Num::F(f)
                if f.fract() == 0.0
                    && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) =>
            {
                Some(f as i64)
            }
            Num::F(_) => None,
        }
    }

    /// As a `Value`.
    pub fn value(self) -> Value {
        Value::Number(match self {
            Num::U(u) => serde_json::Number::from(u),
            Num::I(i) => serde_json::Number::from(i),
            Num::F(f) => {
                serde_json::Number::from_f64(f).unwrap_or_else(|| serde_json::Number::from(0))
            }
        })
    }

    /// JSON equality of numbers.
    pub fn equals(self, other: Num) -> bool {
        match (self, other) {
            (Num::U(a), Num::U(b)) => a == b,
            (Num::I(a), Num::I(b)) => a == b,
            (Num::U(_), Num::I(_)) | (Num::I(_), Num::U(_)) => false,
            (a, b) => a.f64() == b.f64(),
        }
    }

    /// A `Value`'s number.
    pub fn of(n: &serde_json::Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::U(u)
        } else if let Some(i) = n.as_i64() {
            Num::I(i)
        } else {
            Num::F(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// `multipleOf`: exact for an integral value (however written: `-9.2e18` is an integer
    /// too) and a divisor written in decimal (`1.5` is 15/10, so `9223372036854775807` is not
    /// a multiple of it, which a float division would say it is, and `2^53 + 1` is, which it
    /// would not); otherwise within rounding of the division.
    pub fn is_multiple(self, m: f64) -> bool {
        let integer = match self {
            Num::U(u) => Some(u),
            Num::I(i) => Some(i.unsigned_abs()),
            // Exact: every integral float up to 2^64 converts without loss.
            Num::F(f) if f.fract() == 0.0 && f.abs() < u64::MAX as f64 => Some(f.abs() as u64),
            Num::F(_) => None,
        };
        if let Some(n) = integer {
            if m.fract() == 0.0 && m <= u64::MAX as f64 {
                return n % (m as u64) == 0;
            }
            if let Some((digits, scale)) = decimal(m) {
                // n / (digits / 10^scale) is whole when n * 10^scale is a multiple of digits.
                return (u128::from(n) * 10u128.pow(scale)) % u128::from(digits) == 0;
            }
        }
        let q = self.f64() / m;
        if !q.is_finite() {
            return false;
        }
        let r = q.round();
        if r == 0.0 {
            // Within the tolerance of no multiple at all: only zero is zero times `m`.
            return q == 0.0;
        }
        (q - r).abs() <= 1e-9 * r.abs()
    }
}

/// A positive fraction as `digits / 10^scale`, from its shortest decimal form (`1.5` → 15, 1),
/// when both fit: at most 19 decimals and 19 significant digits.
fn decimal(m: f64) -> Option<(u64, u32)> {
    let text = format!("{m:e}");
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u64 = format!("{whole}{fraction}").parse().ok()?;
    let scale = i32::try_from(fraction.len()).ok()? - exponent;
    (digits > 0 && (1..=19).contains(&scale)).then_some((digits, scale as u32))
}

/// `multipleOf` on a number; any other value passes (its type is another rule's).
pub fn multiple_of(v: &Value, path: &Path<'_>, out: &mut Out, m: f64) -> bool {
    let Value::Number(n) = v else {
        return true;
    };
    if Num::of(n).is_multiple(m) {
        return true;
    }
    push(
        out,
        path,
        Code::MultipleOf,
        format!("must be a multiple of {}", Num::F(m).value()),
    );
    false
}

/// `uniqueItems` on an array of `len` items that `equal(i, j)` compares: the first pair of
/// equal items (by the later one, then the earlier) is reported.
pub fn unique_items(
    len: usize,
    equal: impl Fn(usize, usize) -> bool,
    path: &Path<'_>,
    out: &mut Out,
) -> bool {
    for j in 1..len {
        for i in 0..j {
            if equal(i, j) {
                push(
                    out,
                    path,
                    Code::UniqueItems,
                    format!("must not repeat an item: items {i} and {j} are equal"),
                );
                return false;
            }
        }
    }
    true
}

/// JSON Schema equality: numbers compare by value, objects ignore key order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::*;

    /// The scan and the regex engine agree on every code point and on mixed strings.
    #[test]
    fn character_classes_scan_like_the_regex_engine() {
        let sources = [
            "[^\t-\r\u{1c}- \u{85}\u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}]",
            "[a-z_]",
            "[-a]",
            "[a-]",
            "[^é]",
            "[a-b-c]",
            "[&&~~^]",
            // One class in ECMA's own escapes, scanned through the translator's `regex` syntax.
            "\\S",
            "\\s",
            "\\d",
            "\\D",
            "\\w",
            "\\W",
            "[^\\s]",
            "[\\d]",
            "[\\dx-z]",
            ".",
            "[]",
            "[^]",
        ];
        for source in sources {
            let pattern = Pattern::checked(source);
            assert!(pattern.class.is_some(), "{source:?} should scan");
            for c in (0..=0x3100u32)
                .chain([0xfeff, 0x1f600, 0x10ffff])
                .filter_map(char::from_u32)
            {
                let s = c.to_string();
                assert_eq!(
                    pattern.is_match(&s),
                    pattern.regex.is_match(&s),
                    "{source:?} on {c:?}"
                );
            }
            for s in [
                "",
                "  x ",
                "\u{3000}\u{3000}",
                "-",
                "aé",
                "Z9",
                "\u{feff}\n",
                " \u{2028}",
            ] {
                assert_eq!(
                    pattern.is_match(s),
                    pattern.regex.is_match(s),
                    "{source:?} on {s:?}"
                );
            }
        }
    }

    /// Anchored runs of classes are walked, and agree with the regex engine on strings made
    /// of the characters they name and their neighbours.
    #[test]
    fn anchored_runs_walk_like_the_regex_engine() {
        let sources = [
            "^[0-9a-f]{64}$",
            "^\\d{4}-\\d{2}-\\d{2}$",
            "^https://",
            "^[a-z][a-z0-9_]*$",
            "^a+$",
            "^ab?$",
            "^x{2,3}",
            "^x{2,3}$",
            "^x{2,}$",
            "^é\\s*$",
            "^$",
            "^",
            "^[^a]{0,2}$",
        ];
        let alphabet = [
            'a', 'b', 'f', 'g', 'x', '0', '9', '-', '_', ':', '/', 'h', 't', 'p', 's', 'é', ' ',
            '\u{3000}',
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for source in sources {
            let pattern = Pattern::checked(source);
            assert!(pattern.sequence.is_some(), "{source:?} should walk");
            let mut strings: Vec<String> = vec![
                String::new(),
                "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3".into(),
                "2026-11-30".into(),
                "https://x".into(),
                "a_1".into(),
                "xx".into(),
                "xxxx".into(),
            ];
            for _ in 0..3000 {
                let len = (next() % 8) as usize;
                strings.push(
                    (0..len)
                        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                        .collect(),
                );
            }
            for s in &strings {
                assert_eq!(
                    pattern.is_match(s),
                    pattern.regex.is_match(s),
                    "{source:?} on {s:?}"
                );
            }
        }
        for source in [
            "^(ab)+$",
            "^a+b$",
            "^a*?$",
            "a{2}$",
            "^\\p{L}{2}$",
            "^a|b$",
            "^[a-z]+\\.x$",
        ] {
            let pattern = Pattern::checked(source);
            assert!(pattern.sequence.is_none(), "{source:?} must not walk");
        }
    }

    #[test]
    fn other_patterns_use_the_regex_engine() {
        for source in ["^a", "[a]+", "[[a]]", "[z-a]x", "a|b", "\\p{L}", "\\S+x"] {
            if let Ok(p) = Pattern::new(source) {
                assert!(p.class.is_none(), "{source:?} must not scan");
            }
        }
    }

    /// The classic catastrophic pattern: a backtracking engine takes exponential time on
    /// `a…ab`; this one returns (the test would hang otherwise).
    #[test]
    fn nested_quantifiers_match_in_linear_time() {
        let pattern = Pattern::checked("^(a+)+$");
        let mut s = "a".repeat(100_000);
        assert!(pattern.is_match(&s));
        s.push('b');
        assert!(!pattern.is_match(&s));
        let pattern = Pattern::checked("^(\\w+\\s?)*$");
        assert!(!pattern.is_match(&("ab ".repeat(30_000) + "!")));
    }
}

#[cfg(test)]
mod tests {
    use super::Num;

    /// An integer against a decimal divisor is exact, whatever a float division would round to.
    #[test]
    fn multiple_of_is_exact_for_integers() {
        let cases: &[(Num, f64, bool)] = &[
            (Num::I(i64::MAX), 1.5, false),
            (Num::U(u64::MAX), 0.5, true),
            (Num::I(i64::MIN), 1.5, false),
            (Num::U(9_007_199_254_740_993), 0.1, true),
            (Num::U(3), 1.5, true),
            (Num::I(-3), 0.3, true),
            (Num::U(1), 0.3, false),
            (Num::U(10), 0.0025, true),
            (Num::U(7), 2.0, false),
            (Num::F(4.5), 1.5, true),
            (Num::F(-9_223_372_036_854_775_808.0), 1.5, false),
            (Num::F(9_007_199_254_740_992.0), 1.5, false),
            (Num::U(9_007_199_254_740_993), 1.5, true),
            (Num::F(0.3), 0.1, true),
            (Num::F(0.35), 0.1, false),
            // Nearer zero than any multiple but zero: no tolerance makes it one.
            (Num::F(1e-300), 0.5, false),
            (Num::F(-2e-10), 0.5, false),
            (Num::F(0.0), 0.5, true),
            (Num::F(1e-10), 1e-10, true),
        ];
        for &(n, m, expected) in cases {
            assert_eq!(n.is_multiple(m), expected, "{:?} multipleOf {m}", n.value());
        }
    }
}
