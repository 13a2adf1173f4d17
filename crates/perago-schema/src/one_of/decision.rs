//! How a `oneOf` of closed objects that no single rule distinguishes chooses its branch: a tree
//! of tests on its members (a member's presence, its JSON type, its tag), each exact because
//! the branches are closed. [`decider`](super::decider) builds it; the interpreter and generated
//! readers walk the same tree, so both choose the same branch and report the same violation
//! when none matches.

use crate::check::{self, Out, TagValue};
use crate::kind::Kind;
use crate::path::Path;
use serde_json::Value;

/// A decision: the members it tests and its tests, the first being where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionTree {
    /// The members the tests read, by index.
    pub members: Vec<String>,
    /// The tests; each refers to the next by its index here.
    pub tests: Vec<Test>,
}

/// One test of a [`DecisionTree`]. Each outcome leads to the next test, or (`None`) to no branch:
/// reported at the member tested, alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// The branch with this index, if any matches.
    Branch(usize),
    /// Member `member` present: `then`; absent: `otherwise`.
    Has {
        member: usize,
        then: usize,
        otherwise: usize,
    },
    /// Member `member`'s JSON type: `(kinds, next)` per group of kinds of values (`Integer`
    /// for integral numbers, `Number` for the others); of no group's, a type error listing
    /// `expected` (the types written); absent, `absent` (else `required`).
    Type {
        member: usize,
        groups: Vec<(Vec<Kind>, usize)>,
        expected: Vec<Kind>,
        absent: Option<usize>,
    },
    /// Member `member` as a tag: `(values, next)` per group of tags (strings, integers and
    /// booleans); another value, `other` (else the tags listed); absent, `absent` (else
    /// `required`).
    Tag {
        member: usize,
        tags: Vec<(Vec<Value>, usize)>,
        other: Option<usize>,
        absent: Option<usize>,
    },
}

/// What a [`DecisionTree`] reads of an object's members (by the decision's member index).
pub trait Facts {
    /// True when the member is present.
    fn has(&self, member: usize) -> bool;
    /// The member's JSON type (an integral number is an integer) and how a message names what
    /// was found (`a number` for `1.0`, as `check::type_name` says); `None` when absent.
    fn kind(&self, member: usize) -> Option<(Kind, &'static str)>;
    /// True when the member's value is `tag` (JSON equality: `1.0` is `1`).
    fn is_tag(&self, member: usize, tag: TagValue<'_>) -> bool;
}

/// Why no branch can match, reported alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal<'d> {
    /// A member every branch left requires is absent.
    Required(&'d str),
    /// A member is of no branch's type: the types expected, and what was found.
    Type(&'d str, String, &'static str),
    /// A member names no branch: the tags it may be.
    Tag(&'d str, Vec<TagValue<'d>>),
}

impl DecisionTree {
    /// The branch the object's members choose, or why none can match.
    pub fn decide(&self, facts: &impl Facts) -> Result<usize, Refusal<'_>> {
        let mut at = 0;
        loop {
            at = match &self.tests[at] {
                Test::Branch(b) => return Ok(*b),
                Test::Has {
                    member,
                    then,
                    otherwise,
                } => {
                    if facts.has(*member) {
                        *then
                    } else {
                        *otherwise
                    }
                }
                Test::Type {
                    member,
                    groups,
                    expected,
                    absent,
                } => {
                    let name = self.members[*member].as_str();
                    match facts.kind(*member) {
                        None => absent.ok_or(Refusal::Required(name))?,
                        Some((kind, found)) => {
                            match groups.iter().find(|(kinds, _)| kinds.contains(&kind)) {
                                Some((_, next)) => *next,
                                None => {
                                    let expected =
                                        crate::kind::kinds_text(expected.iter().copied());
                                    return Err(Refusal::Type(name, expected, found));
                                }
                            }
                        }
                    }
                }
                Test::Tag {
                    member,
                    tags,
                    other,
                    absent,
                } => {
                    let name = self.members[*member].as_str();
                    if !facts.has(*member) {
                        absent.ok_or(Refusal::Required(name))?
                    } else {
                        let named = tags.iter().find(|(values, _)| {
                            values
                                .iter()
                                .filter_map(TagValue::of)
                                .any(|t| facts.is_tag(*member, t))
                        });
                        match (named, other) {
                            (Some((_, next)), _) | (None, Some(next)) => *next,
                            (None, None) => {
                                let all = tags.iter().flat_map(|(values, _)| values);
                                let all = all.filter_map(TagValue::of).collect();
                                return Err(Refusal::Tag(name, all));
                            }
                        }
                    }
                }
            };
        }
    }
}

impl Refusal<'_> {
    /// Reports it at the object at `path`.
    pub fn report(&self, path: &Path<'_>, out: &mut Out) {
        match self {
            Refusal::Required(name) => check::required(&path.key(name), out),
            Refusal::Type(name, expected, found) => {
                check::type_error_named(out, &path.key(name), expected, found)
            }
            Refusal::Tag(name, tags) => check::unknown_tag(&path.key(name), out, tags),
        }
    }
}
