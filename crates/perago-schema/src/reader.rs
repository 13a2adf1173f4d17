//! Single-pass validation: a document is read straight from the parser into its typed value
//! while every violation is recorded, so an invalid document costs one parse, like a valid one.
//!
//! Generated [`Contract::read`](crate::Contract::read) implementations are built from the
//! [`Read`]s here. Each check reports exactly what the interpreter ([`crate::Validator`])
//! reports, in its order: strings, numbers and booleans are checked as the parser hands them
//! over, other scalars read as a `Value`, all with the same [`check`] functions; arrays, maps
//! and objects are read member by member, and [`Members`] puts what their members recorded
//! back into the interpreter's order (undeclared keys in document order, then declared
//! properties in schema order) whatever order the document has. A `oneOf` reads its
//! discriminator as the index of a tag ([`Tag`]; with several discriminators, or tags that
//! are integers or booleans, each as the index of its own tags, [`AnyTag`], which together
//! name the branch, [`Members::tagged`]), and chooses the branch by what they say, a
//! [`Discriminator`]; a key its branches check differently is read
//! with the chosen branch's check once the discriminator has been read, and before that kept
//! as JSON text ([`Members::capture`]) and read when the branch is known
//! ([`Members::settle`]), so no `Value` of it is built. A `oneOf` discriminated by keys decides
//! on the first key only one branch declares, and checks the choice at the end
//! ([`Members::decided`]). One discriminated by tests of its members (their JSON types, tags and
//! keys, one after another) keeps each member a test reads (and any key the branches check
//! differently) as text until the object is read, then walks the tests
//! ([`Members::decide`]) and reads them with the branch they name.
//!
//! The same checks read an already parsed `Value` (a `&Value` is a deserialiser), so a
//! generated type has this one validator whatever it is handed. A repeated key stops the
//! read with a data error, which [`Contract::from_slice`](crate::Contract::from_slice) reports
//! at its path as the strict parser does.

use crate::check::{self, Bounds, Lengths, Num, Out, Pattern};
use crate::path::Path;
use indexmap::IndexMap;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

/// A set of an object's keys, to find a repeated one (foldhash: no SipHash on this path).
type KeySet<T> = HashSet<T, foldhash::fast::RandomState>;

/// One schema node's rules, read from a deserialiser.
pub trait Read {
    /// The typed value.
    type Value;

    /// Reads one value, recording every violation at or below `path`; returns the typed value
    /// only when it recorded none. Errors are the parser's, or a repeated key.
    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error>;
}

/// serde's `Deserialize` of a generated type: the value `check` reads, or its violations as
/// the deserialiser's error.
pub fn deserialize<'de, D: Deserializer<'de>, C: Read>(
    d: D,
    check: &C,
) -> Result<C::Value, D::Error> {
    let mut out = Vec::new();
    match check.read(d, &Path::Root, &mut out)? {
        Some(value) if out.is_empty() => Ok(value),
        _ => Err(de::Error::custom(crate::Violations::new(out))),
    }
}

/// The value `check` reads from `json`: a schema's `default`, which the generator checked.
pub fn from_json<C: Read>(json: &str, check: &C) -> Option<C::Value> {
    let value: Value = serde_json::from_str(json).ok()?;
    deserialize(&value, check).ok()
}

/// A [`Read`] at a path, as a serde seed.
#[derive(Debug)]
pub struct Seed<'a, 'p, C> {
    check: &'a C,
    path: &'a Path<'p>,
    out: &'a mut Out,
}

impl<'a, 'p, C> Seed<'a, 'p, C> {
    /// Runs `check` at `path`, recording into `out`.
    pub fn new(check: &'a C, path: &'a Path<'p>, out: &'a mut Out) -> Self {
        Seed { check, path, out }
    }
}

impl<'de, C: Read> DeserializeSeed<'de> for Seed<'_, '_, C> {
    type Value = Option<C::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.check.read(d, self.path, self.out)
    }
}

/// The error that stops a read at a repeated key.
pub fn repeated_key<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("repeated key {key:?}"))
}

/// A scalar check: read a `Value` and run the keyword's [`check`] function on it.
macro_rules! scalar {
    ($ty:ty => $value:ty, |$this:ident, $v:ident, $path:ident, $out:ident| $body:expr) => {
        impl Read for $ty {
            type Value = $value;

            fn read<'de, D: Deserializer<'de>>(
                &self,
                d: D,
                $path: &Path<'_>,
                $out: &mut Out,
            ) -> Result<Option<$value>, D::Error> {
                let $this = self;
                let $v = crate::json::value(d)?;
                Ok($body)
            }
        }
    };
}

/// `{}`: any value.
#[derive(Debug, Clone, Copy)]
pub struct AnyValue;
scalar!(AnyValue => Value, |_this, v, _path, _out| Some(v));

/// `type: null`
#[derive(Debug, Clone, Copy)]
pub struct Null;
scalar!(Null => (), |_this, v, path, out| check::null(&v, path, out));

/// A number or boolean check: the value of its type is checked as the parser hands it over,
/// without a `Value`; a value of another type is read whole for the type error.
macro_rules! native {
    ($ty:ty => $value:ty, $hook:ident($arg:ident: $arg_ty:ty),
     |$this:ident, $path:ident, $out:ident| native $on_native:expr, other |$found:ident| $on_other:expr) => {
        impl Read for $ty {
            type Value = $value;

            fn read<'de, D: Deserializer<'de>>(
                &self,
                d: D,
                path: &Path<'_>,
                out: &mut Out,
            ) -> Result<Option<$value>, D::Error> {
                struct B<'a, 'p>(&'a $ty, &'a Path<'p>, &'a mut Out);
                impl<'de> Body<'de> for B<'_, '_> {
                    type Value = $value;
                    fn other(self, $found: Value) -> Option<$value> {
                        let B($this, $path, $out) = self;
                        $on_other
                    }
                    fn $hook(self, $arg: $arg_ty) -> Option<$value> {
                        let B($this, $path, $out) = self;
                        $on_native
                    }
                }
                read_body(d, B(self, path, out))
            }
        }
    };
}

/// `type: boolean`
#[derive(Debug, Clone, Copy)]
pub struct Boolean;
native!(Boolean => bool, boolean(b: bool),
    |_this, _path, _out| native Some(b),
    other |found| check::boolean(&found, _path, _out));

/// `type: integer` and its bounds.
#[derive(Debug, Clone, Copy)]
pub struct Integer(pub Bounds);
native!(Integer => i64, number(n: Num),
    |this, path, out| native check::integer_num(n, path, out, &this.0),
    other |found| check::integer(&found, path, out, &this.0));

/// `type: number` and its bounds.
#[derive(Debug, Clone, Copy)]
pub struct Number(pub Bounds);
native!(Number => f64, number(n: Num),
    |this, path, out| native check::number_num(n, path, out, &this.0),
    other |found| check::number(&found, path, out, &this.0));

/// `type: string` and its rules.
#[derive(Debug, Clone, Copy)]
pub struct Str<'a> {
    /// `minLength` / `maxLength`
    pub lengths: Lengths,
    /// `pattern`
    pub pattern: Option<&'a Pattern>,
}

/// A string `const`.
#[derive(Debug, Clone, Copy)]
pub struct ConstStr<'a>(pub &'a str);

/// An `enum` of strings: the index of the value.
#[derive(Debug, Clone, Copy)]
pub struct StrEnum<'a>(pub &'a [&'a str]);

/// A string check: strings are checked as the parser hands them over, without a `Value`.
macro_rules! text {
    ($ty:ident => $value:ty,
     str |$this:ident, $s:ident, $path:ident, $out:ident| $on_str:expr,
     other |$found:ident| $on_other:expr) => {
        impl Read for $ty<'_> {
            type Value = $value;

            fn read<'de, D: Deserializer<'de>>(
                &self,
                d: D,
                path: &Path<'_>,
                out: &mut Out,
            ) -> Result<Option<$value>, D::Error> {
                struct B<'a, 'b, 'p>(&'a $ty<'b>, &'a Path<'p>, &'a mut Out);
                impl<'de> Body<'de> for B<'_, '_, '_> {
                    type Value = $value;
                    fn other(self, $found: Value) -> Option<$value> {
                        let B($this, $path, $out) = self;
                        $on_other
                    }
                    fn str<E: de::Error>(self, $s: &str) -> Result<Option<$value>, E> {
                        let B($this, $path, $out) = self;
                        Ok($on_str)
                    }
                }
                read_body(d, B(self, path, out))
            }
        }
    };
}

text!(Str => String,
    str |this, s, path, out| check::string_rules(s, path, out, &this.lengths, this.pattern).then(|| s.to_owned()),
    other |found| check::string(&found, path, out, &this.lengths, this.pattern).map(str::to_owned));
text!(ConstStr => (),
    str |this, s, path, out| check::const_text(Some(s), path, out, this.0).then_some(()),
    other |found| check::const_str(&found, path, out, this.0).then_some(()));
text!(StrEnum => usize,
    str |this, s, path, out| check::enum_text(Some(s), path, out, this.0),
    other |found| check::string_enum(&found, path, out, this.0));

/// A `oneOf`'s discriminator: the index of the tag among `.0` the value is, `None` for any
/// other value. It records nothing: a discriminator that names no branch is the `oneOf`'s to
/// report, and a branch's own `const` check passes on its tag.
#[derive(Debug, Clone, Copy)]
pub struct Tag<'a>(pub &'a [&'a str]);

impl Read for Tag<'_> {
    type Value = Option<usize>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        _path: &Path<'_>,
        _out: &mut Out,
    ) -> Result<Option<Option<usize>>, D::Error> {
        struct B<'a>(&'a [&'a str]);
        impl<'de> Body<'de> for B<'_> {
            type Value = Option<usize>;
            fn other(self, _found: Value) -> Option<Option<usize>> {
                Some(None)
            }
            fn str<E: de::Error>(self, s: &str) -> Result<Option<Option<usize>>, E> {
                Ok(Some(self.0.iter().position(|t| *t == s)))
            }
        }
        read_body(d, B(self.0))
    }
}

/// A discriminator of a `oneOf` whose tags are not all strings, or that has several: the
/// index of the tag among `.0` the value is (JSON equality: `1.0` is `1`), `None` for any
/// other value. It records nothing, as [`Tag`].
#[derive(Debug, Clone, Copy)]
pub struct AnyTag<'a>(pub &'a [check::TagValue<'a>]);

impl Read for AnyTag<'_> {
    type Value = Option<usize>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        _path: &Path<'_>,
        _out: &mut Out,
    ) -> Result<Option<Option<usize>>, D::Error> {
        struct B<'a>(&'a [check::TagValue<'a>]);
        impl<'de> Body<'de> for B<'_> {
            type Value = Option<usize>;
            fn other(self, _found: Value) -> Option<Option<usize>> {
                Some(None)
            }
            fn str<E: de::Error>(self, s: &str) -> Result<Option<Option<usize>>, E> {
                Ok(Some(
                    self.0.iter().position(|t| *t == check::TagValue::Str(s)),
                ))
            }
            fn number(self, n: Num) -> Option<Option<usize>> {
                Some(self.0.iter().position(|t| t.is_number(n)))
            }
            fn boolean(self, b: bool) -> Option<Option<usize>> {
                Some(self.0.iter().position(|t| *t == check::TagValue::Bool(b)))
            }
        }
        read_body(d, B(self.0))
    }
}

/// What a `oneOf`'s discriminators say of its branch: one discriminator's ([`tag_of`] its
/// slot), or all of a `oneOf`'s together ([`tagged`], [`Members::tagged`]). Generated readers
/// `match` on it to choose the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discriminator {
    /// Not present (so far).
    Absent,
    /// Present, and naming no branch: a value that is none of the tags, or (together) several
    /// discriminators.
    Unknown,
    /// The tag with this index: among the discriminator's own tags, or (together) among all
    /// of them, each discriminator's counted after the previous ones'.
    Tag(usize),
}

impl Discriminator {
    /// The branch a `oneOf` decided by keys has chosen so far, its index standing for its
    /// tag: `Absent` before any key that decides.
    #[inline]
    pub fn branch(decided: Option<usize>) -> Discriminator {
        decided.map_or(Discriminator::Absent, Discriminator::Tag)
    }
}

/// What a `oneOf`'s discriminator slot, read with [`Tag`] or [`AnyTag`], says so far.
#[inline]
pub fn tag_of(slot: &Slot<Option<usize>>) -> Discriminator {
    match slot {
        None => Discriminator::Absent,
        Some(Some(Some(i))) => Discriminator::Tag(*i),
        Some(_) => Discriminator::Unknown,
    }
}

/// What the discriminators of a `oneOf` read so far say together (`found`: each one's
/// [`tag_of`]; `tags`: each one's tags).
#[inline]
pub fn tagged(found: &[Discriminator], tags: &[&[check::TagValue<'_>]]) -> Discriminator {
    match Tagged::of(found, tags) {
        Tagged::Absent => Discriminator::Absent,
        Tagged::Branch(b) => Discriminator::Tag(b),
        Tagged::Unknown(_) | Tagged::Several => Discriminator::Unknown,
    }
}

/// What the discriminators of a `oneOf` say, and when they name no branch, why (for the
/// report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tagged {
    /// No discriminator is present.
    Absent,
    /// One is, and names the branch with this index among all the tags (each
    /// discriminator's counted after the previous ones').
    Branch(usize),
    /// Only the discriminator with this index is present, and its value names no branch.
    Unknown(usize),
    /// Several discriminators are present: no branch declares two of them.
    Several,
}

impl Tagged {
    /// From what was `found` of each discriminator, whose tags are `tags`.
    fn of(found: &[Discriminator], tags: &[&[check::TagValue<'_>]]) -> Tagged {
        let mut present = found
            .iter()
            .enumerate()
            .filter(|(_, f)| **f != Discriminator::Absent);
        let Some((p, tag)) = present.next() else {
            return Tagged::Absent;
        };
        if present.next().is_some() {
            return Tagged::Several;
        }
        match tag {
            Discriminator::Tag(j) => {
                Tagged::Branch(tags[..p].iter().map(|t| t.len()).sum::<usize>() + j)
            }
            _ => Tagged::Unknown(p),
        }
    }
}

/// A `const` of another type.
#[derive(Debug, Clone, Copy)]
pub struct ConstValue<'a>(pub &'a Value);
scalar!(ConstValue<'_> => Value, |this, v, path, out| check::const_value(&v, path, out, this.0).then_some(v));

/// An `enum` of arbitrary values.
#[derive(Debug, Clone, Copy)]
pub struct ValueEnum<'a>(pub &'a [Value]);
scalar!(ValueEnum<'_> => Value, |this, v, path, out| check::value_enum(&v, path, out, this.0).then_some(v));

/// An `enum` of strings, integers, booleans and `null` (a generated Rust enum): the index of
/// the value, found as JSON equality finds it (`1.0` is `1`).
#[derive(Debug, Clone, Copy)]
pub struct LiteralEnum<'a>(pub &'a [Value]);
scalar!(LiteralEnum<'_> => usize, |this, v, path, out| {
    match this.0.iter().position(|a| check::json_equal(&v, a)) {
        Some(i) => Some(i),
        None => {
            check::value_enum(&v, path, out, this.0);
            None
        }
    }
});

/// A string read by `check`, then into a typed format (`crate::types`) by `parse`; a string
/// `parse` cannot read is `format`'s violation.
#[derive(Clone, Copy)]
pub struct Parsed<C, T> {
    /// The string's check, its `format` among its rules.
    pub check: C,
    /// The format.
    pub format: check::Format,
    /// The typed value of a string the check accepted.
    pub parse: fn(&str) -> Option<T>,
}

impl<C, T> fmt::Debug for Parsed<C, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parsed({:?})", self.format)
    }
}

impl<C: Read<Value = String>, T> Read for Parsed<C, T> {
    type Value = T;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<T>, D::Error> {
        let Some(s) = self.check.read(d, path, out)? else {
            return Ok(None);
        };
        let parsed = (self.parse)(&s);
        if parsed.is_none() {
            check::push(out, path, crate::Code::Format, self.format.message());
        }
        Ok(parsed)
    }
}

/// `type: [T, "null"]`: `null`, or a value `T` admits.
#[derive(Debug, Clone, Copy)]
pub struct Nullable<C>(pub C);

impl<C: Read> Read for Nullable<C> {
    type Value = Option<C::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        struct V<'a, 'p, C>(Seed<'a, 'p, C>);
        impl<'de, C: Read> Visitor<'de> for V<'_, '_, C> {
            type Value = Option<Option<C::Value>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Some(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Some(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Ok(self.0.deserialize(d)?.map(Some))
            }
        }
        d.deserialize_option(V(Seed::new(&self.0, path, out)))
    }
}

/// A named type's own read ([`Contract::read`](crate::Contract::read)).
pub struct Typed<T>(PhantomData<fn() -> T>);

impl<T> Typed<T> {
    /// The check of `T`.
    pub const fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<T> fmt::Debug for Typed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Typed<{}>", std::any::type_name::<T>())
    }
}

impl<T> Default for Typed<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: crate::Contract> Read for Typed<T> {
    type Value = T;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<T>, D::Error> {
        T::read(d, path, out)
    }
}

/// A check whose typed value is turned into another type (a named constant or enum, a box).
#[derive(Debug, Clone, Copy)]
pub struct Then<C, F>(pub C, pub F);

impl<C: Read, T, F: Fn(C::Value) -> T> Read for Then<C, F> {
    type Value = T;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<T>, D::Error> {
        Ok(self.0.read(d, path, out)?.map(&self.1))
    }
}

/// What reads a container: its native JSON type, natively; any other value is read whole and
/// handed to the scalar check, which reports the type error.
pub trait Body<'de>: Sized {
    /// The typed value.
    type Value;

    /// Reports a value of the wrong JSON type.
    fn other(self, found: Value) -> Option<Self::Value>;

    /// Reads a string.
    fn str<E: de::Error>(self, s: &str) -> Result<Option<Self::Value>, E> {
        Ok(self.other(Value::from(s)))
    }

    /// Reads a number.
    fn number(self, n: Num) -> Option<Self::Value> {
        self.other(match n {
            Num::U(u) => Value::from(u),
            Num::I(i) => Value::from(i),
            Num::F(f) => Value::from(f),
        })
    }

    /// Reads a boolean.
    fn boolean(self, b: bool) -> Option<Self::Value> {
        self.other(Value::Bool(b))
    }

    /// Reads an array.
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Self::Value>, A::Error> {
        let found = crate::json::value(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(self.other(found))
    }

    /// Reads an object.
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Self::Value>, A::Error> {
        let found = crate::json::value(de::value::MapAccessDeserializer::new(map))?;
        Ok(self.other(found))
    }
}

/// Reads one value with `body`.
pub fn read_body<'de, D: Deserializer<'de>, B: Body<'de>>(
    d: D,
    body: B,
) -> Result<Option<B::Value>, D::Error> {
    d.deserialize_any(BodyVisitor(body))
}

struct BodyVisitor<B>(B);

impl<'de, B: Body<'de>> Visitor<'de> for BodyVisitor<B> {
    type Value = Option<B::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(self.0.boolean(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        // As a `Value` has it: a non-negative integer is unsigned.
        Ok(self.0.number(u64::try_from(v).map_or(Num::I(v), Num::U)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(self.0.number(Num::U(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // The parser hands over finite numbers only; anything else reads as a `Value` would.
        if !v.is_finite() {
            return Ok(self.0.other(Value::from(v)));
        }
        Ok(self.0.number(Num::F(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.str(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.other(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.map(map)
    }
}

/// `type: array` with `items`, `minItems` and `maxItems`.
#[derive(Debug, Clone, Copy)]
pub struct Array<C> {
    /// `items`
    pub items: C,
    /// `minItems`
    pub min: Option<u64>,
    /// `maxItems`
    pub max: Option<u64>,
}

impl<C: Read> Read for Array<C> {
    type Value = Vec<C::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        read_body(d, ArrayBody(self, path, out))
    }
}

struct ArrayBody<'a, 'p, C>(&'a Array<C>, &'a Path<'p>, &'a mut Out);

impl<'de, C: Read> Body<'de> for ArrayBody<'_, '_, C> {
    type Value = Vec<C::Value>;

    fn other(self, found: Value) -> Option<Self::Value> {
        let ArrayBody(array, path, out) = self;
        check::array(&found, path, out, array.min, array.max);
        None
    }

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Self::Value>, A::Error> {
        let ArrayBody(array, path, out) = self;
        let before = out.len();
        let mut typed = Vec::new();
        let mut ok = true;
        let mut i = 0;
        while let Some(item) =
            seq.next_element_seed(Seed::new(&array.items, &path.index(i), out))?
        {
            match item {
                Some(x) => typed.push(x),
                None => ok = false,
            }
            i += 1;
        }
        let items_end = out.len();
        ok &= check::item_count(i as u64, path, out, array.min, array.max);
        // The interpreter reports the count before the items.
        let counted = out.len() - items_end;
        out[before..].rotate_right(counted);
        Ok(ok.then_some(typed))
    }
}

/// `prefixItems` closed, by `items: false` or by a `maxItems` of their count: a fixed tuple.
/// `items` is a tuple of checks, one per position; the count is reported before the items.
#[derive(Debug, Clone, Copy)]
pub struct Tuple<C> {
    /// The checks of the positions, as a Rust tuple.
    pub items: C,
    /// `minItems`
    pub min: Option<u64>,
    /// `maxItems`
    pub max: Option<u64>,
    /// `items: false`: each item beyond the positions is not allowed. Otherwise (no `items`,
    /// and `maxItems` their count, as Pydantic closes a tuple) only the count refuses them.
    pub items_false: bool,
}

/// The checks of a [`Tuple`]'s positions.
pub trait Positions {
    /// The typed tuple.
    type Value;

    /// Reads the positions' items from `seq`: the typed tuple when all were there and valid,
    /// and how many items were read.
    fn read_items<'de, A: SeqAccess<'de>>(
        &self,
        seq: &mut A,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<(Option<Self::Value>, u64), A::Error>;
}

macro_rules! positions {
    ($(($i:tt $c:ident $x:ident))+) => {
        impl<$($c: Read),+> Positions for ($($c,)+) {
            type Value = ($($c::Value,)+);

            fn read_items<'de, A: SeqAccess<'de>>(
                &self,
                seq: &mut A,
                path: &Path<'_>,
                out: &mut Out,
            ) -> Result<(Option<Self::Value>, u64), A::Error> {
                let mut n = 0;
                $(
                    let Some($x) = seq.next_element_seed(Seed::new(&self.$i, &path.index($i), out))? else {
                        return Ok((None, n));
                    };
                    n += 1;
                )+
                let typed = (|| Some(($($x?,)+)))();
                Ok((typed, n))
            }
        }
    };
}

positions!((0 C0 x0));
positions!((0 C0 x0) (1 C1 x1));
positions!((0 C0 x0) (1 C1 x1) (2 C2 x2));
positions!((0 C0 x0) (1 C1 x1) (2 C2 x2) (3 C3 x3));
positions!((0 C0 x0) (1 C1 x1) (2 C2 x2) (3 C3 x3) (4 C4 x4));
positions!((0 C0 x0) (1 C1 x1) (2 C2 x2) (3 C3 x3) (4 C4 x4) (5 C5 x5));

impl<C: Positions> Read for Tuple<C> {
    type Value = C::Value;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        read_body(d, TupleBody(self, path, out))
    }
}

struct TupleBody<'a, 'p, C>(&'a Tuple<C>, &'a Path<'p>, &'a mut Out);

impl<'de, C: Positions> Body<'de> for TupleBody<'_, '_, C> {
    type Value = C::Value;

    fn other(self, found: Value) -> Option<Self::Value> {
        let TupleBody(tuple, path, out) = self;
        check::array(&found, path, out, tuple.min, tuple.max);
        None
    }

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Self::Value>, A::Error> {
        let TupleBody(tuple, path, out) = self;
        let before = out.len();
        let (typed, mut n) = tuple.items.read_items(&mut seq, path, out)?;
        while seq.next_element_seed(crate::json::StrictValue)?.is_some() {
            if tuple.items_false {
                check::not_allowed(&path.index(n as usize), out);
            }
            n += 1;
        }
        count_first(n, path, out, before, tuple.min, tuple.max);
        Ok(typed.filter(|_| out.len() == before))
    }
}

/// Checks the count of `n` items, reported before what the items recorded from `before` on,
/// as the interpreter reports it.
fn count_first(
    n: u64,
    path: &Path<'_>,
    out: &mut Out,
    before: usize,
    min: Option<u64>,
    max: Option<u64>,
) {
    let items_end = out.len();
    check::item_count(n, path, out, min, max);
    let counted = out.len() - items_end;
    out[before..].rotate_right(counted);
}

/// `prefixItems` with `items` for the rest: a tuple and the items after it.
#[derive(Debug, Clone, PartialEq)]
pub struct TupleRest<P, R> {
    /// The tuple's items.
    pub items: P,
    /// The items after them.
    pub rest: Vec<R>,
}

/// The positions of a tuple, written one after the other into a JSON array.
pub trait SerializePositions {
    /// How many there are.
    const LEN: usize;
    /// Writes each as an element of `seq`.
    fn serialize_positions<S: serde::ser::SerializeSeq>(&self, seq: &mut S)
    -> Result<(), S::Error>;
}

macro_rules! serialize_positions {
    ($n:literal: $(($i:tt $t:ident))+) => {
        impl<$($t: serde::Serialize),+> SerializePositions for ($($t,)+) {
            const LEN: usize = $n;
            fn serialize_positions<S: serde::ser::SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
                $(seq.serialize_element(&self.$i)?;)+
                Ok(())
            }
        }
    };
}

serialize_positions!(1: (0 T0));
serialize_positions!(2: (0 T0) (1 T1));
serialize_positions!(3: (0 T0) (1 T1) (2 T2));
serialize_positions!(4: (0 T0) (1 T1) (2 T2) (3 T3));
serialize_positions!(5: (0 T0) (1 T1) (2 T2) (3 T3) (4 T4));
serialize_positions!(6: (0 T0) (1 T1) (2 T2) (3 T3) (4 T4) (5 T5));

impl<P: SerializePositions, R: serde::Serialize> serde::Serialize for TupleRest<P, R> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(P::LEN + self.rest.len()))?;
        self.items.serialize_positions(&mut seq)?;
        for item in &self.rest {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

/// `prefixItems` with `items` for the rest.
#[derive(Debug, Clone, Copy)]
pub struct TupleWithRest<C, R> {
    /// The checks of the positions, as a Rust tuple.
    pub items: C,
    /// `items`: the check of every item after them.
    pub rest: R,
    /// `minItems`
    pub min: Option<u64>,
    /// `maxItems`
    pub max: Option<u64>,
}

impl<C: Positions, R: Read> Read for TupleWithRest<C, R> {
    type Value = TupleRest<C::Value, R::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        read_body(d, TupleRestBody(self, path, out))
    }
}

struct TupleRestBody<'a, 'p, C, R>(&'a TupleWithRest<C, R>, &'a Path<'p>, &'a mut Out);

impl<'de, C: Positions, R: Read> Body<'de> for TupleRestBody<'_, '_, C, R> {
    type Value = TupleRest<C::Value, R::Value>;

    fn other(self, found: Value) -> Option<Self::Value> {
        let TupleRestBody(tuple, path, out) = self;
        check::array(&found, path, out, tuple.min, tuple.max);
        None
    }

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Self::Value>, A::Error> {
        let TupleRestBody(tuple, path, out) = self;
        let before = out.len();
        let (typed, mut n) = tuple.items.read_items(&mut seq, path, out)?;
        let mut rest = Vec::new();
        let mut ok = true;
        while let Some(item) =
            seq.next_element_seed(Seed::new(&tuple.rest, &path.index(n as usize), out))?
        {
            match item {
                Some(x) => rest.push(x),
                None => ok = false,
            }
            n += 1;
        }
        count_first(n, path, out, before, tuple.min, tuple.max);
        Ok(typed
            .filter(|_| ok && out.len() == before)
            .map(|items| TupleRest { items, rest }))
    }
}

/// `additionalProperties` as the only rule: a map from keys to values the check admits.
#[derive(Debug, Clone, Copy)]
pub struct Map<C>(pub C);

impl<C: Read> Read for Map<C> {
    type Value = IndexMap<String, C::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        read_body(d, MapBody(self, path, out))
    }
}

struct MapBody<'a, 'p, C>(&'a Map<C>, &'a Path<'p>, &'a mut Out);

impl<'de, C: Read> Body<'de> for MapBody<'_, '_, C> {
    type Value = IndexMap<String, C::Value>;

    fn other(self, found: Value) -> Option<Self::Value> {
        check::object(&found, self.1, self.2);
        None
    }

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Self::Value>, A::Error> {
        let MapBody(check, path, out) = self;
        let mut entries = Entries::default();
        while let Some(key) = map.next_key::<String>()? {
            entries.read(&mut map, key, &check.0, path, out)?;
        }
        entries.finish()
    }
}

/// A map whose keys are checked too: each value by `values` (when `pattern`, only keys it
/// matches; the others are unknown), then every key by `names` (`propertyNames`), then the
/// number of entries, in the interpreter's order.
#[derive(Debug, Clone, Copy)]
pub struct CheckedMap<'a, C, N> {
    /// The values' check.
    pub values: C,
    /// The one `patternProperties` pattern.
    pub pattern: Option<&'a Pattern>,
    /// `propertyNames`
    pub names: Option<N>,
    /// `minProperties`
    pub min: Option<u64>,
    /// `maxProperties`
    pub max: Option<u64>,
}

impl<C: Read, N: Read> Read for CheckedMap<'_, C, N> {
    type Value = IndexMap<String, C::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        read_body(d, CheckedMapBody(self, path, out))
    }
}

struct CheckedMapBody<'a, 'b, 'p, C, N>(&'a CheckedMap<'b, C, N>, &'a Path<'p>, &'a mut Out);

impl<'de, C: Read, N: Read> Body<'de> for CheckedMapBody<'_, '_, '_, C, N> {
    type Value = IndexMap<String, C::Value>;

    fn other(self, found: Value) -> Option<Self::Value> {
        check::object(&found, self.1, self.2);
        None
    }

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Self::Value>, A::Error> {
        let CheckedMapBody(check, path, out) = self;
        let before = out.len();
        let mut entries = Entries::default();
        let mut unknown = KeySet::default();
        let mut keys = Vec::new();
        let mut count = 0u64;
        while let Some(key) = map.next_key::<String>()? {
            count += 1;
            if check.names.is_some() {
                keys.push(key.clone());
            }
            if check.pattern.is_none_or(|p| p.is_match(&key)) {
                entries.read(&mut map, key, &check.values, path, out)?;
            } else {
                if entries.typed.contains_key(&key) || !unknown.insert(key.clone()) {
                    return Err(repeated_key(&key));
                }
                map.next_value_seed(crate::json::StrictValue)?;
                check::unknown_field(&path.key(&key), out);
            }
        }
        if let Some(key) = entries
            .invalid
            .iter()
            .find(|k| unknown.contains(k.as_str()))
        {
            return Err(repeated_key(key));
        }
        let entries = entries.finish()?;
        if let Some(names) = &check.names {
            for key in &keys {
                let start = out.len();
                let name = Value::String(key.clone());
                names
                    .read(&name, &path.key(key), out)
                    .map_err(de::Error::custom)?;
                check::property_name(key, out, start);
            }
        }
        check::property_count(count, path, out, check.min, check.max);
        Ok(entries.filter(|_| out.len() == before))
    }
}

/// A map read with string keys, keyed by the enum its `propertyNames` names instead (a
/// `dict[Currency, int]`): each key is the value of `all` whose `name` it is, as the
/// `propertyNames` check has made sure.
pub fn keyed<K: Copy + std::hash::Hash + Eq, V>(
    map: IndexMap<String, V>,
    all: &[K],
    name: fn(&K) -> &'static str,
) -> IndexMap<K, V> {
    map.into_iter()
        .filter_map(|(key, value)| Some((*all.iter().find(|k| name(k) == key)?, value)))
        .collect()
}

/// The entries of a map being read.
#[derive(Debug)]
pub struct Entries<T> {
    /// The valid ones.
    typed: IndexMap<String, T>,
    /// The keys of the invalid ones.
    invalid: Vec<String>,
}

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Entries {
            typed: IndexMap::new(),
            invalid: Vec::new(),
        }
    }
}

impl<T> Entries<T> {
    /// Reads the value of entry `key` with `check`.
    pub fn read<'de, A: MapAccess<'de>, C: Read<Value = T>>(
        &mut self,
        map: &mut A,
        key: String,
        check: &C,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<(), A::Error> {
        let value = map.next_value_seed(Seed::new(check, &path.key(&key), out))?;
        match value {
            Some(x) => {
                let (i, previous) = self.typed.insert_full(key, x);
                if previous.is_some() {
                    return Err(repeated_key(
                        self.typed.get_index(i).map_or("", |(k, _)| k.as_str()),
                    ));
                }
            }
            None => self.invalid.push(key),
        }
        Ok(())
    }

    /// The typed map, when every entry was valid; an error at a repeated key.
    pub fn finish<E: de::Error>(self) -> Result<Option<IndexMap<String, T>>, E> {
        let Entries { typed, invalid } = self;
        let mut seen = KeySet::default();
        if let Some(key) = invalid
            .iter()
            .find(|k| typed.contains_key(k.as_str()) || !seen.insert(k.as_str()))
        {
            return Err(repeated_key(key));
        }
        Ok(invalid.is_empty().then_some(typed))
    }
}

/// A key of an object with declared properties.
#[derive(Debug)]
pub enum Key {
    /// The declared property with this index.
    Declared(usize),
    /// Any other key.
    Other(String),
}

/// Reads a key, distinguishing declared properties with the generator's `match` on the key
/// (`F`: the index of a declared key), without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Keys<F>(pub F);

impl<'de, F: FnOnce(&str) -> Option<usize>> DeserializeSeed<'de> for Keys<F> {
    type Value = Key;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, F: FnOnce(&str) -> Option<usize>> Visitor<'de> for Keys<F> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    #[inline]
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
        Ok(match (self.0)(s) {
            Some(i) => Key::Declared(i),
            None => Key::Other(s.to_owned()),
        })
    }
}

/// Where the members of an object being read were and what they recorded, so that
/// [`finish`](Members::finish) can report in the interpreter's order. `N` is the number of declared
/// keys (every branch's, for a `oneOf`).
#[derive(Debug)]
pub struct Members<'k, const N: usize> {
    keys: &'k [&'k str; N],
    /// `out.len()` when the object started.
    before: usize,
    /// Members read so far.
    count: u32,
    /// Each declared key's position among the members, `u32::MAX` while absent.
    at: [u32; N],
    /// The range of `out` each declared key's value recorded.
    spans: [(usize, usize); N],
    /// Undeclared members that recorded something: position and range of `out`.
    others: Vec<(u32, usize, usize)>,
    /// Unknown keys so far, to find a repeated one (a set: an object may have a million);
    /// made at the first one.
    unknown: Option<KeySet<String>>,
}

impl<'k, const N: usize> Members<'k, N> {
    /// Starts an object whose declared keys are `keys`.
    pub fn new(keys: &'k [&'k str; N], out: &Out) -> Self {
        Members {
            keys,
            before: out.len(),
            count: 0,
            at: [u32::MAX; N],
            spans: [(0, 0); N],
            others: Vec::new(),
            unknown: None,
        }
    }

    /// True when declared key `i` occurred.
    pub fn has(&self, i: usize) -> bool {
        self.at[i] != u32::MAX
    }

    /// Reads the value of declared key `i` into its [`Slot`].
    #[inline(always)]
    pub fn read<'de, A: MapAccess<'de>, C: Read>(
        &mut self,
        map: &mut A,
        i: usize,
        check: &C,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Slot<C::Value>, A::Error> {
        if self.has(i) {
            return Err(repeated_key(self.keys[i]));
        }
        self.at[i] = self.next();
        let start = out.len();
        let value = map.next_value_seed(Seed::new(check, &path.key(self.keys[i]), out))?;
        self.spans[i] = (start, out.len());
        Ok(Some(value))
    }

    /// An undeclared key in a closed object: an unknown field.
    pub fn unknown<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        key: String,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<(), A::Error> {
        let unknown = self.unknown.get_or_insert_default();
        if unknown.contains(&key) {
            return Err(repeated_key(&key));
        }
        // Read as a `Value`, not skipped: the parser checks skipped strings less (UTF-8), and a
        // repeated key inside stops the pass here as the strict parser stops at it.
        map.next_value_seed(crate::json::StrictValue)?;
        let start = out.len();
        check::unknown_field(&path.key(&key), out);
        let at = self.next();
        self.others.push((at, start, out.len()));
        self.unknown.get_or_insert_default().insert(key);
        Ok(())
    }

    /// An undeclared key in an object with `additionalProperties`: an entry of `entries`.
    pub fn entry<'de, A: MapAccess<'de>, C: Read>(
        &mut self,
        map: &mut A,
        key: String,
        entries: &mut Entries<C::Value>,
        check: &C,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<(), A::Error> {
        let start = out.len();
        entries.read(map, key, check, path, out)?;
        let at = self.next();
        if out.len() != start {
            self.others.push((at, start, out.len()));
        }
        Ok(())
    }

    fn next(&mut self) -> u32 {
        self.count += 1;
        self.count - 1
    }

    /// Ends the object as the branch declaring `declared` (key index, required), and puts what
    /// was recorded in the interpreter's order: undeclared keys in document order (a key another
    /// branch declares is unknown here), then declared properties in schema order, a missing
    /// required one reported where it would be. True when nothing was recorded.
    #[inline]
    pub fn finish(&self, declared: &[(usize, bool)], path: &Path<'_>, out: &mut Out) -> bool {
        // The common case, inlined so that the caller's constant `declared` unrolls: nothing
        // recorded, every required key present, and every member read one this branch declares.
        let complete = declared
            .iter()
            .all(|(i, required)| !*required || self.has(*i));
        let present = declared.iter().filter(|(i, _)| self.has(*i)).count();
        if out.len() == self.before && complete && present == self.count as usize {
            return true;
        }
        self.finish_recorded(declared, path, out)
    }

    /// [`finish`](Self::finish) of an object that recorded something, misses a required key or
    /// has undeclared members.
    fn finish_recorded(&self, declared: &[(usize, bool)], path: &Path<'_>, out: &mut Out) -> bool {
        // A key that occurred but that this branch does not declare (only a `oneOf` has them:
        // an object declaring all `N` keys has none).
        let foreign = |i: &usize| self.has(*i) && !declared.iter().any(|(d, _)| d == i);
        let missing = declared
            .iter()
            .any(|(i, required)| *required && !self.has(*i));
        let any_foreign = declared.len() < N && (0..N).any(|i| foreign(&i));
        if self.others.is_empty() && !missing && !any_foreign {
            if out.len() == self.before {
                return true;
            }
            // Only declared members recorded, and in schema order: already the interpreter's order.
            let mut at = self.before;
            for (i, _) in declared {
                let (start, end) = self.spans[*i];
                if self.has(*i) && start != end {
                    if start != at {
                        at = usize::MAX;
                        break;
                    }
                    at = end;
                }
            }
            if at == out.len() {
                return false;
            }
        }
        // What was recorded, each violation moved back once, in order (a foreign key's own
        // violations are dropped: it is an unknown field here).
        let mut recorded: Vec<Option<crate::Violation>> =
            out.drain(self.before..).map(Some).collect();
        let before = self.before;
        let mut put = |(start, end): (usize, usize), out: &mut Out| {
            out.extend(
                recorded[start - before..end - before]
                    .iter_mut()
                    .filter_map(Option::take),
            );
        };
        if !self.others.is_empty() || any_foreign {
            // Undeclared members by position: what they recorded, or (a key only another
            // branch declares) an unknown field.
            enum Undeclared {
                Recorded(usize, usize),
                Foreign(usize),
            }
            let mut undeclared: Vec<(u32, Undeclared)> = self
                .others
                .iter()
                .map(|(pos, start, end)| (*pos, Undeclared::Recorded(*start, *end)))
                .collect();
            undeclared.extend(
                (0..N)
                    .filter(foreign)
                    .map(|i| (self.at[i], Undeclared::Foreign(i))),
            );
            undeclared.sort_by_key(|(pos, _)| *pos);
            for (_, member) in undeclared {
                match member {
                    Undeclared::Recorded(start, end) => put((start, end), out),
                    Undeclared::Foreign(i) => check::unknown_field(&path.key(self.keys[i]), out),
                }
            }
        }
        for (i, required) in declared {
            if self.has(*i) {
                put(self.spans[*i], out);
            } else if *required {
                check::required(&path.key(self.keys[*i]), out);
            }
        }
        out.len() == self.before
    }

    /// Ends an object whose checks after its members are `steps` (an object with
    /// `minProperties`, `maxProperties` or `dependentRequired`, or an `allOf` merged into one),
    /// and puts what was recorded in the interpreter's order: undeclared members in document
    /// order (after the steps when `unknown_last`: a merged `allOf` is closed after its parts
    /// have run), and the steps in order. True when nothing was recorded.
    pub fn finish_steps(
        &self,
        steps: &[Step<'_>],
        unknown_last: bool,
        path: &Path<'_>,
        out: &mut Out,
    ) -> bool {
        self.finish_in_order(None, steps, unknown_last, path, out)
    }

    /// [`finish_steps`](Self::finish_steps) of a `oneOf` branch declaring the keys `declared`
    /// (a case of an `if`/`then`/`else` chain, closed after its parts): a key only another
    /// branch declares is an unknown field here, in document order among the undeclared ones.
    #[inline]
    pub fn finish_branch_steps(
        &self,
        declared: &[usize],
        steps: &[Step<'_>],
        unknown_last: bool,
        path: &Path<'_>,
        out: &mut Out,
    ) -> bool {
        // The common case: nothing recorded, every member one this branch declares, and every
        // step met by what is present.
        let present = declared.iter().filter(|i| self.has(**i)).count();
        let met = steps.iter().all(|step| match *step {
            Step::Property(i, required) => !required || self.has(i),
            Step::Present(i) => self.has(i),
            Step::Count(..) | Step::DependentRequired(..) => false,
        });
        if out.len() == self.before && present == self.count as usize && met {
            return true;
        }
        self.finish_in_order(Some(declared), steps, unknown_last, path, out)
    }

    fn finish_in_order(
        &self,
        declared: Option<&[usize]>,
        steps: &[Step<'_>],
        unknown_last: bool,
        path: &Path<'_>,
        out: &mut Out,
    ) -> bool {
        let recorded = out.split_off(self.before);
        let at = |start: usize, end: usize| &recorded[start - self.before..end - self.before];
        // Undeclared members by position: what they recorded, or (a key only another branch
        // declares) an unknown field.
        enum Undeclared {
            Recorded(usize, usize),
            Foreign(usize),
        }
        let undeclared = |out: &mut Out| {
            let foreign = (0..N)
                .filter(|i| self.has(*i) && declared.is_some_and(|d| !d.contains(i)))
                .map(|i| (self.at[i], Undeclared::Foreign(i)));
            let mut members: Vec<(u32, Undeclared)> = self
                .others
                .iter()
                .map(|(pos, start, end)| (*pos, Undeclared::Recorded(*start, *end)))
                .chain(foreign)
                .collect();
            members.sort_by_key(|(pos, _)| *pos);
            for (_, member) in members {
                match member {
                    Undeclared::Recorded(start, end) => out.extend_from_slice(at(start, end)),
                    Undeclared::Foreign(i) => check::unknown_field(&path.key(self.keys[i]), out),
                }
            }
        };
        if !unknown_last {
            undeclared(out);
        }
        for step in steps {
            match *step {
                Step::Property(i, required) => {
                    if self.has(i) {
                        let (start, end) = self.spans[i];
                        out.extend_from_slice(at(start, end));
                    } else if required {
                        check::required(&path.key(self.keys[i]), out);
                    }
                }
                Step::Present(i) => {
                    if !self.has(i) {
                        check::required(&path.key(self.keys[i]), out);
                    }
                }
                Step::Count(min, max) => {
                    check::property_count(u64::from(self.count), path, out, min, max);
                }
                Step::DependentRequired(i, needed) => {
                    if self.has(i) {
                        for j in needed.iter().filter(|j| !self.has(**j)) {
                            check::dependent_required(&path.key(self.keys[*j]), out, self.keys[i]);
                        }
                    }
                }
            }
        }
        if unknown_last {
            undeclared(out);
        }
        out.len() == self.before
    }

    /// Keeps the value of declared key `i` as JSON text, unread: a `oneOf` key whose branches
    /// check it differently, met before the discriminator says which branch applies.
    /// [`settle`](Self::settle) reads it once the branch is known.
    pub fn capture<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        i: usize,
    ) -> Result<Option<Box<RawValue>>, A::Error> {
        if self.has(i) {
            return Err(repeated_key(self.keys[i]));
        }
        self.at[i] = self.next();
        Ok(Some(map.next_value::<Box<RawValue>>()?))
    }

    /// The slot of declared key `i` for the chosen branch, whose `check` it is: `typed` when it
    /// was read with that check (the discriminator came first), else the [`captured`]
    /// (Self::capture) text read now; what it records takes the member's place in the interpreter's
    /// order.
    pub fn settle<E: de::Error, C: Read>(
        &mut self,
        i: usize,
        typed: Slot<C::Value>,
        captured: Option<Box<RawValue>>,
        check: &C,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Slot<C::Value>, E> {
        let Some(text) = captured else {
            return Ok(typed);
        };
        let start = out.len();
        let mut d = serde_json::Deserializer::from_str(text.get());
        // The text is well-formed JSON; a repeated key in it stops the read as it would have.
        let value = check
            .read(&mut d, &path.key(self.keys[i]), out)
            .map_err(E::custom)?;
        self.spans[i] = (start, out.len());
        Ok(Some(value))
    }

    /// The branch of a `oneOf` discriminated by keys (or, without its discriminator, of its
    /// branches without a tag), once its members are read: `deciding` holds `(branch, key)` for
    /// each key only one branch (of those) declares, in schema order. The branch whose
    /// keys the object has, else (reported alone) none of them, listing `required`, or several.
    pub fn decided(
        &self,
        deciding: &[(usize, usize)],
        required: &[&[&str]],
        path: &Path<'_>,
        out: &mut Out,
    ) -> Option<usize> {
        let mut found = Vec::new();
        let mut chosen: Option<usize> = None;
        let mut several = false;
        for (b, i) in deciding.iter().filter(|(_, i)| self.has(*i)) {
            found.push(self.keys[*i]);
            several |= chosen.is_some_and(|c| c != *b);
            chosen.get_or_insert(*b);
        }
        match chosen {
            Some(b) if !several => return Some(b),
            Some(_) => {
                self.discard(out);
                check::several_branch_keys(path, out, &found);
            }
            None => {
                self.discard(out);
                check::no_branch_key(path, out, required);
            }
        }
        None
    }

    /// The branch of a `oneOf` with several discriminators (or tags that are not all
    /// strings), once its members are read: as [`tagged`], the discriminators being the first
    /// declared keys, in order. When they name no branch, that alone is reported: a value that
    /// names no tag (at its key), or several discriminators (the object has keys of several
    /// branches).
    pub fn tagged(
        &self,
        found: &[Discriminator],
        tags: &[&[check::TagValue<'_>]],
        path: &Path<'_>,
        out: &mut Out,
    ) -> Discriminator {
        match Tagged::of(found, tags) {
            Tagged::Absent => Discriminator::Absent,
            Tagged::Branch(b) => Discriminator::Tag(b),
            Tagged::Unknown(p) => {
                self.discard(out);
                check::unknown_tag(&path.key(self.keys[p]), out, tags[p]);
                Discriminator::Unknown
            }
            Tagged::Several => {
                self.discard(out);
                let present: Vec<&str> = (0..found.len())
                    .filter(|p| found[*p] != Discriminator::Absent)
                    .map(|p| self.keys[p])
                    .collect();
                check::several_branch_keys(path, out, &present);
                Discriminator::Unknown
            }
        }
    }

    /// The branch of a `oneOf` discriminated by tests of its members (a
    /// [`DecisionTree`](crate::one_of::DecisionTree)), once they are read: `tested` holds, per member
    /// of the decision, its declared key and, for a member whose type or tag a test reads, its
    /// [`captured`](Self::capture) text. The branch, else (reported alone) none.
    pub fn decide(
        &self,
        decision: &crate::one_of::DecisionTree,
        tested: &[(usize, Option<&RawValue>)],
        path: &Path<'_>,
        out: &mut Out,
    ) -> Option<usize> {
        let facts = Tested {
            members: self,
            tested,
        };
        match decision.decide(&facts) {
            Ok(b) => Some(b),
            Err(refusal) => {
                self.discard(out);
                refusal.report(path, out);
                None
            }
        }
    }

    /// Drops everything the members recorded (a `oneOf` whose discriminator names no branch
    /// reports only that).
    pub fn discard(&self, out: &mut Out) {
        out.truncate(self.before);
    }
}

/// The members a [`Members::decide`] tests.
struct Tested<'m, 'k, const N: usize> {
    members: &'m Members<'k, N>,
    tested: &'m [(usize, Option<&'m RawValue>)],
}

impl<const N: usize> Tested<'_, '_, N> {
    /// The captured text of a member, when present.
    fn text(&self, member: usize) -> Option<&str> {
        Some(self.tested[member].1?.get())
    }
}

impl<const N: usize> crate::one_of::Facts for Tested<'_, '_, N> {
    fn has(&self, member: usize) -> bool {
        self.members.has(self.tested[member].0)
    }

    fn kind(&self, member: usize) -> Option<(Kind, &'static str)> {
        let text = self.text(member)?;
        // The first byte says the type of all but numbers, which are read only as far as
        // integral or not.
        Some(match text.as_bytes().first() {
            Some(b'"') => (Kind::String, "a string"),
            Some(b'{') => (Kind::Object, "an object"),
            Some(b'[') => (Kind::Array, "an array"),
            Some(b't' | b'f') => (Kind::Boolean, "a boolean"),
            Some(b'n') => (Kind::Null, "null"),
            // As serde_json reads it: a `u64`, a negative `i64` (`-0` is a float), else an `f64`.
            Some(b'-') if text.parse::<i64>().is_ok_and(|i| i != 0) => {
                (Kind::Integer, "an integer")
            }
            Some(b'0'..=b'9') if text.parse::<u64>().is_ok() => (Kind::Integer, "an integer"),
            _ => match text.parse::<f64>() {
                Ok(f) if f.fract() == 0.0 => (Kind::Integer, "a number"),
                _ => (Kind::Number, "a number"),
            },
        })
    }

    fn is_tag(&self, member: usize, tag: check::TagValue<'_>) -> bool {
        let Some(text) = self.text(member) else {
            return false;
        };
        match tag {
            // Without escapes, the text between the quotes is the string.
            check::TagValue::Str(t) => {
                match text.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                    Some(inner) if !inner.contains('\\') => inner == t,
                    Some(_) => serde_json::from_str::<String>(text).is_ok_and(|s| s == t),
                    None => false,
                }
            }
            check::TagValue::Bool(b) => text == if b { "true" } else { "false" },
            check::TagValue::Int(_) => serde_json::from_str::<Value>(text)
                .is_ok_and(|v| check::TagValue::of(&v) == Some(tag)),
        }
    }
}

/// One check of an object after its members are read, for [`Members::finish_steps`]
/// (indices are into its declared keys).
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// The property's value, or `required` when absent and the flag says so.
    Property(usize, bool),
    /// `required` naming a property another `allOf` part declares.
    Present(usize),
    /// `minProperties` / `maxProperties`.
    Count(Option<u64>, Option<u64>),
    /// `dependentRequired`: when the property is present, each of the others must be.
    DependentRequired(usize, &'a [usize]),
}

/// What an object's reader has of a declared key once its members are read: `None` when the
/// key is absent, `Some(None)` when present but invalid (its violations recorded), else
/// `Some(Some(value))`.
pub type Slot<T> = Option<Option<T>>;

/// The typed value of a required property: present and valid.
#[inline]
pub fn required<T>(slot: Slot<T>) -> Option<T> {
    slot.flatten()
}

/// The typed value of an optional property, `None` when it is invalid: `Some(None)` when
/// absent, `Some(Some(x))` when valid.
#[inline]
pub fn optional<T>(slot: Slot<T>) -> Option<Option<T>> {
    match slot {
        None => Some(None),
        Some(x) => x.map(Some),
    }
}

/// The typed value of an optional property with a default, or of a nullable one (whose
/// absence reads as `null`): `absent()` when absent.
#[inline]
pub fn or_else<T>(slot: Slot<T>, absent: impl FnOnce() -> T) -> Option<T> {
    match slot {
        None => Some(absent()),
        Some(x) => x,
    }
}

/// A union's branches are discriminated by [`Kind`]; generated code names it from here.
pub use crate::kind::Kind;

/// Reads the string a union was handed with its string branch's `check`.
pub fn union_str<E: de::Error, C: Read>(
    check: &C,
    s: &str,
    path: &Path<'_>,
    out: &mut Out,
) -> Result<Option<C::Value>, E> {
    check.read(de::value::StrDeserializer::<E>::new(s), path, out)
}

/// Reads the array a union was handed with its array branch's `check`.
pub fn union_seq<'de, A: SeqAccess<'de>, C: Read>(
    check: &C,
    seq: A,
    path: &Path<'_>,
    out: &mut Out,
) -> Result<Option<C::Value>, A::Error> {
    check.read(de::value::SeqAccessDeserializer::new(seq), path, out)
}

/// Reads the object a union was handed with its object branch's `check`.
pub fn union_map<'de, A: MapAccess<'de>, C: Read>(
    check: &C,
    map: A,
    path: &Path<'_>,
    out: &mut Out,
) -> Result<Option<C::Value>, A::Error> {
    check.read(de::value::MapAccessDeserializer::new(map), path, out)
}

/// Reads the scalar (null, boolean, number) a union was handed, already a `Value`, with the
/// `check` of its branch. A scalar `Value` reads without a parser error; were there one, the
/// value would be refused (`None`), never accepted.
pub fn union_scalar<C: Read>(
    check: &C,
    found: &Value,
    path: &Path<'_>,
    out: &mut Out,
) -> Option<C::Value> {
    check.read(found, path, out).unwrap_or(None)
}

/// Declares a unit type that is exactly one JSON string (a schema's string `const`).
#[macro_export]
macro_rules! string_const {
    ($(#[$meta:meta])* $vis:vis $name:ident = $value:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        $vis struct $name;

        impl $name {
            /// The only value this type admits.
            pub const VALUE: &'static str = $value;
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($value)
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::__private::reader::deserialize(
                    d,
                    &$crate::__private::reader::Then($crate::__private::reader::ConstStr($value), |(): ()| $name),
                )
            }
        }
    };
}

/// `type: string` with `format` beside its other rules, checked after them.
#[derive(Debug, Clone, Copy)]
pub struct FormatStr<'a> {
    /// `minLength` / `maxLength`
    pub lengths: Lengths,
    /// `pattern`
    pub pattern: Option<&'a Pattern>,
    /// `format`
    pub format: check::Format,
}

text!(FormatStr => String,
    str |this, s, path, out| {
        let rules = check::string_rules(s, path, out, &this.lengths, this.pattern);
        (check::format(s, path, out, this.format) && rules).then(|| s.to_owned())
    },
    other |found| check::string(&found, path, out, &this.lengths, this.pattern).map(str::to_owned));

/// `type: integer` with `multipleOf` beside its bounds, checked after them.
#[derive(Debug, Clone, Copy)]
pub struct IntegerMultiple(pub Bounds, pub f64);
scalar!(IntegerMultiple => i64, |this, v, path, out| {
    let typed = check::integer(&v, path, out, &this.0);
    // A value that is no integer is a type error only.
    let integral = v.as_f64().is_some_and(|x| x.fract() == 0.0);
    let multiple = !integral || check::multiple_of(&v, path, out, this.1);
    typed.filter(|_| multiple)
});

/// `type: number` with `multipleOf` beside its bounds, checked after them.
#[derive(Debug, Clone, Copy)]
pub struct NumberMultiple(pub Bounds, pub f64);
scalar!(NumberMultiple => f64, |this, v, path, out| {
    let typed = check::number(&v, path, out, &this.0);
    let multiple = check::multiple_of(&v, path, out, this.1);
    typed.filter(|_| multiple)
});

/// An array with `uniqueItems: true`: read as a `Value` (the items are compared by JSON
/// equality, which the typed items do not keep), its items then read from it by the array's
/// check, and the first repeat reported after what they record, as the interpreter does.
#[derive(Debug, Clone, Copy)]
pub struct UniqueArray<C>(pub Array<C>);

impl<C: Read> Read for UniqueArray<C> {
    type Value = Vec<C::Value>;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self::Value>, D::Error> {
        let value = crate::json::value(d)?;
        let typed = self.0.read(&value, path, out).map_err(de::Error::custom)?;
        let Value::Array(items) = &value else {
            return Ok(typed);
        };
        let unique = check::unique_items(
            items.len(),
            |i, j| check::json_equal(&items[i], &items[j]),
            path,
            out,
        );
        Ok(typed.filter(|_| unique))
    }
}

/// A value deferred to the interpreter: its text is kept as read ([`RawValue`], no `Value`
/// tree), the schema as written is applied to it by [`Fallback`](crate::fallback::Fallback),
/// and only a value it finds valid is read, with `check`, into its typed value. Generated code uses it
/// where a part of the schema is not typed rule by rule (`not`, `if`/`then`/`else`,
/// `dependentSchemas`, `contains`, a part with no one JSON type): what it records is then the
/// interpreter's own list, in its order.
#[derive(Debug, Clone, Copy)]
pub struct Deferred<C: 'static> {
    /// Reads the typed value once the interpreter finds the text valid.
    pub check: C,
    /// The interpreter at the part's schema.
    pub fallback: &'static crate::fallback::Fallback,
}

impl<C: Read> Read for Deferred<C> {
    type Value = C::Value;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<C::Value>, D::Error> {
        if CHECKED_WHOLE.get() {
            // Inside a value the interpreter has checked whole already.
            return self.check.read(d, path, out);
        }
        let text = <Box<RawValue> as de::Deserialize>::deserialize(d)?;
        let _scope = match self.fallback.check(text.get(), path, out) {
            Some(false) => return Ok(None),
            Some(true) => Some(DeferredScope::enter()),
            // Not strict JSON: the typed read stops at the repeated key as every reader does.
            None => None,
        };
        let mut d = serde_json::Deserializer::from_str(text.get());
        self.check
            .read(&mut d, path, out)
            .map_err(de::Error::custom)
    }
}

/// [`CHECKED_WHOLE`] set until dropped, unwinding included.
struct DeferredScope;

impl DeferredScope {
    fn enter() -> DeferredScope {
        CHECKED_WHOLE.set(true);
        DeferredScope
    }
}

impl Drop for DeferredScope {
    fn drop(&mut self) {
        CHECKED_WHOLE.set(false);
    }
}

thread_local! {
    /// Set while a value [`Deferred`]'s interpreter found valid is read into its typed value:
    /// the interpreter has nothing to add on its deferred parts.
    static CHECKED_WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A generated type's own reader, before [`Deferred`] wraps it: what its `Contract::read` would
/// be had no part of its schema been deferred to the interpreter.
pub trait TypedRead: Sized {
    /// Reads the typed value as [`Read::read`] does.
    fn read<'de, D: Deserializer<'de>>(
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<Self>, D::Error>;
}

/// The [`Read`] of a [`TypedRead`] type.
pub struct ReadBy<T>(PhantomData<fn() -> T>);

impl<T> ReadBy<T> {
    /// The check of `T`.
    pub const fn new() -> Self {
        ReadBy(PhantomData)
    }
}

impl<T> fmt::Debug for ReadBy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReadBy<{}>", std::any::type_name::<T>())
    }
}

impl<T> Default for ReadBy<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: TypedRead> Read for ReadBy<T> {
    type Value = T;

    fn read<'de, D: Deserializer<'de>>(
        &self,
        d: D,
        path: &Path<'_>,
        out: &mut Out,
    ) -> Result<Option<T>, D::Error> {
        T::read(d, path, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers and booleans checked as the parser hands them over record exactly what the
    /// keyword functions record on the parsed `Value` (how they were read before).
    #[test]
    fn native_scalars_read_like_values() {
        let bounds = Bounds {
            minimum: Some(0.0),
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: Some(1e19),
        };
        let texts = [
            "0",
            "5",
            "-5",
            "5.0",
            "5.5",
            "-0.0",
            "1e300",
            "-1e300",
            "1e19",
            "18446744073709551615",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "9.3e18",
            "true",
            "false",
            "null",
            "\"5\"",
            "[5]",
            "{}",
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).expect("JSON");
            let parse = || serde_json::Deserializer::from_str(text);
            for via_value in [false, true] {
                let (mut read, mut expected) = (Vec::new(), Vec::new());
                let typed = if via_value {
                    Integer(bounds).read(&value, &Path::Root, &mut read)
                } else {
                    Integer(bounds).read(&mut parse(), &Path::Root, &mut read)
                };
                let want = check::integer(&value, &Path::Root, &mut expected, &bounds);
                assert_eq!(
                    (typed.expect("reads"), read),
                    (want, expected),
                    "integer {text}"
                );

                let (mut read, mut expected) = (Vec::new(), Vec::new());
                let typed = if via_value {
                    Number(bounds).read(&value, &Path::Root, &mut read)
                } else {
                    Number(bounds).read(&mut parse(), &Path::Root, &mut read)
                };
                let want = check::number(&value, &Path::Root, &mut expected, &bounds);
                assert_eq!(
                    (typed.expect("reads"), read),
                    (want, expected),
                    "number {text}"
                );

                let (mut read, mut expected) = (Vec::new(), Vec::new());
                let typed = if via_value {
                    Boolean.read(&value, &Path::Root, &mut read)
                } else {
                    Boolean.read(&mut parse(), &Path::Root, &mut read)
                };
                let want = check::boolean(&value, &Path::Root, &mut expected);
                assert_eq!(
                    (typed.expect("reads"), read),
                    (want, expected),
                    "boolean {text}"
                );
            }
        }
    }
}
