//! Deterministic document generation and mutation for the differential tests.
//!
//! [`Generator`] walks a node of the IR ([`perago_codegen::ir::Shape`]) and builds documents the
//! schema admits: objects with and without their optional properties, arrays of varied length
//! within bounds, strings of multi-byte characters (CJK, emoji, combining marks, Python
//! whitespace such as U+3000 and U+001C), numbers inside bounds, every `oneOf` branch, nullable
//! values both null and not.
//!
//! [`Generator::mutations`] walks a valid document alongside its schema and lists systematic
//! single edits ([`Op`]) of it: an unknown field at each object, each required field missing,
//! each value replaced by each wrong JSON type, blank and boundary-length strings, numbers at
//! and past bounds, wrong `const`/`enum`/discriminator values, arrays below `minItems` and above
//! `maxItems`. Whether an edited document is valid is not decided here: the validators under
//! test decide, and must agree.
//!
//! Everything is driven by [`Rng`], a xorshift64* generator with a fixed seed, so a run is
//! reproducible.

use perago_codegen::SchemaSet;
use perago_codegen::ir::{Branch, Checks, Ir, Kind, NodeId, ObjectRules, Property, Shape, Step};
use perago_schema::Validator;
use perago_schema::check::{Bounds, Format, Lengths, Pattern, TagValue};
use perago_schema::one_of::{DecisionTree, Facts, Test};
use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// A tiny seeded PRNG (xorshift64*): deterministic, no dependencies.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with this seed (0 is remapped: xorshift must not start at 0).
    pub fn new(seed: u64) -> Self {
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }

    /// One element of a non-empty slice.
    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> &'s T {
        &items[self.below(items.len())]
    }
}

/// The whitespace of Python's `str.strip()`: what the contracts' non-blank pattern excludes.
pub const WHITESPACE: &[char] = &[
    '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', ' ', '\u{85}',
    '\u{a0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}',
    '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}',
    '\u{205f}', '\u{3000}',
];

/// Characters that look blank but are not Python whitespace (so they make a string non-blank).
pub const NOT_WHITESPACE: &[char] = &[
    '\u{200b}', '\u{feff}', '\u{180e}', '\u{0}', '\u{7f}', '\u{301}',
];

/// Multi-byte pieces: 2-, 3- and 4-byte UTF-8, combining marks, a ZWJ sequence, flags.
pub const MULTIBYTE: &[&str] = &[
    "é",
    "ß",
    "Ω",
    "ж",
    "日",
    "本",
    "語",
    "中",
    "文",
    "한",
    "ア",
    "😀",
    "🦀",
    "𝄞",
    "e\u{301}",
    "\u{308}",
    "👩\u{200d}💻",
    "🇫🇷",
    "\u{10ffff}",
    "\u{fffd}",
];

const ASCII: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:;,!?()[]{}'\"\\@#$%^&*+=<>|~` ";

/// Keys used for unknown fields and map entries: odd forms that stress paths and pointers.
pub const ODD_KEYS: &[&str] = &[
    "extra",
    "",
    "odd key",
    "a/b",
    "~0",
    "a~1b",
    "it's",
    "é",
    "日本",
    "😀",
    "1st",
    "0",
    "$",
    "[0]",
    "a.b",
    "\u{0}",
    "new\nline",
    "__proto__",
    "constructor",
];

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// The JSON Pointer (RFC 6901) of a path.
pub fn pointer(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        out.push('/');
        match seg {
            Seg::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => {
                let _ = write!(out, "{i}");
            }
        }
    }
    out
}

/// Converts perago's JSONPath form (`$`, `$.a[1]['b c']`, with `\\`, `\'` and `\uXXXX` escapes in
/// brackets) to a JSON Pointer; `None` when it is not in that form.
pub fn jsonpath_to_pointer(path: &str) -> Option<String> {
    let mut chars = path.strip_prefix('$')?.chars().peekable();
    let mut segs = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    key.push(c);
                    chars.next();
                }
                if key.is_empty() {
                    return None;
                }
                segs.push(Seg::Key(key));
            }
            '[' => match chars.next()? {
                '\'' => {
                    let mut key = String::new();
                    loop {
                        match chars.next()? {
                            '\\' => match chars.next()? {
                                'u' => {
                                    let hex: String =
                                        (0..4).map(|_| chars.next()).collect::<Option<_>>()?;
                                    key.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                                }
                                c => key.push(c),
                            },
                            '\'' => break,
                            c => key.push(c),
                        }
                    }
                    if chars.next()? != ']' {
                        return None;
                    }
                    segs.push(Seg::Key(key));
                }
                d if d.is_ascii_digit() => {
                    let mut n = String::from(d);
                    loop {
                        match chars.next()? {
                            ']' => break,
                            d if d.is_ascii_digit() => n.push(d),
                            _ => return None,
                        }
                    }
                    segs.push(Seg::Index(n.parse().ok()?));
                }
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(pointer(&segs))
}

/// One edit of a document.
#[derive(Debug, Clone)]
pub enum Op {
    /// Put a value at a path: replaces an existing value or adds an object member.
    Set(Vec<Seg>, Value),
    /// Remove an object member.
    Remove(Vec<Seg>),
}

impl Op {
    /// The path it edits.
    pub fn path(&self) -> &[Seg] {
        match self {
            Op::Set(p, _) | Op::Remove(p) => p,
        }
    }

    /// Applies the edit; false when its path no longer exists in `doc`.
    pub fn apply(&self, doc: &mut Value) -> bool {
        let path = self.path();
        let Some((last, parent_path)) = path.split_last() else {
            return match self {
                Op::Set(_, v) => {
                    *doc = v.clone();
                    true
                }
                Op::Remove(_) => false,
            };
        };
        let mut parent = doc;
        for seg in parent_path {
            let next = match (seg, parent) {
                (Seg::Key(k), Value::Object(m)) => m.get_mut(k),
                (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
                _ => None,
            };
            match next {
                Some(n) => parent = n,
                None => return false,
            }
        }
        match (self, last, parent) {
            (Op::Set(_, v), Seg::Key(k), Value::Object(m)) => {
                m.insert(k.clone(), v.clone());
                true
            }
            (Op::Set(_, v), Seg::Index(i), Value::Array(a)) if *i < a.len() => {
                a[*i] = v.clone();
                true
            }
            (Op::Remove(_), Seg::Key(k), Value::Object(m)) => m.shift_remove(k).is_some(),
            _ => false,
        }
    }
}

/// A labelled edit of a valid document.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// What it does, for failure reports: `type:null @ /summary`.
    pub label: String,
    /// The edit.
    pub op: Op,
}

/// Which optional properties valid documents get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optional {
    /// Each with probability one half.
    Random,
    /// All of them.
    All,
    /// None of them.
    None,
}

/// Builds valid documents and their mutations from the IR.
#[derive(Debug)]
pub struct Generator<'a> {
    ir: &'a Ir,
    /// The interpreter at each IR node (by index): what a valid value of the node is.
    validators: Vec<Option<Validator>>,
    /// The randomness; public so a driver can draw from the same stream.
    pub rng: Rng,
    /// Which optional properties [`Generator::valid`] includes.
    pub optional: Optional,
    /// The `oneOf` branch to take (modulo the branch count); random when `None`.
    pub branch: Option<usize>,
    /// Strings [`Generator::valid`] falls back to when random ones do not match a `pattern`
    /// (sampling never finds `^o-[0-9]+$`): one of those valid for the node, at random.
    pub pattern_examples: Vec<String>,
    /// How deep [`Generator::valid`] goes before it leaves out optional properties and makes
    /// arrays as short as allowed (6 unless set): small keeps recursive schemas' documents small.
    pub deep: usize,
    /// Every property name declared anywhere: good candidates for unknown fields.
    names: Vec<String>,
    /// Within [`Generator::mutations`], mutating the non-null replacement of a null.
    replacing: bool,
    /// The `examples` of each IR node's schema (by index): valid values of the nodes deferred
    /// to the interpreter, which generation from the typed shape rarely meets.
    examples: Vec<Vec<Value>>,
}

/// The JSON values of every type used to replace a value by the wrong type.
pub fn wrong_types() -> Vec<(&'static str, Value)> {
    vec![
        ("null", Value::Null),
        ("true", Value::Bool(true)),
        ("false", Value::Bool(false)),
        ("int 0", Value::from(0)),
        ("int -7", Value::from(-7)),
        ("float 0.0", float(0.0)),
        ("float 1.5", float(1.5)),
        ("float -0.0", float(-0.0)),
        ("string empty", Value::from("")),
        ("string x", Value::from("x")),
        ("string 日本😀", Value::from("日本😀")),
        ("array empty", Value::Array(vec![])),
        ("array [1,\"a\"]", serde_json::json!([1, "a"])),
        ("object empty", Value::Object(Map::new())),
        ("object {k:1}", serde_json::json!({"k": 1})),
    ]
}

/// Makes the tag a [`DecisionTree`] tests name branch `i` of an object generated for it, when
/// the branch's own schema of the tag takes other values too (a case of an `if`/`then`/`else`
/// chain, whose object's own members hold the tag): a value the tag test leads to `i` by, or
/// no tag when its absence does.
fn steer(decision: &DecisionTree, i: usize, map: &mut Map<String, Value>) {
    let leads = |next: usize| matches!(decision.tests.get(next), Some(Test::Branch(b)) if *b == i);
    for test in &decision.tests {
        if let Test::Tag {
            member,
            tags,
            absent,
            ..
        } = test
        {
            let name = &decision.members[*member];
            if let Some((values, _)) = tags.iter().find(|(_, next)| leads(*next)) {
                map.insert(name.clone(), values[0].clone());
                return;
            }
            if absent.is_some_and(leads) {
                map.remove(name);
                return;
            }
        }
    }
}

/// The members of an object a [`DecisionTree`] tests.
struct ValueFacts<'a> {
    map: &'a Map<String, Value>,
    decision: &'a DecisionTree,
}

impl Facts for ValueFacts<'_> {
    fn has(&self, member: usize) -> bool {
        self.map.contains_key(&self.decision.members[member])
    }

    fn kind(&self, member: usize) -> Option<(Kind, &'static str)> {
        let v = self.map.get(&self.decision.members[member])?;
        let kind = Kind::of_value(v).unwrap_or(if Kind::Integer.admits(v) {
            Kind::Integer
        } else {
            Kind::Number
        });
        Some((kind, perago_schema::check::type_name(v)))
    }

    fn is_tag(&self, member: usize, tag: TagValue<'_>) -> bool {
        self.map
            .get(&self.decision.members[member])
            .is_some_and(|v| TagValue::of(v) == Some(tag))
    }
}

/// How deep [`Generator::valid`] goes by default before it leaves out optional properties and
/// makes arrays as short as allowed, so recursive schemas stay finite.
const DEEP: usize = 6;

/// `v` with every integer written as a float (`1` → `1.0`): JSON-equal to it.
pub fn floated(v: &Value) -> Value {
    match v {
        Value::Number(n) if !n.is_f64() => n.as_f64().map_or(v.clone(), float),
        Value::Array(a) => Value::Array(a.iter().map(floated).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), floated(v))).collect()),
        _ => v.clone(),
    }
}

/// `v` with the members of every object in reverse order: JSON-equal to it.
pub fn reversed_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed_keys(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed_keys).collect()),
        _ => v.clone(),
    }
}

/// Strings of a format: valid ones, then invalid ones (near misses).
pub fn format_examples(f: Format) -> (&'static [&'static str], &'static [&'static str]) {
    match f {
        Format::DateTime => (
            &[
                "2026-12-01T21:30:00Z",
                "1990-12-31T23:59:60+01:00",
                "2026-01-01t00:00:00.5-08:00",
            ],
            &[
                "2026-12-01 21:30:00Z",
                "2026-13-01T21:30:00Z",
                "2026-12-01T21:30:00",
                "2026-02-30T00:00:00Z",
            ],
        ),
        Format::Date => (
            &["2026-12-01", "2024-02-29", "0001-01-01"],
            &[
                "2026-12-1",
                "2023-02-29",
                "2026/12/01",
                "2026-12-01T00:00:00Z",
            ],
        ),
        Format::Time => (
            &["21:30:00Z", "08:30:06.283185+02:00", "23:59:60Z"],
            &["21:30:00", "24:00:00Z", "8:30:00Z", "21:30Z"],
        ),
        Format::Duration => (
            &["P1DT2H", "PT0.5S", "P4W", "P1Y2M3D"],
            &["P", "PT", "1D", "P1H", "P1W2D"],
        ),
        Format::Email => (
            &["a@example.com", "first.last+tag@sub.example.org"],
            &[
                "a.example.com",
                "@example.com",
                "a@",
                "a b@example.com",
                "a..b@example.com",
            ],
        ),
        Format::Hostname => (
            &["example.com", "a-b.c0", "localhost"],
            &["-a.com", "a_b.com", "a..b", ""],
        ),
        Format::Ipv4 => (
            &["127.0.0.1", "255.255.255.255"],
            &["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4 "],
        ),
        Format::Ipv6 => (
            &["::1", "2001:db8::8a2e:370:7334", "::ffff:1.2.3.4"],
            &["1:::2", "12345::", "1.2.3.4", "::g"],
        ),
        Format::Uri => (
            &[
                "https://example.com/a?b#c",
                "urn:isbn:0451450523",
                "mailto:a@example.com",
            ],
            &["//example.com", "/a/b", "http://exa mple.com", "1http://x"],
        ),
        Format::UriReference => (
            &["/a/b", "https://example.com", "#frag", ""],
            &["\\a", "a b", "http://[::1"],
        ),
        Format::Iri => (
            &["https://例え.jp/パス", "urn:x"],
            &["/relative", "http://a b"],
        ),
        Format::IriReference => (&["パス/to", "https://例え.jp"], &["a b", "\\x"]),
        Format::Uuid => (
            &[
                "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
                "00000000-0000-0000-0000-000000000000",
            ],
            &[
                "2eb8aa08aa9811eab4aa73b441d16380",
                "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
                "2eb8aa08-aa98-11ea-b4aa-73b441d1638g",
            ],
        ),
        Format::Regex => (&["^a+$", "[a-z]{2,}", "(?:x|y)"], &["(", "[a-", "a{2,1}"]),
        Format::JsonPointer => (&["", "/a/b", "/a~0b/~1"], &["a", "/a~2", "/~"]),
        Format::RelativeJsonPointer => (&["0", "1/a", "2#"], &["/a", "-1", "01"]),
    }
}

/// A JSON number from a finite float (kept a float even when integral: `1.0`).
pub fn float(x: f64) -> Value {
    Value::Number(Number::from_f64(x).expect("finite"))
}

impl<'a> Generator<'a> {
    /// A generator over `set`'s IR with a fixed seed.
    pub fn new(set: &'a SchemaSet, seed: u64) -> Self {
        let ir = &set.ir;
        let compiled = set
            .validator()
            .unwrap_or_else(|e| panic!("the interpreter refuses the set: {e}"));
        // A node the builder made up (the `{}` of an absent `items`) has no schema of its own
        // to compile, and admits anything.
        let validators = ir
            .nodes()
            .map(|(_, node)| match compiled.at(&node.location) {
                None if matches!(node.shape, Shape::Any) => None,
                at => Some(at.unwrap_or_else(|| panic!("{}: not compiled", node.location))),
            })
            .collect();
        let mut names = Vec::new();
        for (_, node) in ir.nodes() {
            if let Shape::Object { properties, .. } = &node.shape {
                for p in properties {
                    if !names.contains(&p.name) {
                        names.push(p.name.clone());
                    }
                }
            }
        }
        let examples = ir
            .nodes()
            .map(|(_, node)| schema_examples(set, &node.location))
            .collect();
        Generator {
            ir,
            validators,
            examples,
            rng: Rng::new(seed),
            optional: Optional::Random,
            branch: None,
            pattern_examples: Vec::new(),
            deep: DEEP,
            names,
            replacing: false,
        }
    }

    fn shape(&self, id: NodeId) -> &'a Shape {
        &self.ir.node(self.ir.resolve(id)).shape
    }

    fn checks(&self, id: NodeId) -> Checks {
        self.ir.node(self.ir.resolve(id)).checks
    }

    /// A valid value of a node with [`Checks`], which random values rarely meet: a string of
    /// the format, a multiple, distinct items. `None` when none of the tries is valid.
    fn valid_checked(&mut self, id: NodeId, checks: &Checks, depth: usize) -> Option<Value> {
        let mut candidates: Vec<Value> = Vec::new();
        if let Some(f) = checks.format {
            candidates.extend(format_examples(f).0.iter().map(|s| Value::from(*s)));
        }
        if let Some(m) = checks.multiple_of {
            let integer = matches!(self.shape(id), Shape::Integer(_));
            let b = match self.shape(id) {
                Shape::Integer(b) | Shape::Number(b) => *b,
                _ => Bounds::NONE,
            };
            let mut ks: Vec<f64> = vec![0.0, 1.0, -1.0, 2.0, 3.0, 10.0, -7.0];
            ks.push(self.rng.below(2000) as f64 - 1000.0);
            for x in [b.minimum, b.exclusive_minimum].into_iter().flatten() {
                ks.push((x / m).ceil());
                ks.push((x / m).ceil() + 1.0);
            }
            for x in [b.maximum, b.exclusive_maximum].into_iter().flatten() {
                ks.push((x / m).floor());
                ks.push((x / m).floor() - 1.0);
            }
            for k in ks {
                let x = k * m;
                candidates.push(match integer {
                    true if x.fract() == 0.0 && x.abs() < 9e15 => Value::from(x as i64),
                    true => continue,
                    false => float(x),
                });
            }
        }
        if checks.unique_items
            && let Shape::Array {
                items,
                min_items,
                max_items,
            } = self.shape(id)
        {
            let (items, lo) = (*items, min_items.unwrap_or(0));
            let hi = match depth > self.deep {
                true => lo,
                false => max_items.unwrap_or(lo + 4).min(lo + 4).max(lo),
            };
            let n = self.rng.range(lo, hi);
            let mut distinct: Vec<Value> = Vec::new();
            for _ in 0..n * 8 {
                if distinct.len() as u64 == n {
                    break;
                }
                let v = self.valid_at(items, depth + 1);
                if !distinct
                    .iter()
                    .any(|d| perago_schema::check::json_equal(d, &v))
                {
                    distinct.push(v);
                }
            }
            candidates.push(Value::Array(distinct));
        }
        let valid: Vec<Value> = candidates
            .into_iter()
            .filter(|v| self.is_valid(id, v))
            .collect();
        (!valid.is_empty()).then(|| self.rng.pick(&valid).clone())
    }

    /// Edits of a valid `value` that break its [`Checks`].
    fn checked_mutations(
        &mut self,
        checks: &Checks,
        value: &Value,
        path: &[Seg],
        out: &mut Vec<Mutation>,
    ) {
        if let Some(f) = checks.format {
            let (valid, invalid) = format_examples(f);
            for s in valid.iter().chain(invalid) {
                Self::set(out, path, format!("format:{f:?} {s:?}"), Value::from(*s));
            }
        }
        if let Some(m) = checks.multiple_of {
            for (label, x) in [
                ("m/2", m / 2.0),
                ("m+1", m + 1.0),
                ("3m", 3.0 * m),
                ("-m", -m),
                ("m*1e9", m * 1e9),
                ("m*(2^53+1)", m * 9_007_199_254_740_993.0),
            ] {
                Self::set(out, path, format!("multipleOf:{label}"), float(x));
                if x.fract() == 0.0 && x.abs() < 9e18 {
                    Self::set(
                        out,
                        path,
                        format!("multipleOf:{label} int"),
                        Value::from(x as i64),
                    );
                }
            }
            if let Some(x) = value.as_i64() {
                Self::set(
                    out,
                    path,
                    "multipleOf:value+1",
                    Value::from(x.saturating_add(1)),
                );
            }
        }
        if checks.unique_items
            && let Value::Array(items) = value
            && let Some(first) = items.first()
        {
            let mut twice = items.clone();
            twice.push(first.clone());
            Self::set(out, path, "uniqueItems:repeat first", Value::Array(twice));
            let mut floated_twice = items.clone();
            floated_twice.insert(0, floated(first));
            Self::set(
                out,
                path,
                "uniqueItems:first again, numbers as floats",
                Value::Array(floated_twice),
            );
            if let Some(last) = items.last() {
                let mut reordered = items.clone();
                reordered[0] = reversed_keys(last);
                Self::set(
                    out,
                    path,
                    "uniqueItems:first replaced by the last, keys reversed",
                    Value::Array(reordered),
                );
            }
        }
    }

    fn is_valid(&self, id: NodeId, v: &Value) -> bool {
        self.validators[id.0]
            .as_ref()
            .is_none_or(|at| at.validate_value(v).is_empty())
    }

    /// A valid value of node `id`.
    pub fn valid(&mut self, id: NodeId) -> Value {
        self.valid_at(id, 0)
    }

    /// A valid value of the `oneOf` `id`, decided by tests: of branch `i` (the chosen one, else
    /// the next), its tag steered to name it; the first branch whose value the tests give it
    /// and that is valid (a case of a chain may admit no value: a `required` tag its `if`s all
    /// name).
    fn decided(
        &mut self,
        id: NodeId,
        branches: &[Branch],
        decision: &DecisionTree,
        depth: usize,
    ) -> Value {
        let n = branches.len();
        let start = match self.branch {
            Some(b) => b % n,
            None => self.rng.below(n),
        };
        let mut first = None;
        for k in 0..n {
            let i = (start + k) % n;
            let mut v = self.valid_at(branches[i].node, depth);
            if let Value::Object(map) = &mut v {
                if decision.decide(&ValueFacts { map, decision }) != Ok(i) {
                    steer(decision, i, map);
                }
                if decision.decide(&ValueFacts { map, decision }) == Ok(i) && self.is_valid(id, &v)
                {
                    return v;
                }
            }
            first.get_or_insert(v);
        }
        first.unwrap_or(Value::Null)
    }

    fn valid_at(&mut self, id: NodeId, depth: usize) -> Value {
        let resolved = self.ir.resolve(id);
        if self.ir.node(resolved).deferred.is_none() {
            return self.valid_typed(id, depth);
        }
        // The typed shape leaves out what is deferred to the interpreter: generate and keep what
        // it finds valid, else one of the schema's examples it finds valid.
        let mut last = Value::Null;
        for _ in 0..32 {
            last = self.valid_typed(id, depth);
            if self.is_valid(resolved, &last) {
                return last;
            }
        }
        let examples: Vec<Value> = self.examples[resolved.0]
            .iter()
            .filter(|e| self.is_valid(resolved, e))
            .cloned()
            .collect();
        match examples.is_empty() {
            true => last,
            false => self.rng.pick(&examples).clone(),
        }
    }

    fn valid_typed(&mut self, id: NodeId, depth: usize) -> Value {
        let checks = self.checks(id);
        if !checks.is_empty()
            && let Some(v) = self.valid_checked(id, &checks, depth)
        {
            return v;
        }
        match self.shape(id) {
            Shape::Any => self.any(depth),
            Shape::Null => Value::Null,
            Shape::Boolean => Value::Bool(self.rng.chance(1, 2)),
            Shape::Integer(b) => self.integer(b),
            Shape::Number(b) => self.number(b),
            Shape::String { lengths, .. } => {
                let lengths = *lengths;
                // Rejection sampling against the pattern, from ever narrower palettes.
                for attempt in 0..48 {
                    let s = match attempt / 8 {
                        0 | 1 => self.string(lengths),
                        palette => {
                            let n = self.string(lengths).chars().count().max(1);
                            let pool: &[&str] = match palette {
                                2 => &["a", "b", "z", "q"],
                                3 => &["0", "1", "7", "9"],
                                4 => &[" ", "\t", "\u{3000}"],
                                _ => &["é", "日", "ж", "_", "A"],
                            };
                            (0..n).map(|_| *self.rng.pick(pool)).collect()
                        }
                    };
                    let s = Value::String(s);
                    if self.is_valid(id, &s) {
                        return s;
                    }
                }
                let examples: Vec<Value> = self
                    .pattern_examples
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .filter(|s| self.is_valid(id, s))
                    .collect();
                if !examples.is_empty() {
                    return self.rng.pick(&examples).clone();
                }
                let n = lengths
                    .min
                    .unwrap_or(1)
                    .max(1)
                    .min(lengths.max.unwrap_or(u64::MAX)) as usize;
                Value::String("x".repeat(n))
            }
            Shape::Const(c) => c.clone(),
            Shape::Enum(values) => self.rng.pick(values).clone(),
            Shape::Array {
                items,
                min_items,
                max_items,
            } => {
                let lo = min_items.unwrap_or(0);
                // Deep down (recursive schemas), the shortest arrays allowed.
                let hi = match depth > self.deep {
                    true => lo,
                    false => max_items.unwrap_or(lo + 4).min(lo + 4).max(lo),
                };
                let n = self.rng.range(lo, hi);
                Value::Array((0..n).map(|_| self.valid_at(*items, depth + 1)).collect())
            }
            Shape::Object {
                properties,
                additional,
                rules,
            } => {
                let mut map = Map::new();
                if let Some(extra) = additional {
                    for _ in 0..self.rng.below(4) {
                        let key = self.map_key();
                        if !properties.iter().any(|p| p.name == key) {
                            let v = self.valid_at(*extra, depth + 1);
                            map.insert(key, v);
                        }
                    }
                }
                for p in properties {
                    let include = p.required
                        || depth <= self.deep
                            && match self.optional {
                                Optional::All => true,
                                Optional::None => false,
                                Optional::Random => self.rng.chance(1, 2),
                            };
                    if include {
                        let v = self.valid_at(p.node, depth + 1);
                        // A deferred optional member may admit nothing (`false`).
                        let node = self.ir.resolve(p.node);
                        if p.required
                            || self.ir.node(node).deferred.is_none()
                            || self.is_valid(node, &v)
                        {
                            map.insert(p.name.clone(), v);
                        }
                    }
                }
                self.meet_rules(properties, rules, &mut map, depth);
                Value::Object(map)
            }
            Shape::Tuple {
                items,
                rest,
                min_items,
                max_items,
                ..
            } => {
                let mut values: Vec<Value> =
                    items.iter().map(|i| self.valid_at(*i, depth + 1)).collect();
                if let Some(rest) = rest {
                    let lo = min_items.unwrap_or(0).max(items.len() as u64);
                    let hi = max_items.unwrap_or(lo + 3).min(lo + 3).max(lo);
                    let n = self.rng.range(lo, hi) as usize;
                    while values.len() < n {
                        values.push(self.valid_at(*rest, depth + 1));
                    }
                }
                Value::Array(values)
            }
            Shape::Map {
                values,
                pattern,
                names,
                min,
                max,
            } => {
                let lo = min.unwrap_or(0);
                let hi = max.unwrap_or(lo + 3).min(lo + 3).max(lo);
                let n = self.rng.range(lo, hi) as usize;
                let mut map = Map::new();
                for _ in 0..n * 50 {
                    if map.len() >= n {
                        break;
                    }
                    if let Some(key) = self.checked_key(pattern.as_ref(), *names)
                        && !map.contains_key(&key)
                    {
                        let v = self.valid_at(*values, depth + 1);
                        map.insert(key, v);
                    }
                }
                Value::Object(map)
            }
            Shape::OneOf {
                branches,
                decision: Some(decision),
                ..
            } => self.decided(id, branches, decision, depth),
            Shape::OneOf { branches, .. } => {
                let i = match self.branch {
                    Some(b) => b % branches.len(),
                    None => self.rng.below(branches.len()),
                };
                self.valid_at(branches[i].node, depth)
            }
            Shape::Union(branches) => {
                let i = match self.branch {
                    Some(b) => b % branches.len(),
                    None => self.rng.below(branches.len()),
                };
                self.valid_at(branches[i].node, depth)
            }
            Shape::Nullable(inner) => {
                if self.rng.chance(1, 3) {
                    Value::Null
                } else {
                    self.valid_at(*inner, depth)
                }
            }
            Shape::Ref(target) => self.valid_at(*target, depth),
        }
    }

    /// Adds optional properties until `minProperties` and every `dependentRequired` are met,
    /// then drops optional ones beyond `maxProperties` (none of the others needs).
    fn meet_rules(
        &mut self,
        properties: &[Property],
        rules: &ObjectRules,
        map: &mut Map<String, Value>,
        depth: usize,
    ) {
        for step in &rules.steps {
            match step {
                Step::Count(Some(min), _) => {
                    for p in properties {
                        if map.len() as u64 >= *min {
                            break;
                        }
                        if !map.contains_key(&p.name) {
                            let v = self.valid_at(p.node, depth + 1);
                            map.insert(p.name.clone(), v);
                        }
                    }
                }
                Step::DependentRequired(i, needed) if map.contains_key(&properties[*i].name) => {
                    for j in needed {
                        let p = &properties[*j];
                        if !map.contains_key(&p.name) {
                            let v = self.valid_at(p.node, depth + 1);
                            map.insert(p.name.clone(), v);
                        }
                    }
                }
                _ => {}
            }
        }
        for step in &rules.steps {
            if let Step::Count(_, Some(max)) = step {
                let needed = |name: &str, map: &Map<String, Value>| {
                    rules.steps.iter().any(|s| match s {
                        Step::DependentRequired(i, needed) => {
                            map.contains_key(&properties[*i].name)
                                && needed.iter().any(|j| properties[*j].name == name)
                        }
                        _ => false,
                    })
                };
                for p in properties.iter().rev() {
                    if map.len() as u64 <= *max {
                        break;
                    }
                    if !p.required && map.contains_key(&p.name) && !needed(&p.name, map) {
                        map.remove(&p.name);
                    }
                }
            }
        }
    }

    /// Edits that cross an object's counts and `dependentRequired`: every optional property
    /// dropped, every one added, each needed property removed, each needing one added alone.
    fn rule_mutations(
        &mut self,
        properties: &[Property],
        rules: &ObjectRules,
        map: &Map<String, Value>,
        path: &[Seg],
        out: &mut Vec<Mutation>,
    ) {
        if rules.steps.is_empty() {
            return;
        }
        let mut bare = map.clone();
        bare.retain(|k, _| properties.iter().any(|p| p.name == *k && p.required));
        Self::set(out, path, "object:only required", Value::Object(bare));
        let mut full = map.clone();
        for p in properties {
            if !full.contains_key(&p.name) {
                let v = self.valid(p.node);
                full.insert(p.name.clone(), v);
            }
        }
        Self::set(out, path, "object:every property", Value::Object(full));
        for step in &rules.steps {
            if let Step::DependentRequired(i, needed) = step {
                let name = &properties[*i].name;
                if map.contains_key(name) {
                    for j in needed {
                        let mut v = map.clone();
                        if v.remove(&properties[*j].name).is_some() {
                            Self::set(
                                out,
                                path,
                                format!("object:dependentRequired without {}", properties[*j].name),
                                Value::Object(v),
                            );
                        }
                    }
                } else {
                    let mut v = map.clone();
                    let x = self.valid(properties[*i].node);
                    v.insert(name.clone(), x);
                    for j in needed {
                        v.remove(&properties[*j].name);
                    }
                    Self::set(
                        out,
                        path,
                        format!("object:dependentRequired {name} alone"),
                        Value::Object(v),
                    );
                }
            }
        }
    }

    /// A key `pattern` matches and `names` admits, if one of a few tries finds one.
    fn checked_key(&mut self, pattern: Option<&Pattern>, names: Option<NodeId>) -> Option<String> {
        for _ in 0..20 {
            let key = match self.rng.below(3) {
                0 => self.map_key(),
                1 if !self.pattern_examples.is_empty() => {
                    self.rng.pick(&self.pattern_examples).clone()
                }
                _ => {
                    let n = self.rng.range(1, 6) as usize;
                    format!("x-{}", self.chars(n))
                }
            };
            let named = names.is_none_or(|n| self.is_valid(n, &Value::String(key.clone())));
            if pattern.is_none_or(|p| p.is_match(&key)) && named {
                return Some(key);
            }
        }
        None
    }

    fn map_key(&mut self) -> String {
        if self.rng.chance(1, 2) {
            (*self.rng.pick(ODD_KEYS)).to_owned()
        } else {
            let n = self.rng.range(1, 8) as usize;
            self.chars(n)
        }
    }

    /// Any JSON value, nested at most two levels below `depth`.
    fn any(&mut self, depth: usize) -> Value {
        let kinds = if depth > 3 { 5 } else { 7 };
        match self.rng.below(kinds) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.chance(1, 2)),
            2 => self.integer(&Bounds::NONE),
            3 => self.number(&Bounds::NONE),
            4 => {
                let n = self.rng.below(12);
                Value::String(self.chars(n))
            }
            5 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.any(depth + 1))
                    .collect(),
            ),
            _ => {
                let mut map = Map::new();
                for _ in 0..self.rng.below(4) {
                    let key = self.map_key();
                    let v = self.any(depth + 1);
                    map.insert(key, v);
                }
                Value::Object(map)
            }
        }
    }

    /// `n` code points from a palette of ASCII, multi-byte pieces and whitespace.
    pub fn chars(&mut self, n: usize) -> String {
        let mut s = String::new();
        let mut count = 0;
        while count < n {
            let piece: String = match self.rng.below(10) {
                0..=4 => char::from(*self.rng.pick(ASCII)).to_string(),
                5..=7 => (*self.rng.pick(MULTIBYTE)).to_owned(),
                8 => self.rng.pick(WHITESPACE).to_string(),
                _ => self.rng.pick(NOT_WHITESPACE).to_string(),
            };
            let len = piece.chars().count();
            if count + len > n {
                continue;
            }
            s.push_str(&piece);
            count += len;
        }
        s
    }

    fn string(&mut self, lengths: Lengths) -> String {
        let min = lengths.min.unwrap_or(0);
        let max = lengths.max.unwrap_or(min + 40).max(min);
        let n = match self.rng.below(8) {
            0 => min,
            1 => max,
            2 => max.saturating_sub(1).max(min),
            _ => self.rng.range(min, max.min(min + 24)),
        };
        match self.rng.below(8) {
            // Whitespace only (U+3000, U+001C, …): blank, but fine where no pattern says otherwise.
            0 => (0..n).map(|_| *self.rng.pick(WHITESPACE)).collect(),
            // Multi-byte only: CJK, emoji, combining marks, each piece one code point.
            1 => (0..n)
                .map(|_| {
                    *self
                        .rng
                        .pick(&['日', '語', '😀', '🦀', '\u{301}', 'é', '\u{10ffff}'])
                })
                .collect(),
            _ => self.chars(n as usize),
        }
    }

    fn integer(&mut self, b: &Bounds) -> Value {
        let candidates: Vec<Value> = vec![
            Value::from(0),
            Value::from(1),
            Value::from(-1),
            Value::from(self.rng.next_u64() as i32),
            Value::from(i64::MAX),
            Value::from(i64::MIN),
            float(1.0),
            float(-0.0),
            float(4096.0),
        ];
        let mut from_bounds = Vec::new();
        for m in [b.minimum, b.maximum].into_iter().flatten() {
            from_bounds.push(m);
        }
        if let Some(m) = b.exclusive_minimum {
            from_bounds.push(m.floor() + 1.0);
        }
        if let Some(m) = b.exclusive_maximum {
            from_bounds.push(m.ceil() - 1.0);
        }
        let mut all: Vec<Value> = from_bounds.iter().map(|m| Value::from(*m as i64)).collect();
        all.extend(candidates);
        let ok: Vec<Value> = all
            .into_iter()
            .filter(|v| v.as_f64().is_some_and(|x| b.contains(x)))
            .collect();
        match ok.is_empty() {
            true => Value::from(b.minimum.or(b.maximum).unwrap_or(0.0) as i64),
            false => self.rng.pick(&ok).clone(),
        }
    }

    fn number(&mut self, b: &Bounds) -> Value {
        let r = (self.rng.next_u64() % 1_000_000) as f64 / 1000.0 - 500.0;
        let mut all = vec![
            float(r),
            float(0.5),
            float(-0.0),
            float(1e300),
            Value::from(3),
            float(1e-300),
        ];
        for m in [b.minimum, b.maximum].into_iter().flatten() {
            all.push(float(m));
        }
        for m in [b.exclusive_minimum, b.exclusive_maximum]
            .into_iter()
            .flatten()
        {
            all.push(float((m + 0.25).min(f64::MAX)));
            all.push(float(m - 0.25));
        }
        let ok: Vec<Value> = all
            .into_iter()
            .filter(|v| v.as_f64().is_some_and(|x| b.contains(x)))
            .collect();
        match ok.is_empty() {
            true => float(b.minimum.or(b.maximum).unwrap_or(0.0)),
            false => self.rng.pick(&ok).clone(),
        }
    }

    /// Every systematic single edit of `doc`, a valid document of node `root`.
    pub fn mutations(&mut self, root: NodeId, doc: &Value) -> Vec<Mutation> {
        let mut out = Vec::new();
        self.mutate(root, doc, &mut Vec::new(), true, &mut out);
        out
    }

    fn push(out: &mut Vec<Mutation>, label: impl std::fmt::Display, op: Op) {
        let label = format!("{label} @ {}", pointer(op.path()));
        out.push(Mutation { label, op });
    }

    fn set(out: &mut Vec<Mutation>, path: &[Seg], label: impl std::fmt::Display, v: Value) {
        Self::push(out, label, Op::Set(path.to_vec(), v));
    }

    /// The mutations of a `oneOf`'s keys (those of the branches discriminated by keys): another
    /// such branch's own keys added (keys of two branches), each own key of the branch the
    /// object has keys of removed (maybe none left). That branch, if any.
    fn branch_keys(
        &mut self,
        branches: &[Branch],
        map: &Map<String, Value>,
        path: &mut Vec<Seg>,
        out: &mut Vec<Mutation>,
    ) -> Option<usize> {
        let chosen = branches
            .iter()
            .position(|b| b.keys.iter().any(|k| map.contains_key(k)));
        for (i, b) in branches.iter().enumerate() {
            if Some(i) == chosen {
                continue;
            }
            let Shape::Object { properties, .. } = self.shape(b.node) else {
                continue;
            };
            for p in properties.iter().filter(|p| b.keys.contains(&p.name)) {
                let v = self.valid(p.node);
                path.push(Seg::Key(p.name.clone()));
                Self::set(out, path, format!("oneOf:key of branch {i}"), v);
                path.pop();
            }
        }
        let chosen = chosen?;
        for k in branches[chosen]
            .keys
            .iter()
            .filter(|k| map.contains_key(*k))
        {
            path.push(Seg::Key(k.clone()));
            Self::push(out, "oneOf:remove deciding key", Op::Remove(path.clone()));
            path.pop();
        }
        Some(chosen)
    }

    fn mutate(
        &mut self,
        id: NodeId,
        value: &Value,
        path: &mut Vec<Seg>,
        types: bool,
        out: &mut Vec<Mutation>,
    ) {
        if types {
            for (label, v) in wrong_types() {
                if v != *value {
                    Self::set(out, path, format!("type:{label}"), v);
                }
            }
        }
        let checks = self.checks(id);
        if !checks.is_empty() {
            self.checked_mutations(&checks, value, path, out);
        }
        match self.shape(id) {
            Shape::Any | Shape::Null | Shape::Boolean => {}
            Shape::Integer(b) => self.number_mutations(b, true, path, out),
            Shape::Number(b) => self.number_mutations(b, false, path, out),
            Shape::String { lengths, .. } => self.string_mutations(*lengths, path, out),
            Shape::Const(c) => Self::const_mutations(c, path, out),
            Shape::Enum(values) => {
                for v in values {
                    Self::const_mutations(v, path, out);
                }
            }
            Shape::Array {
                items,
                min_items,
                max_items,
            } => {
                let Value::Array(elements) = value else {
                    return;
                };
                let (items, min_items, max_items) = (*items, *min_items, *max_items);
                let valid_items = |g: &mut Self, n: u64| -> Value {
                    Value::Array((0..n).map(|_| g.valid(items)).collect())
                };
                Self::set(out, path, "array:empty", Value::Array(vec![]));
                if let Some(m) = min_items.filter(|m| *m > 0) {
                    let v = valid_items(self, m - 1);
                    Self::set(out, path, format!("array:minItems-1 ({})", m - 1), v);
                    let v = valid_items(self, m);
                    Self::set(out, path, format!("array:minItems ({m})"), v);
                }
                if let Some(m) = max_items {
                    let v = valid_items(self, m);
                    Self::set(out, path, format!("array:maxItems ({m})"), v);
                    let v = valid_items(self, m + 1);
                    Self::set(out, path, format!("array:maxItems+1 ({})", m + 1), v);
                }
                let mut longer = elements.clone();
                longer.push(self.valid(items));
                Self::set(out, path, "array:append valid", Value::Array(longer));
                for (label, bad) in [
                    ("null", Value::Null),
                    ("int 42", Value::from(42)),
                    ("blank", Value::from(" ")),
                ] {
                    let mut longer = elements.clone();
                    longer.push(bad);
                    Self::set(
                        out,
                        path,
                        format!("array:append {label}"),
                        Value::Array(longer),
                    );
                }
                for (i, element) in elements.iter().enumerate() {
                    path.push(Seg::Index(i));
                    self.mutate(items, element, path, true, out);
                    path.pop();
                }
            }
            Shape::Object {
                properties,
                additional,
                rules,
            } => {
                let Value::Object(map) = value else { return };
                self.rule_mutations(properties, rules, map, path, out);
                let declared = |k: &str| properties.iter().any(|p| p.name == k);
                let mut unknown: Vec<String> = ODD_KEYS.iter().map(|k| (*k).to_owned()).collect();
                unknown.extend(self.names.iter().cloned());
                for p in properties {
                    let upper = p.name.to_uppercase();
                    if upper != p.name {
                        unknown.push(upper);
                    }
                    unknown.push(format!("{} ", p.name));
                }
                for key in unknown
                    .iter()
                    .filter(|k| !declared(k) && !map.contains_key(k.as_str()))
                {
                    path.push(Seg::Key(key.clone()));
                    let v = if self.rng.chance(1, 2) {
                        Value::from(1)
                    } else {
                        Value::from("x")
                    };
                    Self::set(out, path, "object:unknown field", v);
                    path.pop();
                }
                // What serde's derive takes for a struct, too: its members' values in order.
                let values = map.values().cloned().collect();
                Self::set(
                    out,
                    path,
                    "object:as array of its values",
                    Value::Array(values),
                );
                for p in properties {
                    path.push(Seg::Key(p.name.clone()));
                    match map.get(&p.name) {
                        Some(v) => {
                            let label = if p.required {
                                "object:missing required"
                            } else {
                                "object:omit optional"
                            };
                            Self::push(out, label, Op::Remove(path.clone()));
                            self.mutate(p.node, v, path, true, out);
                        }
                        None => {
                            let v = self.valid(p.node);
                            Self::set(out, path, "object:add optional", v.clone());
                            Self::set(out, path, "object:optional null", Value::Null);
                            Self::set(out, path, "object:optional wrong type", Value::from(1.5));
                        }
                    }
                    path.pop();
                }
                if let Some(extra) = *additional {
                    for (key, v) in map.iter().filter(|(k, _)| !declared(k)) {
                        path.push(Seg::Key(key.clone()));
                        Self::push(out, "map:remove entry", Op::Remove(path.clone()));
                        self.mutate(extra, v, path, true, out);
                        path.pop();
                    }
                }
            }
            Shape::Tuple { items, rest, .. } => {
                let Value::Array(elements) = value else {
                    return;
                };
                let mut items = items.clone();
                if let Some(rest) = rest {
                    let n = elements.len().saturating_sub(items.len());
                    items.extend(std::iter::repeat_n(*rest, n));
                    let mut longer = elements.clone();
                    longer.push(self.valid(*rest));
                    Self::set(out, path, "tuple:append valid", Value::Array(longer));
                }
                let mut shorter = elements.clone();
                shorter.pop();
                Self::set(out, path, "tuple:drop last", Value::Array(shorter));
                let mut longer = elements.clone();
                longer.push(Value::from(1));
                Self::set(out, path, "tuple:append", Value::Array(longer));
                let mut reversed = elements.clone();
                reversed.reverse();
                Self::set(out, path, "tuple:reversed", Value::Array(reversed));
                for (i, (element, item)) in elements.iter().zip(&items).enumerate() {
                    path.push(Seg::Index(i));
                    self.mutate(*item, element, path, true, out);
                    path.pop();
                }
            }
            Shape::Map {
                values,
                pattern,
                names,
                ..
            } => {
                let Value::Object(map) = value else { return };
                let (values, names) = (*values, *names);
                let mut bad_keys = vec![
                    String::new(),
                    "Z".repeat(40),
                    "x-".to_owned(),
                    " x".to_owned(),
                ];
                bad_keys.extend(ODD_KEYS.iter().map(|k| (*k).to_owned()));
                for key in bad_keys.into_iter().filter(|k| !map.contains_key(k)) {
                    path.push(Seg::Key(key));
                    let v = self.valid(values);
                    Self::set(out, path, "map:add entry", v);
                    path.pop();
                }
                for _ in 0..2 {
                    if let Some(key) = self.checked_key(pattern.as_ref(), names)
                        && !map.contains_key(&key)
                    {
                        path.push(Seg::Key(key));
                        let v = self.valid(values);
                        Self::set(out, path, "map:add valid entry", v);
                        path.pop();
                    }
                }
                for (key, v) in map {
                    path.push(Seg::Key(key.clone()));
                    Self::push(out, "map:remove entry", Op::Remove(path.clone()));
                    self.mutate(values, v, path, true, out);
                    path.pop();
                }
            }
            Shape::OneOf {
                branches,
                decision: Some(decision),
                ..
            } => {
                // Discriminated by tests of its members: each member a test reads as each other
                // JSON type, as each branch's valid member, and absent; each member the tests
                // ask for added and removed; then the edits of the branch the tests name.
                let Value::Object(map) = value else { return };
                for member in &decision.members {
                    path.push(Seg::Key(member.clone()));
                    for (label, w) in wrong_types() {
                        Self::set(out, path, format!("oneOf:member {label}"), w);
                    }
                    for (i, b) in branches.iter().enumerate() {
                        let Shape::Object { properties, .. } = self.shape(b.node) else {
                            continue;
                        };
                        if let Some(p) = properties.iter().find(|p| p.name == *member) {
                            let v = self.valid(p.node);
                            Self::set(out, path, format!("oneOf:member of branch {i}"), v);
                        }
                    }
                    if map.contains_key(member) {
                        Self::push(out, "oneOf:remove member", Op::Remove(path.clone()));
                    }
                    path.pop();
                }
                if let Ok(chosen) = decision.decide(&ValueFacts { map, decision }) {
                    self.mutate(branches[chosen].node, value, path, false, out);
                }
            }
            Shape::OneOf {
                discriminators,
                branches,
                ..
            } if discriminators.is_empty() => {
                // Discriminated by keys: another branch's own key added (keys of two branches),
                // each own key of this branch removed (maybe none left), then this branch's edits.
                let Value::Object(map) = value else { return };
                if let Some(chosen) = self.branch_keys(branches, map, path, out) {
                    self.mutate(branches[chosen].node, value, path, false, out);
                }
            }
            Shape::OneOf {
                discriminators,
                branches,
                ..
            } => {
                let Value::Object(map) = value else { return };
                // Per discriminator: each other tag of its branches (with one already present
                // for another, tags of two: no branch matches), wrong values, and its removal.
                for (p, discriminator) in discriminators.iter().enumerate() {
                    let tag = map.get(discriminator);
                    path.push(Seg::Key(discriminator.clone()));
                    // Every value of an `enum` tag: those of this branch are valid too.
                    for t in branches.iter().filter_map(|b| b.tag.as_ref()) {
                        for value in &t.values {
                            if t.property == p && !tag.is_some_and(|v| same_tag(v, value)) {
                                let label = match value {
                                    Value::String(s) => format!("oneOf:other branch tag {s:?}"),
                                    other => format!("oneOf:other branch tag {other}"),
                                };
                                Self::set(out, path, label, value.clone());
                            }
                        }
                    }
                    let mut wrong = vec![
                        Value::from("bogus"),
                        Value::from(""),
                        Value::Null,
                        Value::from(1),
                        Value::Bool(true),
                    ];
                    match tag {
                        Some(Value::String(t)) => {
                            wrong.push(Value::from(t.to_uppercase()));
                            wrong.push(Value::from(format!("{t} ")));
                            wrong.push(Value::from(format!("\u{3000}{t}")));
                        }
                        // An integer tag: written as a float (the same tag), as a string, and
                        // its neighbours.
                        Some(Value::Number(n)) if n.as_i64().is_some() => {
                            let i = n.as_i64().unwrap_or_default();
                            wrong.push(Value::from(i as f64));
                            wrong.push(Value::from(i.to_string()));
                            wrong.push(Value::from(i + 1));
                            wrong.push(Value::from(i - 1));
                            wrong.push(Value::from(i as f64 + 0.5));
                        }
                        Some(Value::Bool(b)) => wrong.push(Value::Bool(!b)),
                        _ => {}
                    }
                    for w in wrong {
                        Self::set(out, path, format!("oneOf:discriminator {w}"), w);
                    }
                    if tag.is_some() {
                        Self::push(out, "oneOf:remove discriminator", Op::Remove(path.clone()));
                    }
                    path.pop();
                }
                let present: Vec<usize> = (0..discriminators.len())
                    .filter(|p| map.contains_key(&discriminators[*p]))
                    .collect();
                // Discriminated by both: the keys of the branches without a tag, as above.
                if branches.iter().any(|b| !b.keys.is_empty()) {
                    let keyed = self.branch_keys(branches, map, path, out);
                    if present.is_empty() {
                        if let Some(chosen) = keyed {
                            self.mutate(branches[chosen].node, value, path, false, out);
                        }
                        return;
                    }
                }
                let chosen = match present[..] {
                    [] => branches.iter().find(|b| b.tag.is_none()),
                    [p] => branches.iter().find(|b| {
                        b.tag.as_ref().is_some_and(|t| {
                            t.property == p
                                && map
                                    .get(&discriminators[p])
                                    .is_some_and(|v| t.values.iter().any(|t| same_tag(v, t)))
                        })
                    }),
                    _ => None,
                };
                if let Some(branch) = chosen {
                    self.mutate(branch.node, value, path, false, out);
                }
            }
            Shape::Union(branches) => {
                // Another branch's valid value (valid), then the edits of the branch of this
                // value's type; the wrong types were set above.
                for b in branches {
                    if !b.kind.admits(value) {
                        let v = self.valid(b.node);
                        Self::set(out, path, format!("union:{}", b.kind.name()), v);
                    }
                }
                if let Some(b) = branches.iter().find(|b| b.kind.admits(value)) {
                    self.mutate(b.node, value, path, false, out);
                }
            }
            Shape::Nullable(inner) => {
                let inner = *inner;
                if value.is_null() {
                    // Mutate a non-null value in its place.
                    let v = self.valid(inner);
                    if !v.is_null() {
                        Self::set(out, path, "nullable:non-null", v.clone());
                        // Not again inside the replacement: in a recursive schema it has nulls
                        // of its own, whose replacements would have more, without end.
                        if self.replacing {
                            return;
                        }
                        let mut inner_out = Vec::new();
                        self.replacing = true;
                        self.mutate(inner, &v, path, false, &mut inner_out);
                        self.replacing = false;
                        // Each inner edit applies on top of the replacement.
                        for m in inner_out {
                            let mut replaced = v.clone();
                            let rel = m.op.path()[path.len()..].to_vec();
                            let rel_op = match &m.op {
                                Op::Set(_, x) => Op::Set(rel, x.clone()),
                                Op::Remove(_) => Op::Remove(rel),
                            };
                            if rel_op.apply(&mut replaced) {
                                Self::set(
                                    out,
                                    path,
                                    format!("nullable:non-null then {}", m.label),
                                    replaced,
                                );
                            }
                        }
                    }
                } else {
                    Self::set(out, path, "nullable:null", Value::Null);
                    self.mutate(inner, value, path, false, out);
                }
            }
            Shape::Ref(target) => self.mutate(*target, value, path, false, out),
        }
    }

    fn string_mutations(&mut self, lengths: Lengths, path: &[Seg], out: &mut Vec<Mutation>) {
        let mut cases: Vec<(String, String)> = vec![
            ("empty".into(), String::new()),
            ("space".into(), " ".into()),
            ("U+3000".into(), "\u{3000}".into()),
            ("U+001C".into(), "\u{1c}".into()),
            ("tab newline".into(), "\t\n\r".into()),
            ("all whitespace".into(), WHITESPACE.iter().collect()),
            ("padded".into(), "\u{3000} x \u{1c}".into()),
            ("zero-width space".into(), "\u{200b}".into()),
            ("BOM".into(), "\u{feff}".into()),
            ("NUL".into(), "\u{0}".into()),
            ("combining mark".into(), "\u{301}".into()),
            ("emoji".into(), "🦀".into()),
            ("CJK".into(), "日本語".into()),
            ("ZWJ".into(), "👩\u{200d}💻".into()),
            // Probes of regex classes ECMA-262 and other engines read differently.
            ("ASCII digits".into(), "42".into()),
            ("Arabic-Indic digit".into(), "\u{663}".into()),
            ("math digit".into(), "\u{1d7d8}".into()),
            ("underscore".into(), "_".into()),
            ("letter é".into(), "é".into()),
            ("titlecase ǅ".into(), "\u{1c5}".into()),
            ("lowercase then newline".into(), "abc\n".into()),
            ("newline then lowercase".into(), "\nabc".into()),
            ("lowercase".into(), "abc".into()),
            ("Kelvin sign".into(), "\u{212a}".into()),
        ];
        for c in WHITESPACE {
            cases.push((format!("whitespace U+{:04X}", *c as u32), c.to_string()));
        }
        // The neighbours of the whitespace ranges: not whitespace, so non-blank.
        let mut neighbours: Vec<char> = WHITESPACE
            .iter()
            .flat_map(|c| [*c as u32 - 1, *c as u32 + 1])
            .filter_map(char::from_u32)
            .filter(|c| !WHITESPACE.contains(c))
            .collect();
        neighbours.dedup();
        for c in neighbours {
            cases.push((
                format!("next to whitespace U+{:04X}", c as u32),
                c.to_string(),
            ));
        }
        let blank = |n: u64| -> String { WHITESPACE.iter().cycle().take(n as usize).collect() };
        if let Some(max) = lengths.max {
            cases.push((format!("max {max} CJK"), "日".repeat(max as usize)));
            cases.push((
                format!("max+1 {} CJK", max + 1),
                "日".repeat(max as usize + 1),
            ));
            cases.push((format!("max {max} emoji"), "😀".repeat(max as usize)));
            cases.push((
                format!("max+1 {} emoji", max + 1),
                "😀".repeat(max as usize + 1),
            ));
            cases.push((format!("max {max} mixed"), self.exact(max)));
            cases.push((format!("max+1 {} mixed", max + 1), self.exact(max + 1)));
            cases.push((
                format!("max {max} combining"),
                "e\u{301}".repeat(max as usize / 2) + "x".repeat(max as usize % 2).as_str(),
            ));
            cases.push((
                format!("max+1 {} combining", max + 1),
                "e\u{301}".repeat(max as usize / 2 + 1)
                    + "x".repeat((max as usize + 1) % 2).as_str(),
            ));
            cases.push((format!("max {max} ascii"), "a".repeat(max as usize)));
            cases.push((
                format!("max+1 {} ascii", max + 1),
                "a".repeat(max as usize + 1),
            ));
            cases.push((format!("max {max} blank"), blank(max)));
            cases.push((format!("max+1 {} blank", max + 1), blank(max + 1)));
        }
        if let Some(min) = lengths.min {
            cases.push((format!("min {min} emoji"), "😀".repeat(min as usize)));
            cases.push((format!("min {min} mixed"), self.exact(min)));
            cases.push((format!("min {min} blank"), blank(min)));
            if min > 0 {
                cases.push((
                    format!("min-1 {} emoji", min - 1),
                    "😀".repeat(min as usize - 1),
                ));
                cases.push((
                    format!("min-1 {} ascii", min - 1),
                    "a".repeat(min as usize - 1),
                ));
            }
        }
        for (label, s) in cases {
            Self::set(out, path, format!("string:{label}"), Value::String(s));
        }
    }

    /// Exactly `n` code points, mostly multi-byte.
    fn exact(&mut self, n: u64) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push(match i % 4 {
                0 => '日',
                1 => '😀',
                2 => 'é',
                _ => char::from(*self.rng.pick(b"abcxyz")),
            });
        }
        s
    }

    fn number_mutations(
        &mut self,
        b: &Bounds,
        integer: bool,
        path: &[Seg],
        out: &mut Vec<Mutation>,
    ) {
        let mut cases: Vec<(String, Value)> = vec![
            ("1.0".into(), float(1.0)),
            ("-0.0".into(), float(-0.0)),
            ("0.5".into(), float(0.5)),
            ("1e20".into(), float(1e20)),
            ("-1e20".into(), float(-1e20)),
            ("1e300".into(), float(1e300)),
            ("i64::MAX".into(), Value::from(i64::MAX)),
            ("i64::MIN".into(), Value::from(i64::MIN)),
            ("2^63".into(), Value::from(1u64 << 63)),
            ("u64::MAX".into(), Value::from(u64::MAX)),
            ("2^63 float".into(), float(9.223_372_036_854_776e18)),
            ("-2^63 float".into(), float(-9.223_372_036_854_776e18)),
            ("2^53+1".into(), Value::from((1i64 << 53) + 1)),
        ];
        let step = if integer { 1.0 } else { 0.5 };
        for (name, m) in [
            ("minimum", b.minimum),
            ("maximum", b.maximum),
            ("exclusiveMinimum", b.exclusive_minimum),
            ("exclusiveMaximum", b.exclusive_maximum),
        ] {
            let Some(m) = m else { continue };
            for (label, x) in [("at", m), ("below", m - step), ("above", m + step)] {
                cases.push((format!("{label} {name}"), float(x)));
                if x.fract() == 0.0 && x.abs() < 9e15 {
                    cases.push((format!("{label} {name} (int)"), Value::from(x as i64)));
                }
            }
        }
        for (label, v) in cases {
            Self::set(out, path, format!("number:{label}"), v);
        }
    }

    fn const_mutations(c: &Value, path: &[Seg], out: &mut Vec<Mutation>) {
        let mut wrong: Vec<Value> = Vec::new();
        match c {
            Value::String(s) => {
                wrong.push(Value::from(s.to_uppercase()));
                wrong.push(Value::from(format!("{s} ")));
                wrong.push(Value::from(format!("\u{3000}{s}")));
                wrong.push(Value::from(format!("{s}\u{0}")));
                wrong.push(Value::from(s.chars().skip(1).collect::<String>()));
                wrong.push(Value::from(format!("{s}x")));
                wrong.push(Value::Array(vec![c.clone()]));
                wrong.push(serde_json::json!({ s.as_str(): s }));
                // What serde's derive takes for a unit variant, too.
                wrong.push(serde_json::json!({ s.as_str(): null }));
            }
            Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    wrong.push(float(x + 1.0));
                    wrong.push(float(x + 1e-9));
                    wrong.push(Value::from(x.to_string()));
                }
            }
            other => wrong.push(Value::Array(vec![other.clone()])),
        }
        // JSON-equal spellings, which are not wrong: integers as floats, keys reordered.
        wrong.push(floated(c));
        if let Value::Object(map) = c {
            wrong.push(Value::Object(
                map.iter()
                    .rev()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ));
        }
        for w in wrong.into_iter().filter(|w| w != c) {
            Self::set(out, path, format!("const:{w}"), w);
        }
    }
}

/// How [`Spelling::write`] spells integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integers {
    /// `5`
    Plain,
    /// `5e0`, `-5E+0`: parsed as floats.
    Exponent,
    /// `5.0`, and `-0` for zero.
    Fraction,
}

/// Another way to write a document as JSON text than serde_json's, so byte-level parsers see
/// the same document (or, with a duplicate member, nearly the same) differently written.
#[derive(Debug, Clone)]
pub struct Spelling {
    /// `\u`-escape every non-ASCII and control character (surrogate pairs for astral ones).
    pub escape: bool,
    /// Insignificant whitespace written around members and elements.
    pub whitespace: &'static str,
    /// How integers are written.
    pub integers: Integers,
    /// An extra member written into the object at a path: `(object path, key, value, first)`;
    /// written before the object's own members when `first`, after them otherwise.
    pub duplicate: Option<(Vec<Seg>, String, Value, bool)>,
}

impl Spelling {
    /// serde_json's spelling.
    pub fn plain() -> Self {
        Spelling {
            escape: false,
            whitespace: "",
            integers: Integers::Plain,
            duplicate: None,
        }
    }

    /// `v` as JSON text.
    pub fn write(&self, v: &Value) -> String {
        let mut out = String::new();
        self.write_at(v, &mut Vec::new(), &mut out);
        out
    }

    fn string(&self, s: &str, out: &mut String) {
        if !self.escape {
            out.push_str(&Value::String(s.to_owned()).to_string());
            return;
        }
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
                c => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        let _ = write!(out, "\\u{unit:04X}");
                    }
                }
            }
        }
        out.push('"');
    }

    fn write_at(&self, v: &Value, path: &mut Vec<Seg>, out: &mut String) {
        let ws = self.whitespace;
        match v {
            Value::Number(n) => match (self.integers, n.as_i64()) {
                (Integers::Exponent, Some(i)) if i < 0 => {
                    let _ = write!(out, "{i}E+0");
                }
                (Integers::Exponent, Some(i)) => {
                    let _ = write!(out, "{i}e0");
                }
                (Integers::Fraction, Some(0)) => out.push_str("-0"),
                (Integers::Fraction, Some(i)) => {
                    let _ = write!(out, "{i}.0");
                }
                _ => out.push_str(&n.to_string()),
            },
            Value::String(s) => self.string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws);
                    path.push(Seg::Index(i));
                    self.write_at(item, path, out);
                    path.pop();
                }
                out.push_str(ws);
                out.push(']');
            }
            Value::Object(map) => {
                let mut members: Vec<(&String, &Value)> = map.iter().collect();
                if let Some((at, key, extra, first)) = &self.duplicate
                    && at == path
                {
                    members.insert(if *first { 0 } else { members.len() }, (key, extra));
                }
                out.push('{');
                for (i, (k, item)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws);
                    self.string(k, out);
                    out.push_str(ws);
                    out.push(':');
                    path.push(Seg::Key(k.clone()));
                    self.write_at(item, path, out);
                    path.pop();
                }
                out.push_str(ws);
                out.push('}');
            }
            Value::Null | Value::Bool(_) => out.push_str(&v.to_string()),
        }
    }
}

/// A document as bytes rather than a value.
#[derive(Debug, Clone)]
pub struct ByteDoc {
    /// What it is, for failure reports.
    pub label: String,
    /// The text (not necessarily JSON, not necessarily UTF-8).
    pub bytes: Vec<u8>,
    /// Parses to the valid document with one mutation applied.
    pub single: bool,
}

fn value_at<'v>(doc: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(doc, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Object(m)) => m.get(k),
        (Seg::Index(i), Value::Array(a)) => a.get(*i),
        _ => None,
    })
}

/// Byte-level variants of a valid document: other spellings of the same value; duplicate
/// members (every `every`-th replacing mutation written beside the member it replaces, before
/// it and after it: the last one wins); and malformed text.
pub fn byte_variants(doc: &Value, mutations: &[Mutation], every: usize) -> Vec<ByteDoc> {
    let mut out = Vec::new();
    let mut push = |label: String, bytes: Vec<u8>, single: bool| {
        out.push(ByteDoc {
            label,
            bytes,
            single,
        })
    };
    let spellings = [
        (
            "escaped, exponent integers",
            Spelling {
                escape: true,
                whitespace: " \n\t\r",
                integers: Integers::Exponent,
                duplicate: None,
            },
        ),
        (
            "fraction integers",
            Spelling {
                integers: Integers::Fraction,
                ..Spelling::plain()
            },
        ),
    ];
    for (label, spelling) in spellings {
        push(
            format!("bytes:{label}"),
            spelling.write(doc).into_bytes(),
            false,
        );
    }
    push(
        "bytes:pretty".into(),
        serde_json::to_vec_pretty(doc).expect("serialisable"),
        false,
    );
    let replacing = mutations.iter().filter_map(|m| match &m.op {
        Op::Set(path, v) => match path.split_last() {
            Some((Seg::Key(k), parent)) if value_at(doc, path).is_some() => Some((m, parent, k, v)),
            _ => None,
        },
        Op::Remove(_) => None,
    });
    for (m, parent, key, v) in replacing.step_by(every.max(1)) {
        let duplicate = |first| Spelling {
            duplicate: Some((parent.to_vec(), key.clone(), v.clone(), first)),
            ..Spelling::plain()
        };
        // The mutated value written after the original wins: the document is the mutation.
        push(
            format!("bytes:duplicate, original then {}", m.label),
            duplicate(false).write(doc).into_bytes(),
            true,
        );
        // Written before it, it loses: the document is the valid one.
        push(
            format!("bytes:duplicate, {} then original", m.label),
            duplicate(true).write(doc).into_bytes(),
            false,
        );
    }
    let body = serde_json::to_vec(doc).expect("serialisable");
    push(
        "bytes:truncated".into(),
        body[..body.len() - 1].to_vec(),
        false,
    );
    let mut trailing = body.clone();
    trailing.extend_from_slice(b" x");
    push("bytes:trailing garbage".into(), trailing, false);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&body);
    push("bytes:BOM".into(), bom, false);
    push(
        "bytes:lone surrogate".into(),
        b"{\"summary\":\"\\ud800\"}".to_vec(),
        false,
    );
    push(
        "bytes:invalid UTF-8".into(),
        b"{\"summary\":\"\xff\"}".to_vec(),
        false,
    );
    push("bytes:empty".into(), Vec::new(), false);
    if let Value::Object(_) = doc {
        // Nesting deeper than serde_json's limit (128) is malformed; within it, an unknown field.
        for depth in [100, 200] {
            let mut text = serde_json::to_string(doc).expect("serialisable");
            text.pop();
            let sep = if text.len() > 1 { "," } else { "" };
            let _ = write!(
                text,
                "{sep}\"deep\":{}{}}}",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            push(
                format!("bytes:nested {depth} deep"),
                text.into_bytes(),
                false,
            );
        }
    }
    out
}

/// The `examples` of the schema at `location` (`file#pointer`) of `set`, as written.
fn schema_examples(set: &SchemaSet, location: &str) -> Vec<Value> {
    let (file, pointer) = location.split_once('#').unwrap_or((location, ""));
    set.files
        .iter()
        .find(|f| f.file == file)
        .and_then(|f| serde_json::from_str::<Value>(&f.source).ok())
        .and_then(|doc| doc.pointer(pointer)?.get("examples")?.as_array().cloned())
        .unwrap_or_default()
}

/// True when `v` is the tag `tag` (JSON equality: `1.0` is `1`).
fn same_tag(v: &Value, tag: &Value) -> bool {
    match (v, tag) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => v == tag,
    }
}
