//! The comparison itself: schema A and schema B walked side by side, keyword family by
//! keyword family, each difference a [`Change`].
//!
//! Sound in one direction, by construction: A is over-approximated (what A adds beside a
//! `$ref`, inside an `allOf`, in keywords not compared here, only narrows what A accepts, so
//! leaving it out can only make a change appear, never hide one), and every keyword of B is
//! either compared or reported [`Effect::Unproven`]. A change is [`Effect::Breaking`] only
//! when a witness was built and the interpreter confirmed it: A accepts it, B refuses it.

use crate::change::{Change, Code, Effect, Step};
use crate::example::{example, number, unused_key};
use crate::schema::{Loc, Schema, admits_all, is_annotation, keywords};
use crate::types::Types;
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// How the two schemas are named in messages ("OLD" and "NEW", or a producer and a consumer).
#[derive(Debug, Clone)]
pub struct Labels {
    pub a: String,
    pub b: String,
}

/// Keywords of B this walk compares; any other keyword of B is unproven unless A has it too,
/// with the same value.
const COMPARED: &[&str] = &[
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
];

pub(crate) struct Walk<'s> {
    pub a: &'s Schema,
    pub b: &'s Schema,
    pub labels: &'s Labels,
    seen: HashSet<(Loc, Types, Loc)>,
    pub changes: Vec<Change>,
}

/// Where a change is: in A, in B, and in documents.
#[derive(Clone, Copy)]
struct At<'x> {
    a: &'x Loc,
    b: &'x Loc,
    path: &'x [Step],
}

impl<'x> At<'x> {
    fn new(a: &'x Loc, b: &'x Loc, path: &'x [Step]) -> At<'x> {
        At { a, b, path }
    }
}

/// One side's schema at a place: where it is, after `$ref`s, and its keywords.
struct Side {
    loc: Loc,
    value: Value,
}

impl Side {
    fn map(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        keywords(&self.value).unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    fn get(&self, keyword: &str) -> Option<&Value> {
        self.map().get(keyword)
    }

    fn types(&self) -> Types {
        self.get("type")
            .and_then(Types::of_keyword)
            .unwrap_or(Types::ALL)
    }

    /// The `const` or `enum` values, when the schema names them.
    fn values(&self) -> Option<Vec<Value>> {
        if let Some(c) = self.get("const") {
            return Some(vec![c.clone()]);
        }
        self.get("enum").and_then(Value::as_array).cloned()
    }
}

impl<'s> Walk<'s> {
    pub fn new(a: &'s Schema, b: &'s Schema, labels: &'s Labels) -> Walk<'s> {
        Walk {
            a,
            b,
            labels,
            seen: HashSet::new(),
            changes: Vec::new(),
        }
    }

    /// A walk of its own, for a trial (does A fit this branch of B?).
    fn trial(&self) -> Walk<'s> {
        Walk {
            a: self.a,
            b: self.b,
            labels: self.labels,
            seen: self.seen.clone(),
            changes: Vec::new(),
        }
    }

    fn push(
        &mut self,
        at: At<'_>,
        code: Code,
        effect: Effect,
        message: String,
        witness: Option<Value>,
    ) {
        // A change of an object's members names the member, but its witness is the object.
        let member = matches!(
            code,
            Code::RequiredAdded | Code::PropertyRemoved | Code::AdditionalPropertiesNarrowed
        );
        self.changes.push(Change {
            code,
            effect,
            a_pointer: at.a.pointer().to_owned(),
            b_pointer: at.b.pointer().to_owned(),
            path: at.path.to_vec(),
            message,
            witness,
            witness_at: at.path.len() - usize::from(member),
        });
    }

    /// The first candidate A accepts (at `a`) and B refuses (at `b`).
    fn witness(
        &self,
        a: &Loc,
        b: &Loc,
        candidates: impl IntoIterator<Item = Value>,
    ) -> Option<Value> {
        candidates
            .into_iter()
            .find(|c| self.a.accepts(a, c) == Some(true) && self.b.accepts(b, c) == Some(false))
    }

    /// A change that narrows what B accepts: breaking with a witness from `candidates`, else
    /// unproven.
    fn narrowed(&mut self, at: At<'_>, code: Code, message: String, candidates: Vec<Value>) {
        let witness = self.witness(at.a, at.b, candidates);
        let effect = if witness.is_some() {
            Effect::Breaking
        } else {
            Effect::Unproven
        };
        self.push(at, code, effect, message, witness);
    }

    fn widened(&mut self, at: At<'_>, code: Code, message: String) {
        self.push(at, code, Effect::Compatible, message, None);
    }

    /// Compares A at `a` (its values of the types in `mask`) with B at `b`.
    pub fn node(&mut self, a: &Loc, mask: Types, b: &Loc, path: &[Step]) {
        let Some((a_loc, a_value)) = self.a.follow(a, true) else {
            return;
        };
        let Some((b_loc, b_value)) = self.b.follow(b, false) else {
            let message = format!("{}'s `$ref` leads nowhere, or in a circle", self.labels.b);
            self.push(
                At::new(&a_loc, b, path),
                Code::KeywordUnproven,
                Effect::Unproven,
                message,
                None,
            );
            return;
        };
        let key = (self.a.canonical(&a_loc), mask, self.b.canonical(&b_loc));
        if !self.seen.insert(key.clone()) {
            // Being compared further up (a recursive schema): it fits here if it fits there.
            return;
        }
        self.compare(
            Side {
                loc: a_loc,
                value: a_value,
            },
            mask,
            Side {
                loc: b_loc,
                value: b_value,
            },
            path,
        );
        self.seen.remove(&key);
    }

    fn compare(&mut self, a: Side, mask: Types, b: Side, path: &[Step]) {
        if admits_all(&b.value) || a.value == Value::Bool(false) {
            return;
        }
        if a.value == b.value && mask == Types::ALL && !has_reference(&a.value) {
            return;
        }
        if b.value == Value::Bool(false) {
            let message = format!("{} admits nothing here", self.labels.b);
            let candidates = example(self.a, &a.loc, mask).into_iter().collect();
            self.narrowed(
                At::new(&a.loc, &b.loc, path),
                Code::Refused,
                message,
                candidates,
            );
            return;
        }
        if let Some(values) = a.values() {
            self.values(&a, mask, &b, values, Code::EnumValueRemoved, path);
            return;
        }
        if let Some(values) = finite(a.types() & mask) {
            self.values(&a, mask, &b, values, Code::TypeNarrowed, path);
            return;
        }
        // A's branches, one by one: A accepts no more than they do together.
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = a.get(keyword) {
                match union_of(&b) {
                    Some(b_keyword) => self.branches(&a, keyword, mask, &b, b_keyword, path),
                    None => {
                        for i in 0..branches.len() {
                            self.node(&a.loc.index(keyword, i), mask, &b.loc, path);
                        }
                    }
                }
                return;
            }
        }
        if let Some(Value::Array(parts)) = a.get("allOf") {
            self.a_all_of(&a, parts.len(), mask, &b, path);
            return;
        }
        self.b_side(&a, mask, &b, path);
    }

    /// A union against a union: each branch of A matched to a branch of B that accepts all it
    /// does (a branch none accepts is removed); B's branches that match none are added.
    fn branches(
        &mut self,
        a: &Side,
        a_keyword: &str,
        mask: Types,
        b: &Side,
        b_keyword: &str,
        path: &[Step],
    ) {
        let count = |s: &Side, k: &str| s.get(k).and_then(Value::as_array).map_or(0, Vec::len);
        let (n, m) = (count(a, a_keyword), count(b, b_keyword));
        let mut matched = vec![false; m];
        for i in 0..n {
            let branch = a.loc.index(a_keyword, i);
            let Some((a_loc, a_value)) = self.a.follow(&branch, true) else {
                continue;
            };
            let side = Side {
                loc: a_loc,
                value: a_value,
            };
            if let Some(j) = self.fits_a_branch(&side, mask, b, b_keyword, path) {
                matched[j] = true;
                continue;
            }
            let message = format!(
                "{}'s `{a_keyword}` branch {i} is accepted by no branch of {}'s `{b_keyword}`",
                self.labels.a, self.labels.b
            );
            let candidates = self.candidates(&side.loc, mask);
            self.narrowed(
                At::new(&side.loc, &b.loc, path),
                Code::BranchRemoved,
                message,
                candidates,
            );
        }
        for j in (0..m).filter(|j| !matched[*j]) {
            let message = format!(
                "{}'s `{b_keyword}` has branch {j}, which accepts what no branch of {}'s does",
                self.labels.b, self.labels.a
            );
            let branch = b.loc.index(b_keyword, j);
            self.widened(At::new(&a.loc, &branch, path), Code::BranchAdded, message);
        }
    }

    /// A is `allOf` its parts (and its own keywords): A fits B when one part does.
    fn a_all_of(&mut self, a: &Side, parts: usize, mask: Types, b: &Side, path: &[Step]) {
        for i in 0..parts {
            let mut trial = self.trial();
            trial.node(&a.loc.index("allOf", i), mask, &b.loc, path);
            if !trial.breaks() {
                self.changes.extend(trial.changes);
                return;
            }
        }
        let mut own = self.trial();
        own.b_side(a, mask, b, path);
        if !own.breaks() {
            self.changes.extend(own.changes);
            return;
        }
        let message = format!(
            "{}'s `allOf` is compared part by part, and no part alone is shown to fit {}",
            self.labels.a, self.labels.b
        );
        self.push(
            At::new(&a.loc, &b.loc, path),
            Code::KeywordUnproven,
            Effect::Unproven,
            message,
            None,
        );
    }

    /// B's keywords against A (A without unions of its own).
    fn b_side(&mut self, a: &Side, mask: Types, b: &Side, path: &[Step]) {
        if b.get("$ref").is_some()
            && let Some(target) = self.b.reference(&b.loc)
        {
            self.node(&a.loc, mask, &target, path);
        }
        if let Some(Value::Array(parts)) = b.get("allOf") {
            for i in 0..parts.len() {
                self.node(&a.loc, mask, &b.loc.index("allOf", i), path);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if b.get(keyword).is_some() {
                self.union(a, mask, b, keyword, path);
            }
        }
        let applicators = ["$ref", "allOf", "anyOf", "oneOf"];
        if !b
            .map()
            .keys()
            .any(|k| !is_annotation(k) && !applicators.contains(&k.as_str()))
        {
            // B says nothing beside its applicators: they were its whole say.
            return;
        }
        if let Some(values) = b.values() {
            let message = format!(
                "{} admits only {}; {} admits other values",
                self.labels.b,
                list(&values),
                self.labels.a
            );
            let candidates = example(self.a, &a.loc, mask).into_iter().collect();
            self.narrowed(
                At::new(&a.loc, &b.loc, path),
                Code::EnumAdded,
                message,
                candidates,
            );
        }
        let common = self.types(a, mask, b, path);
        if common.intersects(Types::NUMBER) {
            self.numbers(a, b, common & Types::NUMBER, path);
        }
        if common.contains(Types::STRING) {
            self.strings(a, b, path);
        }
        if common.contains(Types::ARRAY) {
            self.arrays(a, b, path);
        }
        if common.contains(Types::OBJECT) {
            self.objects(a, b, path);
        }
        self.uncompared(a, b, path);
        self.default(a, b, path);
    }

    fn breaks(&self) -> bool {
        self.changes.iter().any(|c| c.effect.breaks())
    }

    /// A's values (`const`/`enum`) each checked by B's interpreter: exact.
    fn values(
        &mut self,
        a: &Side,
        mask: Types,
        b: &Side,
        values: Vec<Value>,
        code: Code,
        path: &[Step],
    ) {
        for v in values.iter().filter(|v| mask.contains(Types::of_value(v))) {
            if self.a.accepts(&a.loc, v) == Some(false) {
                continue;
            }
            match self.b.accepts(&b.loc, v) {
                Some(true) => {}
                Some(false) => {
                    let message =
                        format!("{} admits {v}; {} does not", self.labels.a, self.labels.b);
                    self.push(
                        At::new(&a.loc, &b.loc, path),
                        code,
                        Effect::Breaking,
                        message,
                        Some(v.clone()),
                    );
                }
                None => {
                    let message = format!(
                        "{} admits {v}; whether {} does could not be told",
                        self.labels.a, self.labels.b
                    );
                    self.push(
                        At::new(&a.loc, &b.loc, path),
                        code,
                        Effect::Unproven,
                        message,
                        None,
                    );
                }
            }
        }
        if let Some(b_values) = b.values() {
            for v in b_values.iter().filter(|v| !values.contains(v)) {
                let message = format!("{} admits {v}; {} does not", self.labels.b, self.labels.a);
                self.widened(At::new(&a.loc, &b.loc, path), Code::EnumValueAdded, message);
            }
        }
    }

    /// B's `anyOf`/`oneOf`: some branch accepts all A does (and, for `oneOf`, no other branch
    /// accepts any of it); else A is split by JSON type and each part tried.
    fn union(&mut self, a: &Side, mask: Types, b: &Side, keyword: &str, path: &[Step]) {
        if self.fits_a_branch(a, mask, b, keyword, path).is_some() {
            return;
        }
        let types = a.types() & mask;
        if types.each().count() > 1 {
            for t in types.each() {
                if self.fits_a_branch(a, t, b, keyword, path).is_none() {
                    self.no_branch(a, t, b, keyword, path);
                }
            }
            return;
        }
        self.no_branch(a, mask, b, keyword, path);
    }

    /// The branch of B's union that accepts all A does, its changes kept (and, for a `oneOf`,
    /// an overlap with another branch reported).
    fn fits_a_branch(
        &mut self,
        a: &Side,
        mask: Types,
        b: &Side,
        keyword: &str,
        path: &[Step],
    ) -> Option<usize> {
        let n = b.get(keyword).and_then(Value::as_array).map_or(0, Vec::len);
        let exclusive = keyword == "oneOf";
        for i in 0..n {
            let branch = b.loc.index(keyword, i);
            let mut trial = self.trial();
            trial.node(&a.loc, mask, &branch, path);
            if trial.breaks() {
                continue;
            }
            self.changes.extend(trial.changes);
            if exclusive {
                for j in (0..n).filter(|j| *j != i) {
                    let other = b.loc.index(keyword, j);
                    if !self.disjoint(&a.loc, mask, &other) {
                        let message = format!(
                            "{}'s `oneOf` branches {i} and {j} may both accept what {} admits here, and a `oneOf` refuses a document two branches accept",
                            self.labels.b, self.labels.a
                        );
                        let candidates = example(self.a, &a.loc, mask).into_iter().collect();
                        self.narrowed(
                            At::new(&a.loc, &b.loc, path),
                            Code::BranchOverlap,
                            message,
                            candidates,
                        );
                    }
                }
            }
            return Some(i);
        }
        None
    }

    fn no_branch(&mut self, a: &Side, mask: Types, b: &Side, keyword: &str, path: &[Step]) {
        let what = match a.types() & mask {
            t if t == Types::ALL => "what it accepts".to_owned(),
            t => t.name(),
        };
        let message = format!(
            "no branch of {}'s `{keyword}` is shown to accept all {} admits here ({what})",
            self.labels.b, self.labels.a
        );
        let candidates = self.candidates(&a.loc, mask);
        self.narrowed(
            At::new(&a.loc, &b.loc, path),
            Code::NoBranchAccepts,
            message,
            candidates,
        );
    }

    /// Examples of A here, one per JSON type in `mask`.
    fn candidates(&self, a: &Loc, mask: Types) -> Vec<Value> {
        mask.each().filter_map(|t| example(self.a, a, t)).collect()
    }

    /// Whether no document A accepts (at `a`, of the types in `mask`) is accepted by B's
    /// schema at `other`: told by JSON types, by `const`/`enum` values, or by a required
    /// member whose values differ (a tag).
    fn disjoint(&self, a: &Loc, mask: Types, other: &Loc) -> bool {
        let (Some((a_loc, a_value)), Some((o_loc, o_value))) =
            (self.a.follow(a, true), self.b.follow(other, true))
        else {
            return false;
        };
        let a = Side {
            loc: a_loc,
            value: a_value,
        };
        let o = Side {
            loc: o_loc,
            value: o_value,
        };
        if let Some(values) = a.values() {
            return values
                .iter()
                .all(|v| self.b.accepts(&o.loc, v) == Some(false));
        }
        if !(a.types() & mask).intersects(o.types()) {
            return true;
        }
        let required = |s: &Side| -> Vec<String> {
            s.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let (a_required, o_required) = (required(&a), required(&o));
        a_required
            .iter()
            .filter(|k| o_required.contains(k))
            .any(|k| {
                let tag = |schema: &Schema, s: &Side| {
                    let at = s.loc.entry("properties", k);
                    schema.follow(&at, true).and_then(|(_, v)| {
                        Side {
                            loc: at.clone(),
                            value: v,
                        }
                        .values()
                    })
                };
                match (tag(self.a, &a), tag(self.b, &o)) {
                    (Some(x), Some(y)) => x.iter().all(|v| !y.iter().any(|w| same_json(v, w))),
                    _ => false,
                }
            })
    }

    /// JSON types: what A admits that B does not, and the other way. The common types.
    fn types(&mut self, a: &Side, mask: Types, b: &Side, path: &[Step]) -> Types {
        let (ta, tb) = (a.types() & mask, b.types());
        let narrowed = ta - tb;
        if !narrowed.is_empty() {
            let admitted = if ta == Types::ALL {
                "any value".to_owned()
            } else {
                describe(narrowed)
            };
            let message = format!(
                "{} admits {admitted}; {} admits {} only",
                self.labels.a,
                self.labels.b,
                tb.name()
            );
            let candidates = self.candidates(&a.loc, narrowed);
            self.narrowed(
                At::new(&a.loc, &b.loc, path),
                Code::TypeNarrowed,
                message,
                candidates,
            );
        }
        let widened = tb - ta;
        if a.get("type").is_some()
            && b.get("type").is_some()
            && mask == Types::ALL
            && !widened.is_empty()
        {
            let message = format!(
                "{} admits {}; {} does not",
                self.labels.b,
                widened.name(),
                self.labels.a
            );
            self.widened(At::new(&a.loc, &b.loc, path), Code::TypeWidened, message);
        }
        ta & tb
    }

    fn numbers(&mut self, a: &Side, b: &Side, types: Types, path: &[Step]) {
        let integral = !types.contains(Types::FRACTION);
        let (la, lb) = (bound(a.map(), Bound::Lower), bound(b.map(), Bound::Lower));
        let (ua, ub) = (bound(a.map(), Bound::Upper), bound(b.map(), Bound::Upper));
        let unit = if integral { 1.0 } else { 0.5 };
        self.bound(
            At::new(&a.loc, &b.loc, path),
            "minimum",
            la,
            lb,
            Bound::Lower,
            |(x, _)| vec![number(x - unit), number(x), number(x - 1.0)],
        );
        self.bound(
            At::new(&a.loc, &b.loc, path),
            "maximum",
            ua,
            ub,
            Bound::Upper,
            |(x, _)| vec![number(x + unit), number(x), number(x + 1.0)],
        );
        if let Some(m) = b.get("multipleOf").and_then(Value::as_f64) {
            let divides = a
                .get("multipleOf")
                .and_then(Value::as_f64)
                .is_some_and(|n| (n / m).fract() == 0.0);
            if !divides {
                let message = format!(
                    "{} admits only multiples of {m}; {} admits others",
                    self.labels.b, self.labels.a
                );
                let base = la.map_or(0.0, |(x, _)| x.ceil());
                let candidates = (0..4)
                    .map(|i| number(base + f64::from(i)))
                    .chain([json!(0.5)])
                    .collect();
                self.narrowed(
                    At::new(&a.loc, &b.loc, path),
                    Code::MultipleOfChanged,
                    message,
                    candidates,
                );
            }
        }
    }

    /// One bound of a number, a length or a count: `(value, exclusive)` on each side.
    fn bound(
        &mut self,
        at: At<'_>,
        name: &str,
        on_a: Option<(f64, bool)>,
        on_b: Option<(f64, bool)>,
        which: Bound,
        candidates: impl Fn((f64, bool)) -> Vec<Value>,
    ) {
        let Some(on_b) = on_b else {
            if let Some(on_a) = on_a {
                let message = format!(
                    "{} has {name} {}; {} has none",
                    self.labels.a, on_a.0, self.labels.b
                );
                self.widened(at, Code::BoundLoosened, message);
            }
            return;
        };
        match on_a.map(|on_a| which.within(on_a, on_b)) {
            Some(Order::Same) => {}
            Some(Order::Looser) => {
                let was = on_a.map_or("none".to_owned(), |(x, _)| x.to_string());
                let message = format!(
                    "{} has {name} {}; {} has {was}",
                    self.labels.b, on_b.0, self.labels.a
                );
                self.widened(at, Code::BoundLoosened, message);
            }
            _ => {
                let was = on_a.map_or("none".to_owned(), |(x, _)| x.to_string());
                let message = format!(
                    "{} has {name} {}{}; {} has {was}",
                    self.labels.b,
                    on_b.0,
                    if on_b.1 { " (exclusive)" } else { "" },
                    self.labels.a
                );
                let candidates = candidates(on_b);
                self.narrowed(at, Code::BoundTightened, message, candidates);
            }
        }
    }

    /// A pair of keywords bounding a length (of a string, of an array): each compared, with
    /// values one shorter and one longer than B's bounds (`of_length`) as witnesses.
    fn lengths(
        &mut self,
        a: &Side,
        b: &Side,
        path: &[Step],
        (min, max): (&str, &str),
        of_length: impl Fn(f64) -> Value,
    ) {
        let len = |s: &Side, k: &str| s.get(k).and_then(Value::as_f64).map(|x| (x, false));
        let at = At::new(&a.loc, &b.loc, path);
        self.bound(at, min, len(a, min), len(b, min), Bound::Lower, |(x, _)| {
            vec![of_length(x - 1.0)]
        });
        self.bound(at, max, len(a, max), len(b, max), Bound::Upper, |(x, _)| {
            vec![of_length(x + 1.0)]
        });
    }

    fn strings(&mut self, a: &Side, b: &Side, path: &[Step]) {
        let text = |n: f64| json!("a".repeat(n.clamp(0.0, 65_536.0) as usize));
        self.lengths(a, b, path, ("minLength", "maxLength"), text);
        for (keyword, code) in [
            ("pattern", Code::PatternChanged),
            ("format", Code::FormatChanged),
        ] {
            match (a.get(keyword), b.get(keyword)) {
                (x, Some(y)) if x != Some(y) => {
                    let message = format!(
                        "{} has {keyword} {y}; {} has {}",
                        self.labels.b,
                        self.labels.a,
                        x.map_or("none".to_owned(), Value::to_string)
                    );
                    let candidates = example(self.a, &a.loc, Types::STRING).into_iter().collect();
                    self.narrowed(At::new(&a.loc, &b.loc, path), code, message, candidates);
                }
                (Some(x), None) => {
                    let message = format!(
                        "{} has {keyword} {x}; {} has none",
                        self.labels.a, self.labels.b
                    );
                    self.widened(At::new(&a.loc, &b.loc, path), code, message);
                }
                _ => {}
            }
        }
    }

    fn arrays(&mut self, a: &Side, b: &Side, path: &[Step]) {
        let item = example(self.a, &a.loc.child("items"), Types::ALL).unwrap_or(Value::Null);
        let items = |n: f64| Value::Array(vec![item.clone(); n.clamp(0.0, 1024.0) as usize]);
        self.lengths(a, b, path, ("minItems", "maxItems"), items);
        match (
            a.get("uniqueItems") == Some(&json!(true)),
            b.get("uniqueItems") == Some(&json!(true)),
        ) {
            (false, true) => {
                let message = format!(
                    "{} requires distinct items; {} does not",
                    self.labels.b, self.labels.a
                );
                let candidates = vec![items(2.0)];
                self.narrowed(
                    At::new(&a.loc, &b.loc, path),
                    Code::UniqueItemsAdded,
                    message,
                    candidates,
                );
            }
            (true, false) => {
                let message = format!(
                    "{} requires distinct items; {} does not",
                    self.labels.a, self.labels.b
                );
                self.widened(
                    At::new(&a.loc, &b.loc, path),
                    Code::UniqueItemsRemoved,
                    message,
                );
            }
            _ => {}
        }
        // Position by position, then the items after the longer prefix.
        let prefix = |s: &Side| {
            s.get("prefixItems")
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        let (pa, pb) = (prefix(a), prefix(b));
        let at = |s: &Side, n: usize, i: usize| {
            if i < n {
                s.loc.index("prefixItems", i)
            } else {
                s.loc.child("items")
            }
        };
        for i in 0..pa.max(pb) {
            let mut here = path.to_vec();
            here.push(Step::Item(i));
            self.node(&at(a, pa, i), Types::ALL, &at(b, pb, i), &here);
        }
        if b.get("items").is_some() {
            let mut here = path.to_vec();
            here.push(Step::Items);
            self.node(
                &a.loc.child("items"),
                Types::ALL,
                &b.loc.child("items"),
                &here,
            );
        }
    }

    fn objects(&mut self, a: &Side, b: &Side, path: &[Step]) {
        if let Some(v) = b.get("unevaluatedProperties")
            && (v != &json!(false) || applies_in_place(b))
        {
            // What it refuses depends on what the applicators beside it evaluate.
            let message = format!(
                "{} has `unevaluatedProperties` beside applicators, which this analysis does not compare",
                self.labels.b
            );
            let candidates = self.candidates(&a.loc, Types::OBJECT);
            self.narrowed(
                At::new(&a.loc, &b.loc, path),
                Code::KeywordUnproven,
                message,
                candidates,
            );
        }
        let properties = |s: &Side| {
            s.get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let required = |s: &Side| -> Vec<String> {
            s.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let (pa, pb) = (properties(a), properties(b));
        let (ra, rb) = (required(a), required(b));
        let key = |k: &str| {
            let mut here = path.to_vec();
            here.push(Step::Key(k.to_owned()));
            here
        };
        for k in rb.iter().filter(|k| !ra.contains(k)) {
            let message = format!(
                "{} requires `{k}`; {} does not",
                self.labels.b, self.labels.a
            );
            let candidates = example(self.a, &a.loc, Types::OBJECT).into_iter().collect();
            self.narrowed(
                At::new(&a.loc, &b.loc, &key(k)),
                Code::RequiredAdded,
                message,
                candidates,
            );
        }
        for k in ra.iter().filter(|k| !rb.contains(k)) {
            let message = format!(
                "{} requires `{k}`; {} does not",
                self.labels.a, self.labels.b
            );
            self.widened(
                At::new(&a.loc, &b.loc, &key(k)),
                Code::RequiredRemoved,
                message,
            );
        }
        let a_other = a.loc.child("additionalProperties");
        let b_other = b.loc.child("additionalProperties");
        let (a_closed, b_closed) = (closed(a), closed(b));
        for k in pa.keys() {
            let a_k = a.loc.entry("properties", k);
            if pb.contains_key(k) {
                self.node(&a_k, Types::ALL, &b.loc.entry("properties", k), &key(k));
            } else if b_closed {
                let message = format!(
                    "{} admits member `{k}`; {}'s object does not declare it",
                    self.labels.a, self.labels.b
                );
                let candidates = self.with_member(a, k, &a_k);
                self.narrowed(
                    At::new(&a.loc, &b.loc, &key(k)),
                    Code::PropertyRemoved,
                    message,
                    candidates,
                );
            } else {
                self.node(&a_k, Types::ALL, &b_other, &key(k));
            }
        }
        for k in pb.keys().filter(|k| !pa.contains_key(*k)) {
            if !a_closed {
                self.node(&a_other, Types::ALL, &b.loc.entry("properties", k), &key(k));
            }
            let message = format!(
                "{} declares member `{k}`; {} does not",
                self.labels.b, self.labels.a
            );
            self.widened(
                At::new(&a.loc, &b.loc, &key(k)),
                Code::PropertyAdded,
                message,
            );
        }
        let mut other = path.to_vec();
        other.push(Step::Other);
        match (a_closed, b_closed) {
            (false, true) => {
                let message = format!(
                    "{} admits members it does not declare; {} does not",
                    self.labels.a, self.labels.b
                );
                let name = unused_key(Some(&pb));
                let candidates = self.with_member(a, &name, &a_other);
                self.narrowed(
                    At::new(&a.loc, &b.loc, &other),
                    Code::AdditionalPropertiesNarrowed,
                    message,
                    candidates,
                );
            }
            (true, false) => {
                let message = format!(
                    "{} admits members it does not declare; {} does not",
                    self.labels.b, self.labels.a
                );
                self.widened(
                    At::new(&a.loc, &b.loc, &other),
                    Code::AdditionalPropertiesWidened,
                    message,
                );
            }
            (false, false) if b.get("additionalProperties").is_some() => {
                self.node(&a_other, Types::ALL, &b_other, &other);
            }
            _ => {}
        }
    }

    /// Objects of A with member `name` (of the schema at `member`) beside the required ones.
    fn with_member(&self, a: &Side, name: &str, member: &Loc) -> Vec<Value> {
        let Some(Value::Object(mut base)) = example(self.a, &a.loc, Types::OBJECT) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for value in self
            .candidates(member, Types::ALL)
            .into_iter()
            .chain([Value::Null])
        {
            base.insert(name.to_owned(), value);
            out.push(Value::Object(base.clone()));
        }
        out
    }

    /// Keywords of B this walk does not compare: unproven, unless A has the same.
    fn uncompared(&mut self, a: &Side, b: &Side, path: &[Step]) {
        for (k, v) in b.map() {
            // The same `unevaluated*` on both sides means nothing when what is evaluated beside
            // it differs.
            let contextual = k.starts_with("unevaluated");
            if COMPARED.contains(&k.as_str())
                || is_annotation(k)
                || k == "unevaluatedProperties"
                || (!contextual && a.get(k) == Some(v))
            {
                continue;
            }
            let message = format!(
                "{} has `{k}`, which this analysis does not compare; {} has {}",
                self.labels.b,
                self.labels.a,
                a.get(k).map_or("none".to_owned(), Value::to_string)
            );
            let mut candidates = example(self.a, &a.loc, Types::ALL)
                .into_iter()
                .collect::<Vec<_>>();
            candidates.extend(self.candidates(&a.loc, a.types()));
            self.narrowed(
                At::new(&a.loc, &b.loc, path),
                Code::KeywordUnproven,
                message,
                candidates,
            );
        }
    }

    fn default(&mut self, a: &Side, b: &Side, path: &[Step]) {
        let (x, y) = (a.get("default"), b.get("default"));
        if x != y && (x.is_some() || y.is_some()) {
            let show = |v: Option<&Value>| v.map_or("none".to_owned(), Value::to_string);
            let message = format!(
                "default {} in {}, {} in {}",
                show(x),
                self.labels.a,
                show(y),
                self.labels.b
            );
            self.widened(At::new(&a.loc, &b.loc, path), Code::DefaultChanged, message);
        }
    }
}

/// Which end of a range.
#[derive(Debug, Clone, Copy)]
enum Bound {
    Lower,
    Upper,
}

/// How B's bound compares with A's.
enum Order {
    Same,
    Looser,
    Tighter,
}

impl Bound {
    fn within(self, a: (f64, bool), b: (f64, bool)) -> Order {
        let (x, y) = match self {
            Bound::Lower => (a, b),
            Bound::Upper => ((-a.0, a.1), (-b.0, b.1)),
        };
        // On the lower end: B is looser when its bound is below A's, or equal and not
        // stricter (inclusive where A's is exclusive).
        if y.0 < x.0 || (y.0 == x.0 && x.1 && !y.1) {
            Order::Looser
        } else if y == x {
            Order::Same
        } else {
            Order::Tighter
        }
    }
}

/// The bound of a number: the strictest of `minimum`/`exclusiveMinimum` (or the maxima).
fn bound(map: &Map<String, Value>, which: Bound) -> Option<(f64, bool)> {
    let (inclusive, exclusive) = match which {
        Bound::Lower => ("minimum", "exclusiveMinimum"),
        Bound::Upper => ("maximum", "exclusiveMaximum"),
    };
    let i = map
        .get(inclusive)
        .and_then(Value::as_f64)
        .map(|x| (x, false));
    let e = map
        .get(exclusive)
        .and_then(Value::as_f64)
        .map(|x| (x, true));
    match (i, e) {
        (Some(i), Some(e)) => Some(match which {
            Bound::Lower if e.0 >= i.0 => e,
            Bound::Upper if e.0 <= i.0 => e,
            _ => i,
        }),
        (i, e) => i.or(e),
    }
}

/// Keywords that apply other schemas to the same value.
const IN_PLACE: &[&str] = &[
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

fn applies_in_place(s: &Side) -> bool {
    IN_PLACE.iter().any(|k| s.get(k).is_some())
}

/// Whether an object schema admits no member it does not declare: `additionalProperties:
/// false`, or `unevaluatedProperties: false` with nothing else evaluating members beside it.
fn closed(s: &Side) -> bool {
    let f = Some(&json!(false));
    s.get("additionalProperties") == f
        || (s.get("unevaluatedProperties") == f
            && s.get("additionalProperties").is_none()
            && s.get("patternProperties").is_none()
            && !applies_in_place(s))
}

/// The keyword of a schema that is a union and nothing more (`oneOf` or `anyOf` beside
/// annotations only).
fn union_of(s: &Side) -> Option<&'static str> {
    let keyword = ["oneOf", "anyOf"]
        .into_iter()
        .find(|k| s.get(k).is_some())?;
    s.map()
        .keys()
        .all(|k| k == keyword || is_annotation(k) || k == "$defs")
        .then_some(keyword)
}

/// The values of a type set that has few: booleans and null.
fn finite(types: Types) -> Option<Vec<Value>> {
    if types.is_empty() || !(Types::BOOLEAN | Types::NULL).contains(types) {
        return None;
    }
    let all = [json!(false), json!(true), Value::Null];
    Some(
        all.into_iter()
            .filter(|v| types.contains(Types::of_value(v)))
            .collect(),
    )
}

fn has_reference(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(has_reference),
        Value::Array(items) => items.iter().any(has_reference),
        _ => false,
    }
}

/// JSON equality, numbers by value (`1` is `1.0`).
fn same_json(x: &Value, y: &Value) -> bool {
    match (x, y) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => x == y,
    }
}

fn describe(t: Types) -> String {
    match t {
        Types::NULL => "null".to_owned(),
        t if t.each().count() == 1 => format!("{}s", t.name()),
        t => t.name(),
    }
}

fn list(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
    let more = if values.len() > 8 { ", ..." } else { "" };
    format!("{}{more}", shown.join(", "))
}
