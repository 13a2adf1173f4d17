//! The interpreter: a compiled [`Program`] run over a document's [`Tape`]. Every violation is
//! collected, in the order the generated readers report them for the forms they share
//! (unknown members in document order, then declared properties in schema order); the
//! applicators that look at one value several times (`anyOf`, `oneOf`, `not`, `if`) run their
//! branches over the same stretch of tape, and the members and items each schema evaluated
//! are tracked (as bits) only where `unevaluated*` or a closed composition needs them.

use crate::check::{self, Num, Out, push};
use crate::kind::Kind;
use crate::path::Path;
use crate::program::{Additional, Close, Discriminated, Ix, Node, Program, ty};
use crate::tape::{Tape, Tok};
use crate::violation::Code;
use serde_json::Value;

/// Which members (or items) of one object (or array) were evaluated.
#[derive(Debug, Clone)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    #[inline]
    fn set(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    #[inline]
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    fn merge(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

#[inline]
fn mark(ann: &mut Option<&mut Bits>, i: usize) {
    if let Some(b) = ann {
        b.set(i);
    }
}

/// One run of a program over one tape.
pub(crate) struct Eval<'a> {
    pub program: &'a Program,
    pub tape: &'a Tape,
    pub input: &'a str,
}

impl Eval<'_> {
    #[inline]
    fn tok(&self, at: usize) -> Tok {
        self.tape.toks[at]
    }

    /// The index just past the value at `at`.
    #[inline]
    fn next(&self, at: usize) -> usize {
        match self.tok(at) {
            Tok::Array { end, .. } | Tok::Object { end, .. } => end as usize,
            _ => at + 1,
        }
    }

    #[inline(always)]
    fn text(&self, at: usize) -> Option<&str> {
        match self.tok(at) {
            Tok::Str(span) => Some(self.tape.text(self.input, span)),
            _ => None,
        }
    }

    fn num(&self, at: usize) -> Option<Num> {
        match self.tok(at) {
            Tok::U64(u) => Some(Num::U(u)),
            Tok::I64(i) => Some(Num::I(i)),
            Tok::F64(f) => Some(Num::F(f)),
            _ => None,
        }
    }

    /// The members of the object at `at`: (ordinal, key index, value index).
    fn members(&self, at: usize) -> Members<'_> {
        let len = match self.tok(at) {
            Tok::Object { len, .. } => len as usize,
            _ => 0,
        };
        Members {
            eval: self,
            next: at + 1,
            left: len,
            ordinal: 0,
        }
    }

    fn member(&self, at: usize, name: &str) -> Option<usize> {
        self.members(at)
            .find(|(_, k, _)| self.text(*k) == Some(name))
            .map(|(_, _, v)| v)
    }

    /// Runs node `ix` on the value at `at`. `top` says the value is entered here (the root,
    /// a member, an item), not reached in place from a schema on the same value: only there
    /// is an object closed. `ann` collects the members or items evaluated, when asked.
    #[inline]
    pub(crate) fn run(
        &self,
        ix: Ix,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        top: bool,
        ann: Option<&mut Bits>,
    ) -> bool {
        // `{}` and `true` decide here, where they are called: most members of an open object
        // cost no more than this.
        let node = &self.program.nodes[ix as usize];
        node.any || self.run_node(node, at, path, out, top, ann)
    }

    /// [`run`](Self::run) for a node that is not `{}`.
    fn run_node(
        &self,
        node: &Node,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        top: bool,
        mut ann: Option<&mut Bits>,
    ) -> bool {
        if node.reject {
            check::not_allowed(path, out);
            return false;
        }
        if let Some(target) = node.alias {
            return self.run(target, at, path, out, top, ann);
        }
        if let Some(inner) = node.nullable {
            return matches!(self.tok(at), Tok::Null) || self.run(inner, at, path, out, top, ann);
        }
        if let Some(d) = &node.discriminated {
            return self.discriminated(d, at, path, out, top, ann);
        }
        if let Some(u) = &node.union {
            let tok = self.tok(at);
            return match u.branches.iter().find(|(bits, _)| has_type(*bits, tok)) {
                Some((bits, branch)) => match &u.objects {
                    Some(d) if *bits == ty::OBJECT => {
                        self.discriminated(d, at, path, out, top, ann)
                    }
                    _ => self.run(*branch, at, path, out, top, ann),
                },
                None => {
                    push(
                        out,
                        path,
                        Code::Type,
                        format!("must be {}, found {}", u.expected, found(tok)),
                    );
                    false
                }
            };
        }
        let tok = self.tok(at);
        if let Some(t) = &node.types
            && !has_type(t.bits, tok)
        {
            push(
                out,
                path,
                Code::Type,
                format!("must be {}, found {}", t.expected, found(tok)),
            );
            return false;
        }
        let before = out.len();
        let container_len = match tok {
            Tok::Object { len, .. } | Tok::Array { len, .. } => Some(len as usize),
            _ => None,
        };
        let local_needed = node.unevaluated_properties.is_some()
            || node.unevaluated_items.is_some()
            || (top && node.close == Close::Dynamic);
        let mut local = match container_len {
            Some(n) if local_needed => Some(Bits::new(n)),
            _ => None,
        };
        {
            let mut sink: Option<&mut Bits> = match local.as_mut() {
                Some(b) => Some(b),
                None => ann.as_deref_mut(),
            };
            if let Some(c) = &node.constant {
                self.constant(c, at, path, out);
            }
            if let Some(values) = &node.enumeration {
                self.enumeration(values, at, path, out);
            }
            match tok {
                Tok::U64(_) | Tok::I64(_) | Tok::F64(_) => self.number(node, at, path, out),
                Tok::Str(span) => {
                    let s = self.tape.text(self.input, span);
                    check::string_rules(s, path, out, &node.lengths, node.pattern.as_ref());
                    if let Some(f) = node.format {
                        check::format(s, path, out, f);
                    }
                }
                Tok::Array { len, .. } => self.array(node, at, len as usize, path, out, &mut sink),
                Tok::Object { .. } => self.object(node, at, path, out, top, &mut sink),
                Tok::Null | Tok::Bool(_) => {}
            }
            self.in_place(node, at, path, out, &mut sink);
            if let Some(u) = node.unevaluated_items
                && let (Tok::Array { .. }, Some(bits)) = (tok, sink.as_deref_mut())
            {
                self.unevaluated_items(u, at, path, out, bits);
            }
            if let Some(u) = node.unevaluated_properties
                && let (Tok::Object { .. }, Some(bits)) = (tok, sink.as_deref_mut())
            {
                self.unevaluated_properties(u, at, path, out, bits);
            }
            if top
                && node.close == Close::Dynamic
                && let (Tok::Object { .. }, Some(bits)) = (tok, sink)
            {
                for (k, key, _) in self.members(at) {
                    if !bits.get(k) {
                        check::unknown_field(&path.key(self.text(key).unwrap_or("")), out);
                        bits.set(k);
                    }
                }
            }
        }
        if let (Some(local), Some(ann)) = (&local, ann) {
            ann.merge(local);
        }
        out.len() == before
    }

    fn discriminated(
        &self,
        d: &Discriminated,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        top: bool,
        ann: Option<&mut Bits>,
    ) -> bool {
        let tok = self.tok(at);
        if !matches!(tok, Tok::Object { .. }) {
            push(
                out,
                path,
                Code::Type,
                format!("must be an object, found {}", found(tok)),
            );
            return false;
        }
        if let Some(decision) = &d.decision {
            let facts = Tested {
                eval: self,
                at,
                members: &decision.members,
            };
            return match decision.decide(&facts) {
                Ok(b) => self.run(d.branches[b].1, at, path, out, top, ann),
                Err(refusal) => {
                    refusal.report(path, out);
                    false
                }
            };
        }
        if d.properties.is_empty() {
            return self.decided_by_keys(d, at, path, out, top, ann);
        }
        let mut present = d
            .properties
            .iter()
            .enumerate()
            .filter_map(|(p, name)| self.member(at, name).map(|v| (p, v)));
        let (p, v) = match (present.next(), present.next()) {
            (Some(one), None) => one,
            (Some(first), Some(second)) => {
                // No branch declares two discriminators.
                let mut found = vec![
                    d.properties[first.0].as_str(),
                    d.properties[second.0].as_str(),
                ];
                found.extend(present.map(|(p, _)| d.properties[p].as_str()));
                check::several_branch_keys(path, out, &found);
                return false;
            }
            (None, _) => {
                // Several branches without a tag: their keys tell them apart.
                if d.keys.iter().any(|k| !k.is_empty()) {
                    return self.decided_by_keys(d, at, path, out, top, ann);
                }
                if let Some((_, branch)) = d.branches.iter().find(|(t, _)| t.is_none()) {
                    return self.run(*branch, at, path, out, top, ann);
                }
                if let [property] = d.properties.as_slice() {
                    check::required(&path.key(property), out);
                } else {
                    let required: Vec<[&str; 1]> = d
                        .branches
                        .iter()
                        .filter_map(|(t, _)| t.as_ref())
                        .map(|(p, _)| [d.properties[*p].as_str()])
                        .collect();
                    let required: Vec<&[&str]> = required.iter().map(|r| r.as_slice()).collect();
                    check::no_branch_key(path, out, &required);
                }
                return false;
            }
        };
        let chosen = d.branches.iter().find(|(t, _)| {
            t.as_ref()
                .is_some_and(|(q, tags)| *q == p && tags.iter().any(|tag| self.is_tag(v, tag)))
        });
        match chosen {
            Some((_, branch)) => self.run(*branch, at, path, out, top, ann),
            None => {
                let tags: Vec<check::TagValue<'_>> = d
                    .branches
                    .iter()
                    .filter_map(|(t, _)| t.as_ref())
                    .filter(|(q, _)| *q == p)
                    .flat_map(|(_, tags)| tags.iter().filter_map(check::TagValue::of))
                    .collect();
                check::unknown_tag(&path.key(&d.properties[p]), out, &tags);
                false
            }
        }
    }

    /// True when the value at `at` is `tag` (a string, integer or boolean `const`).
    fn is_tag(&self, at: usize, tag: &Value) -> bool {
        check::TagValue::of(tag).is_some_and(|t| self.is_tag_value(at, t))
    }

    /// True when the value at `at` is `tag`.
    fn is_tag_value(&self, at: usize, tag: check::TagValue<'_>) -> bool {
        match tag {
            check::TagValue::Str(s) => self.text(at) == Some(s),
            check::TagValue::Bool(b) => matches!(self.tok(at), Tok::Bool(x) if x == b),
            t => self.num(at).is_some_and(|n| t.is_number(n)),
        }
    }

    /// A `oneOf` discriminated by keys (or, without its discriminator, the branches without a
    /// tag): the branch whose own keys the object has runs alone; no such key, or keys of
    /// several branches, is reported alone.
    fn decided_by_keys(
        &self,
        d: &Discriminated,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        top: bool,
        ann: Option<&mut Bits>,
    ) -> bool {
        let present: Vec<Option<usize>> = d
            .keys
            .iter()
            .flatten()
            .map(|k| self.member(at, k))
            .collect();
        let mut found = Vec::new();
        let mut chosen = Vec::new();
        let mut i = 0;
        for (b, keys) in d.keys.iter().enumerate() {
            for k in keys {
                if present[i].is_some() {
                    found.push(k.as_str());
                    if !chosen.contains(&b) {
                        chosen.push(b);
                    }
                }
                i += 1;
            }
        }
        match chosen[..] {
            [b] => self.run(d.branches[b].1, at, path, out, top, ann),
            [] => {
                let required: Vec<Vec<&str>> = d
                    .keys
                    .iter()
                    .zip(&d.branches)
                    .map(|(keys, (tag, branch))| {
                        // A branch with a tag is chosen by its discriminator.
                        if let Some((p, _)) = tag {
                            return vec![d.properties[*p].as_str()];
                        }
                        let mut node = &self.program.nodes[*branch as usize];
                        while let Some(target) = node.alias {
                            node = &self.program.nodes[target as usize];
                        }
                        keys.iter()
                            .filter(|k| {
                                node.properties
                                    .iter()
                                    .zip(&node.property_required)
                                    .any(|((name, _), r)| *r && name == *k)
                            })
                            .map(String::as_str)
                            .collect()
                    })
                    .collect();
                let required: Vec<&[&str]> = required.iter().map(Vec::as_slice).collect();
                check::no_branch_key(path, out, &required);
                false
            }
            _ => {
                check::several_branch_keys(path, out, &found);
                false
            }
        }
    }

    fn constant(&self, c: &Value, at: usize, path: &Path<'_>, out: &mut Out) {
        match c {
            Value::String(expected) => {
                check::const_text(self.text(at), path, out, expected);
            }
            other => {
                if !self.equal_value(at, other) {
                    check::const_violation(path, out, other);
                }
            }
        }
    }

    fn enumeration(&self, values: &[Value], at: usize, path: &Path<'_>, out: &mut Out) {
        if values.iter().any(|v| self.equal_value(at, v)) {
            return;
        }
        match crate::kind::string_values(values) {
            Some(allowed) => {
                check::enum_text(None, path, out, &allowed);
            }
            None => check::enum_violation(path, out, values),
        }
    }

    fn number(&self, node: &Node, at: usize, path: &Path<'_>, out: &mut Out) {
        let Some(n) = self.num(at) else { return };
        if node.integer_range {
            check::integer_num(n, path, out, &node.bounds);
        } else if node.bounds != check::Bounds::NONE {
            check::number_num(n, path, out, &node.bounds);
        }
        if let Some(m) = node.multiple_of {
            check::multiple_of(&n.value(), path, out, m);
        }
    }

    fn array(
        &self,
        node: &Node,
        at: usize,
        len: usize,
        path: &Path<'_>,
        out: &mut Out,
        sink: &mut Option<&mut Bits>,
    ) {
        check::item_count(len as u64, path, out, node.min_items, node.max_items);
        let mut matched = 0u64;
        let mut item = at + 1;
        let wants_items = !node.prefix_items.is_empty() || node.items.is_some();
        if wants_items || node.contains.is_some() {
            for i in 0..len {
                let item_path = path.index(i);
                let schema =
                    node.prefix_items
                        .get(i)
                        .copied()
                        .or(if i >= node.prefix_items.len() {
                            node.items
                        } else {
                            None
                        });
                if let Some(s) = schema {
                    self.run(s, item, &item_path, out, true, None);
                    mark(sink, i);
                }
                if let Some(c) = node.contains {
                    let mark_at = out.len();
                    if self.run(c.node, item, &item_path, out, true, None) {
                        matched += 1;
                        mark(sink, i);
                    }
                    out.truncate(mark_at);
                }
                item = self.next(item);
            }
        }
        if let Some(c) = node.contains {
            if matched < c.min {
                push(
                    out,
                    path,
                    Code::Contains,
                    format!(
                        "must contain at least {} {} matching `contains`, found {matched}",
                        c.min,
                        if c.min == 1 { "item" } else { "items" }
                    ),
                );
            }
            if let Some(max) = c.max.filter(|m| matched > *m) {
                push(
                    out,
                    path,
                    Code::Contains,
                    format!(
                        "must contain at most {max} {} matching `contains`, found {matched}",
                        if max == 1 { "item" } else { "items" }
                    ),
                );
            }
        }
        if node.unique_items {
            let mut starts = Vec::with_capacity(len);
            let mut item = at + 1;
            for _ in 0..len {
                starts.push(item);
                item = self.next(item);
            }
            check::unique_items(len, |i, j| self.equal(starts[i], starts[j]), path, out);
        }
    }

    fn object(
        &self,
        node: &Node,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        top: bool,
        sink: &mut Option<&mut Bits>,
    ) {
        let n = node.properties.len();
        let mut small = [u32::MAX; 16];
        let mut large = Vec::new();
        let found: &mut [u32] = if n <= small.len() {
            &mut small[..n]
        } else {
            large.resize(n, u32::MAX);
            &mut large[..]
        };
        let closed_here = top && node.close == Close::Static;
        let mut count = 0u64;
        for (k, key_at, value_at) in self.members(at) {
            count += 1;
            let key = self.text(key_at).unwrap_or("");
            let declared = node.properties.iter().position(|(p, _)| p == key);
            if let Some(p) = declared {
                found[p] = value_at as u32;
                mark(sink, k);
            }
            let mut matched = false;
            for (pattern, s) in &node.pattern_properties {
                if pattern.is_match(key) {
                    matched = true;
                    self.run(*s, value_at, &path.key(key), out, true, None);
                    mark(sink, k);
                }
            }
            if declared.is_some() || matched {
                continue;
            }
            match node.additional {
                Additional::Schema(s) => {
                    self.run(s, value_at, &path.key(key), out, true, None);
                    mark(sink, k);
                }
                Additional::Forbidden => {
                    check::unknown_field(&path.key(key), out);
                    mark(sink, k);
                }
                Additional::Unsaid if closed_here => {
                    check::unknown_field(&path.key(key), out);
                    mark(sink, k);
                }
                Additional::Unsaid => {}
            }
        }
        for (p, (name, s)) in node.properties.iter().enumerate() {
            match found[p] {
                u32::MAX if node.property_required[p] => check::required(&path.key(name), out),
                u32::MAX => {}
                v => {
                    self.run(*s, v as usize, &path.key(name), out, true, None);
                }
            }
        }
        for name in &node.required_others {
            if self.member(at, name).is_none() {
                check::required(&path.key(name), out);
            }
        }
        if let Some(names) = node.property_names {
            for (_, key_at, _) in self.members(at) {
                let key = self.text(key_at).unwrap_or("");
                let start = out.len();
                self.run(names, key_at, &path.key(key), out, true, None);
                check::property_name(key, out, start);
            }
        }
        if node.min_properties.is_some() || node.max_properties.is_some() {
            check::property_count(count, path, out, node.min_properties, node.max_properties);
        }
        for (name, needed) in &node.dependent_required {
            if self.member(at, name).is_none() {
                continue;
            }
            for n in needed {
                if self.member(at, n).is_none() {
                    check::dependent_required(&path.key(n), out, name);
                }
            }
        }
    }

    fn in_place(
        &self,
        node: &Node,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        sink: &mut Option<&mut Bits>,
    ) {
        if let Some(r) = node.reference {
            self.run(r, at, path, out, false, sink.as_deref_mut());
        }
        for s in &node.all_of {
            self.run(*s, at, path, out, false, sink.as_deref_mut());
        }
        if !node.any_of.is_empty() {
            let mut any = false;
            for s in &node.any_of {
                if self.branch(*s, at, path, out, sink) {
                    any = true;
                    if sink.is_none() {
                        break;
                    }
                }
            }
            if !any {
                push(
                    out,
                    path,
                    Code::AnyOf,
                    "must match at least one schema of `anyOf`",
                );
            }
        }
        if !node.one_of.is_empty() {
            let mut matching = Vec::new();
            let mut bits = Vec::new();
            for (i, s) in node.one_of.iter().enumerate() {
                let mut fresh = sink.as_ref().map(|b| Bits::new(b.0.len() * 64));
                let start = out.len();
                if self.run(*s, at, path, out, false, fresh.as_mut()) {
                    matching.push(i);
                    bits.extend(fresh);
                }
                out.truncate(start);
            }
            match matching.as_slice() {
                [_] => {
                    if let (Some(sink), Some(b)) = (sink.as_deref_mut(), bits.first()) {
                        sink.merge(b);
                    }
                }
                [] => push(
                    out,
                    path,
                    Code::OneOf,
                    "must match exactly one schema of `oneOf`, matches none",
                ),
                many => push(
                    out,
                    path,
                    Code::OneOf,
                    format!(
                        "must match exactly one schema of `oneOf`, matches {} (branches {})",
                        many.len(),
                        many.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            }
        }
        if let Some(s) = node.not {
            let start = out.len();
            let valid = self.run(s, at, path, out, false, None);
            out.truncate(start);
            if valid {
                push(out, path, Code::Not, "must not match the schema of `not`");
            }
        }
        if let Some(c) = node.condition {
            if self.branch(c, at, path, out, sink) {
                if let Some(t) = node.then {
                    self.run(t, at, path, out, false, sink.as_deref_mut());
                }
            } else if let Some(e) = node.otherwise {
                self.run(e, at, path, out, false, sink.as_deref_mut());
            }
        }
        for (name, s) in &node.dependent_schemas {
            if matches!(self.tok(at), Tok::Object { .. }) && self.member(at, name).is_some() {
                self.run(*s, at, path, out, false, sink.as_deref_mut());
            }
        }
    }

    /// Runs a branch whose violations are not reported; what it evaluated counts only if it
    /// holds.
    fn branch(
        &self,
        s: Ix,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        sink: &mut Option<&mut Bits>,
    ) -> bool {
        let mut fresh = sink.as_ref().map(|b| Bits::new(b.0.len() * 64));
        let start = out.len();
        let valid = self.run(s, at, path, out, false, fresh.as_mut());
        out.truncate(start);
        if valid && let (Some(sink), Some(b)) = (sink.as_deref_mut(), &fresh) {
            sink.merge(b);
        }
        valid
    }

    fn unevaluated_items(&self, u: Ix, at: usize, path: &Path<'_>, out: &mut Out, bits: &mut Bits) {
        let Tok::Array { len, .. } = self.tok(at) else {
            return;
        };
        let mut item = at + 1;
        for i in 0..len as usize {
            if !bits.get(i) {
                self.run(u, item, &path.index(i), out, true, None);
                bits.set(i);
            }
            item = self.next(item);
        }
    }

    fn unevaluated_properties(
        &self,
        u: Ix,
        at: usize,
        path: &Path<'_>,
        out: &mut Out,
        bits: &mut Bits,
    ) {
        let forbidden = self.program.nodes[u as usize].reject;
        for (k, key_at, value_at) in self.members(at) {
            if bits.get(k) {
                continue;
            }
            let key = self.text(key_at).unwrap_or("");
            if forbidden {
                check::unknown_field(&path.key(key), out);
            } else {
                self.run(u, value_at, &path.key(key), out, true, None);
            }
            bits.set(k);
        }
    }

    /// JSON equality of two values on the tape.
    fn equal(&self, a: usize, b: usize) -> bool {
        match (self.tok(a), self.tok(b)) {
            (Tok::Null, Tok::Null) => true,
            (Tok::Bool(x), Tok::Bool(y)) => x == y,
            (Tok::Str(_), Tok::Str(_)) => self.text(a) == self.text(b),
            (Tok::Array { len: m, .. }, Tok::Array { len: n, .. }) => {
                if m != n {
                    return false;
                }
                let (mut i, mut j) = (a + 1, b + 1);
                for _ in 0..m {
                    if !self.equal(i, j) {
                        return false;
                    }
                    i = self.next(i);
                    j = self.next(j);
                }
                true
            }
            (Tok::Object { len: m, .. }, Tok::Object { len: n, .. }) => {
                m == n
                    && self.members(a).all(|(_, k, v)| {
                        self.text(k)
                            .and_then(|key| self.member(b, key))
                            .is_some_and(|w| self.equal(v, w))
                    })
            }
            _ => match (self.num(a), self.num(b)) {
                (Some(x), Some(y)) => x.equals(y),
                _ => false,
            },
        }
    }

    /// JSON equality of a value on the tape and a schema's value.
    fn equal_value(&self, at: usize, v: &Value) -> bool {
        match (self.tok(at), v) {
            (Tok::Null, Value::Null) => true,
            (Tok::Bool(x), Value::Bool(y)) => x == *y,
            (Tok::Str(_), Value::String(s)) => self.text(at) == Some(s.as_str()),
            (Tok::Array { len, .. }, Value::Array(items)) => {
                if len as usize != items.len() {
                    return false;
                }
                let mut i = at + 1;
                for item in items {
                    if !self.equal_value(i, item) {
                        return false;
                    }
                    i = self.next(i);
                }
                true
            }
            (Tok::Object { len, .. }, Value::Object(map)) => {
                len as usize == map.len()
                    && self.members(at).all(|(_, k, value)| {
                        self.text(k)
                            .and_then(|key| map.get(key))
                            .is_some_and(|w| self.equal_value(value, w))
                    })
            }
            (_, Value::Number(n)) => self.num(at).is_some_and(|x| x.equals(Num::of(n))),
            _ => false,
        }
    }
}

/// Iterates an object's members on the tape.
struct Members<'e> {
    eval: &'e Eval<'e>,
    next: usize,
    left: usize,
    ordinal: usize,
}

impl Iterator for Members<'_> {
    type Item = (usize, usize, usize);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = self.next;
        let value = key + 1;
        self.next = self.eval.next(value);
        self.ordinal += 1;
        Some((self.ordinal - 1, key, value))
    }
}

fn has_type(bits: u8, tok: Tok) -> bool {
    let own = match tok {
        Tok::Null => ty::NULL,
        Tok::Bool(_) => ty::BOOLEAN,
        Tok::U64(_) | Tok::I64(_) => ty::INTEGER | ty::NUMBER,
        Tok::F64(f) if f.fract() == 0.0 => ty::INTEGER | ty::NUMBER,
        Tok::F64(_) => ty::NUMBER,
        Tok::Str(_) => ty::STRING,
        Tok::Array { .. } => ty::ARRAY,
        Tok::Object { .. } => ty::OBJECT,
    };
    bits & own != 0
}

/// The members of the object at `at` a [`DecisionTree`](crate::one_of::DecisionTree) tests.
struct Tested<'e, 'a> {
    eval: &'e Eval<'a>,
    at: usize,
    members: &'e [String],
}

impl crate::one_of::Facts for Tested<'_, '_> {
    fn has(&self, member: usize) -> bool {
        self.eval.member(self.at, &self.members[member]).is_some()
    }

    fn kind(&self, member: usize) -> Option<(Kind, &'static str)> {
        let v = self.eval.member(self.at, &self.members[member])?;
        let tok = self.eval.tok(v);
        let kind = match tok {
            Tok::Null => Kind::Null,
            Tok::Bool(_) => Kind::Boolean,
            Tok::U64(_) | Tok::I64(_) => Kind::Integer,
            Tok::F64(f) if f.fract() == 0.0 => Kind::Integer,
            Tok::F64(_) => Kind::Number,
            Tok::Str(_) => Kind::String,
            Tok::Array { .. } => Kind::Array,
            Tok::Object { .. } => Kind::Object,
        };
        Some((kind, found(tok)))
    }

    fn is_tag(&self, member: usize, tag: check::TagValue<'_>) -> bool {
        self.eval
            .member(self.at, &self.members[member])
            .is_some_and(|v| self.eval.is_tag_value(v, tag))
    }
}

/// What a value is, for messages (as [`check::type_name`] says of a `Value`).
fn found(tok: Tok) -> &'static str {
    match tok {
        Tok::Null => "null",
        Tok::Bool(_) => "a boolean",
        Tok::U64(_) | Tok::I64(_) => "an integer",
        Tok::F64(_) => "a number",
        Tok::Str(_) => "a string",
        Tok::Array { .. } => "an array",
        Tok::Object { .. } => "an object",
    }
}
