//! How a `oneOf` of closed objects that no single rule tells apart chooses its branch: a tree
//! of tests on its members (a member's presence, its JSON type, its tag), each exact because
//! the branches are closed. Lint builds it (`lint::decider`); the interpreter and generated
//! readers walk the same tree, so both choose the same branch and report the same violation
//! when none can hold.

use crate::check::{self, Out, TagValue};
use crate::kind::Kind;
use crate::path::Path;
use serde_json::Value;

/// A decision: the members it tests and its tests, the first being where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The members the tests read, by index.
    pub members: Vec<String>,
    /// The tests; each refers to the next by its index here.
    pub tests: Vec<Test>,
}

/// One test of a [`Decision`].
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// The branch with this index holds, if any does.
    Branch(usize),
    /// Member `member` present: `then`; absent: `otherwise`. The branches of `then` declare it
    /// and require it, those of `otherwise` do not declare it.
    Has {
        member: usize,
        then: usize,
        otherwise: usize,
    },
    /// Member `member`, which every branch left requires (absent: `required` at it), is of one
    /// group's JSON types: `(types, next)`, the groups' types disjoint (of none: a type error
    /// at it, listing them all).
    Type {
        member: usize,
        groups: Vec<(Vec<Kind>, usize)>,
    },
    /// Member `member` is a tag: `(values, next)` per branch that declares it (its `const`,
    /// or its `enum`'s values: strings, integers or booleans; of none: every tag listed at
    /// it). Absent: `absent`, the branches that do not declare it, or `required` at it when
    /// every branch left does.
    Tag {
        member: usize,
        tags: Vec<(Vec<Value>, usize)>,
        absent: Option<usize>,
    },
}

/// What a [`Decision`] reads of an object's members (by the decision's member index).
pub trait Facts {
    /// True when the member is present.
    fn has(&self, member: usize) -> bool;
    /// The member's JSON type (an integral number is an integer) and how a message names what
    /// was found (`a number` for `1.0`, as `check::type_name` says); `None` when absent.
    fn kind(&self, member: usize) -> Option<(Kind, &'static str)>;
    /// True when the member's value is `tag` (JSON equality: `1.0` is `1`).
    fn is_tag(&self, member: usize, tag: TagValue<'_>) -> bool;
}

/// Why no branch can hold, reported alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal<'d> {
    /// A member every branch left requires is absent.
    Required(&'d str),
    /// A member is of no branch's type: the types expected, and what was found.
    Type(&'d str, String, &'static str),
    /// A member names no branch: the tags it may be.
    Tag(&'d str, Vec<TagValue<'d>>),
}

impl Decision {
    /// The branch the object's members choose, or why none can hold.
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
                Test::Type { member, groups } => {
                    let name = self.members[*member].as_str();
                    let Some((kind, found)) = facts.kind(*member) else {
                        return Err(Refusal::Required(name));
                    };
                    let admits =
                        |k: &Kind| *k == kind || (kind == Kind::Integer && *k == Kind::Number);
                    match groups.iter().find(|(kinds, _)| kinds.iter().any(admits)) {
                        Some((_, next)) => *next,
                        None => {
                            let expected =
                                groups.iter().flat_map(|(kinds, _)| kinds.iter().copied());
                            return Err(Refusal::Type(
                                name,
                                crate::kind::kinds_text(expected),
                                found,
                            ));
                        }
                    }
                }
                Test::Tag {
                    member,
                    tags,
                    absent,
                } => {
                    let name = self.members[*member].as_str();
                    if !facts.has(*member) {
                        match absent {
                            Some(next) => *next,
                            None => return Err(Refusal::Required(name)),
                        }
                    } else {
                        let all = || tags.iter().flat_map(|(values, _)| values);
                        let named = tags.iter().find(|(values, _)| {
                            values
                                .iter()
                                .filter_map(TagValue::of)
                                .any(|t| facts.is_tag(*member, t))
                        });
                        match named {
                            Some((_, next)) => *next,
                            None => {
                                let all = all().filter_map(TagValue::of).collect();
                                return Err(Refusal::Tag(name, all));
                            }
                        }
                    }
                }
            };
        }
    }

    /// What names each branch: the outcomes of the tests on the way to it, from the first
    /// (the JSON type of its group, its tag, or the member whose presence chose it; a member's
    /// absence says nothing).
    pub fn labels<'a>(&'a self, branches: usize) -> Vec<Vec<Label<'a>>> {
        let mut labels = vec![Vec::new(); branches];
        let mut stack: Vec<(usize, Vec<Label<'a>>)> = vec![(0, Vec::new())];
        while let Some((at, path)) = stack.pop() {
            let with = |label: Label<'a>| {
                let mut path = path.clone();
                path.push(label);
                path
            };
            match &self.tests[at] {
                Test::Branch(b) => labels[*b] = path,
                Test::Has {
                    member,
                    then,
                    otherwise,
                } => {
                    stack.push((*then, with(Label::Key(&self.members[*member]))));
                    stack.push((*otherwise, path.clone()));
                }
                Test::Type { groups, .. } => {
                    for (kinds, next) in groups {
                        stack.push((*next, with(Label::Kind(kinds[0]))));
                    }
                }
                Test::Tag { tags, absent, .. } => {
                    for (values, next) in tags {
                        stack.push((*next, with(Label::Tag(&values[0]))));
                    }
                    if let Some(next) = absent {
                        stack.push((*next, path.clone()));
                    }
                }
            }
        }
        labels
    }
}

/// What names a branch of a [`Decision`] (see [`Decision::labels`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Label<'d> {
    /// The JSON type of its group.
    Kind(Kind),
    /// Its tag (the first, for an `enum`).
    Tag(&'d Value),
    /// The member whose presence chose it.
    Key(&'d str),
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
