//! How the branches of a `oneOf` are distinguished, the analysis both validators share: code
//! generation types a `oneOf` by it, the interpreter decides a document's branch by it, so
//! both choose the same branch and report the same violation when none matches.
//!
//! - [`decider`]: a `oneOf` of closed objects, discriminated by a tag property, by keys each
//!   branch alone declares, by several tags, or by tests of their members one after another
//!   (a [`DecisionTree`]);
//! - [`is_union`] and [`union_kind`]: a `oneOf` or `anyOf` that is a choice between JSON types.

mod decision;
pub mod discriminator;

use crate::dialect::is_annotation;
use crate::kind::Kind;
pub use decision::{DecisionTree, Facts, Refusal, Test};
use serde_json::{Map, Value};

/// True when two union branches of these kinds could both take one value.
pub fn overlap(a: Kind, b: Kind) -> bool {
    a == b
        || matches!(
            (a, b),
            (Kind::Integer, Kind::Number) | (Kind::Number, Kind::Integer)
        )
}

/// `strings`, `integers`, …
pub fn plural(kind: Kind) -> String {
    match kind {
        Kind::Null => "null".to_owned(),
        Kind::Boolean => "booleans".to_owned(),
        other => format!("{}s", other.name()),
    }
}

/// True when a `oneOf` or `anyOf` (`list`, in `map`, in document `doc`) is a choice between
/// JSON types rather than between objects (`oneOf`) or a nullable value (`anyOf: [X, null]`):
/// one of its branches takes something other than objects.
pub fn is_union(
    doc: usize,
    map: &Map<String, Value>,
    list: &[Value],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> bool {
    if map.contains_key("oneOf") {
        list.iter().any(|b| {
            follow(doc, b).is_some_and(|(d, b)| {
                union_kind(d, &b, &mut follow).is_ok_and(|k| k != Kind::Object)
            })
        })
    } else {
        !(list.len() == 2 && is_null_schema(&list[0]) != is_null_schema(&list[1]))
    }
}

/// The one JSON type a resolved union branch (in document `doc`) takes, or why it has none:
/// its `type`, the type of its `const` / `enum` values, or an object for a `oneOf` of objects.
/// `follow` resolves a `$ref` from its document.
pub fn union_kind(
    doc: usize,
    branch: &Value,
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<Kind, String> {
    let Value::Object(map) = branch else {
        return Err(format!("is {branch}"));
    };
    let value_kind = |v: &Value| match v {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|x| x.fract() != 0.0) => {
            Kind::Number
        }
        Value::Number(_) => Kind::Integer,
        other => Kind::of_value(other).unwrap_or(Kind::Number),
    };
    match map.get("type") {
        Some(Value::String(t)) => return Kind::named(t).ok_or_else(|| format!("has type {t:?}")),
        Some(t) => return Err(format!("has several types ({t})")),
        None => {}
    }
    if let Some(c) = map.get("const") {
        return Ok(value_kind(c));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let kinds: Vec<Kind> = values.iter().map(value_kind).collect();
        return match kinds.split_first() {
            Some((first, rest)) if rest.iter().all(|k| k == first) => Ok(*first),
            _ => Err("is an `enum` of values of several types".to_owned()),
        };
    }
    if let Some(Value::Array(branches)) = map.get("oneOf")
        && branches.iter().all(|b| {
            follow(doc, b).is_some_and(|(_, b)| b.get("type").is_some_and(|t| t == "object"))
        })
    {
        return Ok(Kind::Object);
    }
    Err("declares no `type`".to_owned())
}

/// The discriminator of a `oneOf`'s resolved branches (each with the document it is in), with
/// each branch's tag, as a [`Decider`]: the first property that every branch either declares (required, with a
/// distinct string `const`) or leaves undeclared, the undeclared ones being at most one or,
/// when `mixed`, several discriminated by their keys among themselves (their `own_keys`; empty
/// for the branches with a tag, and all empty without several undeclared). `follow` resolves a property schema's
/// `$ref`s from its document. Otherwise, why no property qualifies.
fn tagged_by(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
    mixed: bool,
) -> Result<Decider, String> {
    let candidates = declared_by_any(branches);
    let mut reasons = Vec::new();
    for name in candidates {
        let mut tags: Vec<Option<String>> = Vec::new();
        let mut plausible = false;
        // The empty key stands for "discriminated by keys" (`decider` refuses it after the
        // first pass too).
        let mut problem = (mixed && name.is_empty())
            .then(|| "the empty key cannot be a discriminator".to_owned());
        for (i, (doc, branch)) in branches.iter().enumerate() {
            let Some(schema) = branch.get("properties").and_then(|p| p.get(name)) else {
                tags.push(None);
                continue;
            };
            let required = requires(branch, name);
            let tag = follow(*doc, schema)
                .and_then(|(_, s)| s.get("const").and_then(Value::as_str).map(str::to_owned));
            plausible |= tag.is_some();
            let found = match tag {
                None => Err(format!("branch {i} declares it without a string `const`")),
                Some(_) if !required => Err(format!("branch {i} does not list it in `required`")),
                Some(t) => match tags.iter().position(|u| u.as_deref() == Some(t.as_str())) {
                    Some(j) => Err(format!("branches {j} and {i} both have the `const` {t:?}")),
                    None => Ok(t),
                },
            };
            match found {
                Ok(t) => tags.push(Some(t)),
                Err(p) => {
                    problem.get_or_insert(p);
                    tags.push(None);
                }
            }
        }
        let mut keys = Vec::new();
        let problem = problem.or_else(|| {
            let undeclared: Vec<usize> =
                (0..branches.len()).filter(|i| tags[*i].is_none()).collect();
            if undeclared.len() < 2 {
                return None;
            }
            let listed = numbers(&undeclared);
            if !mixed {
                return Some(format!(
                    "branches {listed} do not declare it (only one branch may)"
                ));
            }
            let rest: Vec<(usize, &Value)> =
                undeclared.iter().map(|i| (*i, &branches[*i].1)).collect();
            match own_keys(&rest) {
                Ok(own) => {
                    keys = vec![Vec::new(); branches.len()];
                    for (i, own) in undeclared.into_iter().zip(own) {
                        keys[i] = own;
                    }
                    None
                }
                Err(refused) => {
                    let (who, verb) = match refused.as_slice() {
                        [one] => (format!("branch {one}"), "does"),
                        _ => (format!("branches {}", numbers(&refused)), "do"),
                    };
                    Some(format!(
                        "branches {listed} do not declare it, and not each of them requires a property no other of them declares ({who} {verb} not)"
                    ))
                }
            }
        });
        match problem {
            None => {
                return Ok(Decider {
                    properties: vec![name.clone()],
                    tags: tags
                        .into_iter()
                        .map(|t| t.map(|t| (0, vec![Value::String(t)])))
                        .collect(),
                    keys,
                    decision: None,
                });
            }
            Some(p) if plausible => reasons.push(format!("`{name}` does not qualify: {p}")),
            Some(_) => {}
        }
    }
    let rule = if mixed {
        "the branches must be discriminated by one property that each branch declares, lists in `required` and gives a distinct string `const`, or leaves undeclared (one branch, or several that each require a property no other of them declares)"
    } else {
        "the branches must be discriminated by one property that each branch declares, lists in `required` and gives a distinct string `const` (one branch may leave it undeclared)"
    };
    if reasons.is_empty() {
        Err(format!(
            "{rule}; no property has a string `const` in any branch"
        ))
    } else {
        Err(format!("{rule}; {}", reasons.join("; ")))
    }
}

/// The properties `branches` declare, each once, in schema order.
fn declared_by_any(branches: &[(usize, Value)]) -> Vec<&String> {
    let mut names: Vec<&String> = Vec::new();
    for (_, branch) in branches {
        for name in branch
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// True when `branch` lists `name` in `required`.
fn requires(branch: &Value, name: &str) -> bool {
    branch
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n == name))
}

/// `1 and 2`, `1, 2 and 3`: branch numbers, for messages.
fn numbers(list: &[usize]) -> String {
    let text: Vec<String> = list.iter().map(usize::to_string).collect();
    match text.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => text.concat(),
    }
}

/// Per branch (each with its number, for messages), the properties it alone of `branches`
/// declares, when each requires one of them; else the numbers of those that do not.
fn own_keys(branches: &[(usize, &Value)]) -> Result<Vec<Vec<String>>, Vec<usize>> {
    let declared = |b: &Value| -> Vec<String> {
        b.get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut keys = Vec::new();
    let mut problems = Vec::new();
    for (n, (i, branch)) in branches.iter().enumerate() {
        let own: Vec<String> = declared(branch)
            .into_iter()
            .filter(|k| {
                branches
                    .iter()
                    .enumerate()
                    .all(|(m, (_, other))| m == n || !declared(other).contains(k))
            })
            .collect();
        if !own.iter().any(|k| requires(branch, k)) {
            problems.push(*i);
        }
        keys.push(own);
    }
    if problems.is_empty() {
        Ok(keys)
    } else {
        Err(problems)
    }
}

/// How a `oneOf`'s resolved branches are distinguished, tried in this order (each exact for
/// closed objects):
/// - by a discriminator: `properties` is that one property (each branch's tag, see
///   `tagged_by`; `keys` empty);
/// - by keys (`properties` empty): `keys` holds, per branch, the properties it alone declares,
///   at least one of them required, so the first of them a document has decides its branch
///   (the other branches, closed, refuse it);
/// - by both: a property the branches with a tag declare, require and give distinct string
///   `const`s, and several branches without a tag, which do not declare it, distinguished among
///   themselves by their `keys` (empty for the branches with a tag). A document with the
///   property is one of the branches with a tag (the others, closed, refuse it), its tag
///   says which; one without is one of the others (the property is required by the rest),
///   and its keys say which;
/// - by several tag properties, or tags not all string `const`s (`tag_groups`): each
///   branch with a tag has it on one of `properties` (a string, integer or boolean `const`, or
///   an `enum` of such values, required, the values disjoint among the branches that declare
///   that property, which no other branch declares); the branches
///   without a tag are one, or several discriminated by their `keys` as above. A document with
///   one tag property is one of that property's branches, its value says which; with tag
///   properties of two branches, no branch matches; with none, it is one of the others;
/// - by tests on their members, one after another (`tested_by`): `decision` (no
///   `properties`, tags or keys).
#[derive(Debug)]
pub struct Decider {
    pub properties: Vec<String>,
    /// Per branch, its tag: the index of its property in `properties`, and its `const`, or
    /// the values of its `enum` (several values name the branch), in schema order (an integer
    /// is an `i64`).
    pub tags: Vec<Option<BranchTag>>,
    pub keys: Vec<Vec<String>>,
    /// Discriminated by tests on their members (`tested_by`), with what names each branch.
    pub decision: Option<(DecisionTree, Vec<Vec<Label>>)>,
}

/// A branch's tag: the index of its property among the [`Decider`]'s, and its values.
pub type BranchTag = (usize, Vec<Value>);

/// The [`Decider`] of a `oneOf`'s resolved branches, or why there is none. With a
/// `discriminator` (its `propertyName`, see [`discriminator`]), by that property alone.
pub fn decider(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
    discriminator: Option<&str>,
) -> Result<Decider, String> {
    if let Some(name) = discriminator {
        return discriminator::decider_on(branches, follow, name).map_err(|why| {
            format!("the `discriminator`'s {name:?} does not tell them apart: {why}")
        });
    }
    match tagged_by(branches, &mut follow, false) {
        // The empty key stands for "discriminated by keys", so it cannot be a discriminator.
        Ok(decider) if decider.properties.iter().all(|p| !p.is_empty()) => return Ok(decider),
        _ => {}
    }
    let numbered: Vec<(usize, &Value)> = branches.iter().map(|(_, b)| b).enumerate().collect();
    let problems: Vec<String> = match own_keys(&numbered) {
        Ok(keys) => {
            return Ok(Decider {
                properties: Vec::new(),
                tags: vec![None; branches.len()],
                keys,
                decision: None,
            });
        }
        Err(refused) => refused
            .iter()
            .map(|i| format!("branch {i} requires no property that only it declares"))
            .collect(),
    };
    let tagged = match tagged_by(branches, &mut follow, true) {
        Ok(decider) => return Ok(decider),
        Err(why) => why,
    };
    let several = match tag_groups(branches, &mut follow) {
        Ok(decider) => return Ok(decider),
        Err(None) => String::new(),
        Err(Some(why)) => format!(
            "; nor by tag properties (each branch with a tag has it on one property, which only branches that list it in `required` with a distinct string, integer or boolean `const`, or an `enum` of such values no other of them gives, declare; the branches without one are one, or several that each require a property no other of them declares): {why}"
        ),
    };
    let typed = match tested_by(branches, &mut follow) {
        Ok((decision, labels)) => {
            return Ok(Decider {
                properties: Vec::new(),
                tags: vec![None; branches.len()],
                keys: Vec::new(),
                decision: Some((decision, labels)),
            });
        }
        Err(None) => String::new(),
        Err(Some(why)) => format!(
            "; nor by tests of their members one after another (a tag, a member's JSON type or a key, each outcome of which leaves fewer of the branches that can match: a closed branch refuses a member it does not declare, and an object without one it requires; `integer` and `number` overlap): {why}"
        ),
    };
    Err(format!(
        "{tagged}; nor are they discriminated by their keys (each branch must require a property no other branch declares): {}{several}{typed}",
        problems.join("; ")
    ))
}

/// The JSON types a (followed) property schema's `type` names (`[T, "null"]` is T and null),
/// or `None` without a `type` (or with a name that is none).
fn type_kinds(schema: &Value) -> Option<Vec<Kind>> {
    let names: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    let mut kinds = Vec::new();
    for name in names {
        let kind = Kind::named(name)?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// What `tested_by` knows of a branch's property: its name, whether the branch requires
/// it, the JSON types of the values it takes (`None`: any; an `integer` takes integral
/// numbers, a `number` those and the others) and its tags (`None`: any value).
struct Known {
    name: String,
    required: bool,
    /// The types as written (for messages and names), and the value kinds they take.
    kinds: Option<(Vec<Kind>, Vec<Kind>)>,
    tags: Option<Vec<Value>>,
}

/// The kinds of values, as a [`Test::Type`] groups them (`Integer` integral numbers,
/// `Number` the others).
const VALUE_KINDS: [Kind; 7] = [
    Kind::Null,
    Kind::Boolean,
    Kind::Integer,
    Kind::Number,
    Kind::String,
    Kind::Array,
    Kind::Object,
];

/// What names a branch discriminated by tests: the outcomes on the way to it.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    /// Its JSON type for the member a test reads (the first its `type` names).
    Kind(Kind),
    /// Its tag (the first, for an `enum`).
    Tag(Value),
    /// The member whose presence chose it.
    Key(String),
}

/// What the outcome of a test on the way to a branch names of it ([`Tests::labels`]).
#[derive(Debug, Clone, Copy)]
enum Named {
    Key,
    Kind,
    Tag,
}

/// How many tests `tested_by` tries at most (the same branches may be under several
/// outcomes, and a choice that leaves some not distinguished is undone).
const TESTS_TRIED: usize = 4096;

/// The [`DecisionTree`] of branches discriminated by tests on their members, one after another
/// ([`Tests::split`]), and what names each branch. Otherwise why not, when something splits the
/// branches or some property every branch requires has a `type` in each (`None` when not:
/// nothing to say beyond the other rules' reasons).
fn tested_by(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<(DecisionTree, Vec<Vec<Label>>), Option<String>> {
    let known = branches
        .iter()
        .map(|(doc, branch)| {
            let properties = branch.get("properties").and_then(Value::as_object);
            properties
                .into_iter()
                .flatten()
                .map(|(name, schema)| {
                    let followed = follow(*doc, schema).map_or(Value::Null, |(_, s)| s);
                    let kinds = type_kinds(&followed).map(|written| {
                        let takes = VALUE_KINDS
                            .into_iter()
                            .filter(|v| written.iter().any(|w| takes(*w, *v)))
                            .collect();
                        (written, takes)
                    });
                    Known {
                        name: name.clone(),
                        required: requires(branch, name),
                        kinds,
                        tags: tags_of(&followed).and_then(Result::ok),
                    }
                })
                .collect()
        })
        .collect();
    let mut tests = Tests {
        known,
        decision: DecisionTree {
            members: Vec::new(),
            tests: Vec::new(),
        },
        stuck: None,
        tried: 0,
        failed: Default::default(),
    };
    let all: Vec<usize> = (0..branches.len()).collect();
    if tests.split(&all).is_ok() {
        let labels = tests.labels();
        return Ok((tests.decision, labels));
    }
    if tests.tried > TESTS_TRIED {
        return Err(Some(format!(
            "more than {TESTS_TRIED} tests tried without distinguishing them"
        )));
    }
    match tests.stuck {
        Some((set, reasons)) if set != all => {
            let mut why = format!("no test tells branches {} apart", numbers(&set));
            for r in reasons {
                why.push_str("; ");
                why.push_str(&r);
            }
            Err(Some(why))
        }
        Some((_, reasons)) if !reasons.is_empty() => Err(Some(reasons.join("; "))),
        _ => Err(None),
    }
}

/// True when a value of kind `value` ([`VALUE_KINDS`]) has `type` `written`.
fn takes(written: Kind, value: Kind) -> bool {
    written == value || (written == Kind::Number && value == Kind::Integer)
}

/// A [`DecisionTree`] being built over the branches' [`Known`] properties.
struct Tests {
    known: Vec<Vec<Known>>,
    decision: DecisionTree,
    /// The smallest set of branches no test split, and why the types of the properties all
    /// of them require do not.
    stuck: Option<(Vec<usize>, Vec<String>)>,
    /// Tests tried so far.
    tried: usize,
    /// The sets of branches no test distinguishes (whatever led to them).
    failed: std::collections::HashSet<Vec<usize>>,
}

/// What a test on one member leads to: the branches that can still match after each outcome
/// (empty: none can, which is reported).
struct Outcomes<T> {
    /// The member absent: the branches that do not require it.
    absent: Vec<usize>,
    /// Present, by its value: `(values, branches)`, the values being value kinds
    /// ([`Test::Type`]) or tags ([`Test::Tag`]); empty for [`Test::Has`].
    values: Vec<(Vec<T>, Vec<usize>)>,
    /// Present, of no value listed (any value, for [`Test::Has`]).
    other: Vec<usize>,
}

impl Tests {
    /// The test that tells the branches of `set` apart, added with those after it: the first
    /// whose outcomes each leave fewer branches than `set` (an outcome leaves the branches that
    /// can still match: a branch refuses a member it does not declare, for it is closed, and an
    /// object without one it requires), of
    /// - a tag: a member some branches give a `const` or an `enum` of strings, integers or
    ///   booleans (each value leaves the branches that give it, and those that declare the
    ///   member without a tag);
    /// - a member's JSON type, which some branches give a `type` (each type of value leaves
    ///   the branches that declare the member with that type or none; an integral number is
    ///   an `integer` and a `number`);
    /// - a key some branches of `set` do not declare (present, it leaves those that do);
    ///
    /// each in schema order, the branches of each outcome distinguished in turn (a choice that
    /// leaves some not distinguished is undone, and the next tried). Otherwise `Err`.
    fn split(&mut self, set: &[usize]) -> Result<usize, ()> {
        if let [one] = set {
            return Ok(self.push(Test::Branch(*one)));
        }
        if self.failed.contains(set) {
            return Err(());
        }
        let mut names: Vec<String> = Vec::new();
        for b in set {
            for known in &self.known[*b] {
                if !names.contains(&known.name) {
                    names.push(known.name.clone());
                }
            }
        }
        let mut reasons = Vec::new();
        for name in &names {
            if let Some(outcomes) = self.by_tag(set, name) {
                let tried = self.try_test(set, name, outcomes, |member, tags, other, absent| {
                    Test::Tag {
                        member,
                        tags,
                        other,
                        absent,
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        for name in &names {
            if let Some((outcomes, expected)) = self.by_type(set, name, &mut reasons) {
                let tried = self.try_test(set, name, outcomes, |member, groups, _, absent| {
                    Test::Type {
                        member,
                        groups,
                        expected,
                        absent,
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        for name in &names {
            if let Some(outcomes) = self.by_key(set, name) {
                let tried = self.try_test(set, name, outcomes, |member, _, then, otherwise| {
                    Test::Has {
                        member,
                        then: then.expect("a key some branch declares"),
                        otherwise: otherwise.expect("a key some branch does not declare"),
                    }
                });
                if let Some(result) = tried {
                    return result;
                }
            }
        }
        if self.stuck.as_ref().is_none_or(|(s, _)| s.len() > set.len()) {
            self.stuck = Some((set.to_vec(), reasons));
        }
        self.failed.insert(set.to_vec());
        Err(())
    }

    /// Adds the test `make` builds on member `name` (from its index, each value's next test, the
    /// next tests of a value listed of none and of its absence, `None` where no branch can match)
    /// when its `outcomes` each leave fewer branches than `set`, and the branches of each are
    /// distinguished in turn. `None` when not (undone), or the test when it is (`Err` when too
    /// many were tried).
    fn try_test<T: Clone>(
        &mut self,
        set: &[usize],
        name: &str,
        outcomes: Outcomes<T>,
        make: impl FnOnce(usize, Vec<(Vec<T>, usize)>, Option<usize>, Option<usize>) -> Test,
    ) -> Option<Result<usize, ()>> {
        let sets: Vec<&Vec<usize>> = std::iter::once(&outcomes.absent)
            .chain(outcomes.values.iter().map(|(_, b)| b))
            .chain(std::iter::once(&outcomes.other))
            .collect();
        if sets.iter().any(|b| b.len() == set.len()) {
            return None;
        }
        self.tried += 1;
        if self.tried > TESTS_TRIED {
            return Some(Err(()));
        }
        let saved = self.save();
        let at = self.push(Test::Branch(usize::MAX));
        let member = self.member(name);
        // Each distinct set of branches is distinguished once.
        let mut done: Vec<(&Vec<usize>, Option<usize>)> = Vec::new();
        for branches in sets {
            if done.iter().any(|(b, _)| *b == branches) {
                continue;
            }
            let next = match branches.as_slice() {
                [] => None,
                _ => match self.split(branches) {
                    Ok(next) => Some(next),
                    Err(()) => {
                        self.restore(saved);
                        return (self.tried > TESTS_TRIED).then_some(Err(()));
                    }
                },
            };
            done.push((branches, next));
        }
        let next = |branches: &Vec<usize>| {
            done.iter()
                .find(|(b, _)| *b == branches)
                .and_then(|(_, n)| *n)
        };
        let values = outcomes
            .values
            .iter()
            .filter_map(|(values, branches)| Some((values.clone(), next(branches)?)))
            .collect();
        self.decision.tests[at] = make(
            member,
            values,
            next(&outcomes.other),
            next(&outcomes.absent),
        );
        Some(Ok(at))
    }

    /// A tag test on `name`, when some branch of `set` gives it tags.
    fn by_tag(&self, set: &[usize], name: &str) -> Option<Outcomes<Value>> {
        let declaring = self.declaring(set, name);
        let any: Vec<usize> = declaring
            .iter()
            .copied()
            .filter(|b| self.property(*b, name).is_some_and(|k| k.tags.is_none()))
            .collect();
        let mut tags: Vec<&Value> = Vec::new();
        for b in &declaring {
            for t in self
                .property(*b, name)
                .and_then(|k| k.tags.as_ref())
                .into_iter()
                .flatten()
            {
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        if tags.is_empty() {
            return None;
        }
        let mut values: Vec<(Vec<Value>, Vec<usize>)> = Vec::new();
        for t in tags {
            let branches: Vec<usize> = declaring
                .iter()
                .copied()
                .filter(|b| {
                    let known = self.property(*b, name);
                    known.is_some_and(|k| k.tags.as_ref().is_none_or(|u| u.contains(t)))
                })
                .collect();
            group(&mut values, t.clone(), branches);
        }
        Some(Outcomes {
            absent: self.not_requiring(set, name),
            values,
            other: any,
        })
    }

    /// A type test on `name`, when some branch of `set` gives it a `type`, and the types
    /// written (what a value of none is told is expected); why it does not split `set` into
    /// `reasons` when every branch requires it with one.
    fn by_type(
        &self,
        set: &[usize],
        name: &str,
        reasons: &mut Vec<String>,
    ) -> Option<(Outcomes<Kind>, Vec<Kind>)> {
        let declaring = self.declaring(set, name);
        if declaring
            .iter()
            .all(|b| self.property(*b, name).is_some_and(|k| k.kinds.is_none()))
        {
            return None;
        }
        let mut values: Vec<(Vec<Kind>, Vec<usize>)> = Vec::new();
        for v in VALUE_KINDS {
            let branches: Vec<usize> = declaring
                .iter()
                .copied()
                .filter(|b| {
                    let known = self.property(*b, name);
                    known.is_some_and(|k| k.kinds.as_ref().is_none_or(|(_, t)| t.contains(&v)))
                })
                .collect();
            if !branches.is_empty() {
                group(&mut values, v, branches);
            }
        }
        // In schema order, by their first branch.
        values.sort_by_key(|(_, branches)| branches[0]);
        let outcomes = Outcomes {
            absent: self.not_requiring(set, name),
            values,
            other: Vec::new(),
        };
        let written: Option<Vec<Vec<Kind>>> = set
            .iter()
            .map(|b| {
                let k = self.property(*b, name)?;
                Some(k.kinds.as_ref()?.0.clone()).filter(|_| k.required)
            })
            .collect();
        if let Some(written) = &written
            && outcomes.values.iter().any(|(_, b)| b.len() == set.len())
        {
            reasons.push(overlap_reason(name, set, written));
        }
        let mut expected: Vec<Kind> = Vec::new();
        for b in &declaring {
            let written = self.property(*b, name).and_then(|k| k.kinds.as_ref());
            for w in written.into_iter().flat_map(|(w, _)| w) {
                if !expected.contains(w) {
                    expected.push(*w);
                }
            }
        }
        Some((outcomes, expected))
    }

    /// A key test on `name`, when some branch of `set` does not declare it.
    fn by_key(&self, set: &[usize], name: &str) -> Option<Outcomes<()>> {
        let declaring = self.declaring(set, name);
        (declaring.len() < set.len()).then(|| Outcomes {
            absent: self.not_requiring(set, name),
            values: Vec::new(),
            other: declaring,
        })
    }

    /// The branches of `set` that declare `name`.
    fn declaring(&self, set: &[usize], name: &str) -> Vec<usize> {
        set.iter()
            .copied()
            .filter(|b| self.property(*b, name).is_some())
            .collect()
    }

    /// The branches of `set` that do not require `name`.
    fn not_requiring(&self, set: &[usize], name: &str) -> Vec<usize> {
        set.iter()
            .copied()
            .filter(|b| self.property(*b, name).is_none_or(|k| !k.required))
            .collect()
    }

    /// What branch `b` knows of property `name`, when it declares it.
    fn property(&self, b: usize, name: &str) -> Option<&Known> {
        self.known[b].iter().find(|k| k.name == name)
    }

    /// What names each branch: the outcomes on the way to the first test that chooses it,
    /// from the top, as its own schema gives them (its first type for a type test of several
    /// groups, its first tag for a tag, else the key it has; an absence says nothing).
    fn labels(&self) -> Vec<Vec<Label>> {
        let mut labels: Vec<Option<Vec<Label>>> = vec![None; self.known.len()];
        // The tests on the way: (member, what the outcome names).
        let mut stack: Vec<(usize, Vec<(usize, Named)>)> = vec![(0, Vec::new())];
        while let Some((at, path)) = stack.pop() {
            let with = |member: usize, named: Named| {
                let mut path = path.clone();
                path.push((member, named));
                path
            };
            let mut next: Vec<(usize, Vec<(usize, Named)>)> = Vec::new();
            match &self.decision.tests[at] {
                Test::Branch(b) => {
                    labels[*b].get_or_insert_with(|| {
                        path.iter()
                            .map(|(m, named)| self.label(*b, &self.decision.members[*m], *named))
                            .collect()
                    });
                }
                Test::Has {
                    member,
                    then,
                    otherwise,
                } => {
                    next.push((*then, with(*member, Named::Key)));
                    next.push((*otherwise, path.clone()));
                }
                Test::Type {
                    member,
                    groups,
                    absent,
                    ..
                } => {
                    let named = if groups.len() > 1 {
                        Named::Kind
                    } else {
                        Named::Key
                    };
                    next.extend(groups.iter().map(|(_, n)| (*n, with(*member, named))));
                    next.extend(absent.map(|n| (n, path.clone())));
                }
                Test::Tag {
                    member,
                    tags,
                    other,
                    absent,
                } => {
                    next.extend(tags.iter().map(|(_, n)| (*n, with(*member, Named::Tag))));
                    next.extend(other.map(|n| (n, with(*member, Named::Key))));
                    next.extend(absent.map(|n| (n, path.clone())));
                }
            }
            // Depth first, in order.
            stack.extend(next.into_iter().rev());
        }
        labels.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// What member `name` says of branch `b`'s name, as a test's outcome `named` it.
    fn label(&self, b: usize, name: &str, named: Named) -> Label {
        let known = self.property(b, name);
        match (
            named,
            known.and_then(|k| k.tags.as_ref()),
            known.and_then(|k| k.kinds.as_ref()),
        ) {
            (Named::Tag, Some(tags), _) => Label::Tag(tags[0].clone()),
            (Named::Kind, _, Some((written, _))) => Label::Kind(written[0]),
            _ => Label::Key(name.to_owned()),
        }
    }

    fn push(&mut self, test: Test) -> usize {
        self.decision.tests.push(test);
        self.decision.tests.len() - 1
    }

    /// The index of member `name`, added when new.
    fn member(&mut self, name: &str) -> usize {
        let members = &mut self.decision.members;
        members.iter().position(|m| m == name).unwrap_or_else(|| {
            members.push(name.to_owned());
            members.len() - 1
        })
    }

    fn save(&self) -> (usize, usize) {
        (self.decision.tests.len(), self.decision.members.len())
    }

    /// Undoes what was added since [`save`](Self::save).
    fn restore(&mut self, (tests, members): (usize, usize)) {
        self.decision.tests.truncate(tests);
        self.decision.members.truncate(members);
    }
}

/// Adds `value` to the group of `values` that leaves `branches`, or a new group.
fn group<T>(values: &mut Vec<(Vec<T>, Vec<usize>)>, value: T, branches: Vec<usize>) {
    match values.iter_mut().find(|(_, b)| *b == branches) {
        Some((v, _)) => v.push(value),
        None => values.push((vec![value], branches)),
    }
}

/// Why property `name`'s types (`kinds`, per branch of `set`) do not split `set`: the first two
/// branches whose types overlap.
fn overlap_reason(name: &str, set: &[usize], kinds: &[Vec<Kind>]) -> String {
    for j in 0..kinds.len() {
        for i in 0..j {
            for a in &kinds[i] {
                if let Some(b) = kinds[j].iter().find(|b| overlap(*a, **b)) {
                    let (i, j) = (set[i], set[j]);
                    return if a == b {
                        format!("`{name}`: branches {i} and {j} both take {}", plural(*a))
                    } else {
                        format!(
                            "`{name}`: branches {i} ({}) and {j} ({}) overlap (an integral number is both an integer and a number)",
                            a.name(),
                            b.name()
                        )
                    };
                }
            }
        }
    }
    format!("`{name}`: its types do not tell the branches apart")
}

/// A tag: a string, a boolean or an integer (as an `i64`; `1.0` is `1`), or `None`.
fn tag_value(v: &Value) -> Option<Value> {
    Some(match crate::check::TagValue::of(v)? {
        crate::check::TagValue::Str(s) => Value::from(s),
        crate::check::TagValue::Int(i) => Value::from(i),
        crate::check::TagValue::Bool(b) => Value::from(b),
    })
}

/// The tags a property's (followed) schema gives its branch: its `const`, or the values of
/// its `enum` (in schema order, each once). `None` when it has neither; an error (what the
/// branch does, for a message) when its `enum` is no tag: a value that is not a string, an
/// integer or a boolean, a `type` that refuses one, or a keyword beside it other than `type`
/// and annotations (the tag is read as its value alone).
fn tags_of(schema: &Value) -> Option<Result<Vec<Value>, String>> {
    if let Some(c) = schema.get("const") {
        return tag_value(c).map(|t| Ok(vec![t]));
    }
    let values = schema.get("enum")?.as_array()?;
    let why = |what: String| Some(Err(format!("gives it an `enum` {what}")));
    if values.is_empty() {
        return why("with no value".into());
    }
    if let Some(k) = schema
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .find(|k| !matches!(k.as_str(), "enum" | "type") && !is_annotation(k))
    {
        return why(format!("with `{k}` beside it"));
    }
    let mut tags: Vec<Value> = Vec::new();
    for v in values {
        let Some(t) = tag_value(v) else {
            return why(format!(
                "with {v}, which is not a string, an integer or a boolean"
            ));
        };
        let types: Vec<&str> = match schema.get("type") {
            None => Vec::new(),
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            Some(_) => vec![""],
        };
        if !types.is_empty() && !types.iter().any(|ty| value_has_type(v, ty, false)) {
            return why(format!("with {v}, which its `type` refuses"));
        }
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    Some(Ok(tags))
}

/// True when `schema` (followed) gives its tags by an `enum`.
fn has_enum(schema: &Value) -> bool {
    schema.get("enum").is_some() && schema.get("const").is_none()
}

/// A tag property and its branches, each with its tags.
type Group<'a> = (&'a String, Vec<(usize, Vec<Value>)>);

/// The [`Decider`] of branches tagged on several properties, or with tags that are not all
/// strings, or given by `enum`s: each property some branch gives a tag `const` or an `enum` of
/// tags ([`tags_of`]) qualifies when every branch that declares it requires it with tags no
/// other of them gives (its group); the groups are taken largest
/// first, then in schema order, each only when none of its branches is in a group already.
/// The branches in no group are one, or several discriminated by their `own_keys`. Otherwise
/// why not, when there is something to say beyond `tagged_by`'s reasons (a tag that is not
/// a string, an `enum`, or several properties with tags of which some qualify); `None` when
/// not.
fn tag_groups(
    branches: &[(usize, Value)],
    mut follow: impl FnMut(usize, &Value) -> Option<(usize, Value)>,
) -> Result<Decider, Option<String>> {
    let candidates = declared_by_any(branches);
    let mut reasons = Vec::new();
    // (property, its branches with their tags), in schema order.
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut plausible_properties = 0usize;
    let mut not_strings = false;
    let mut enums = false;
    // The empty key stands for "discriminated by keys" elsewhere: never a tag.
    for name in candidates.into_iter().filter(|n| !n.is_empty()) {
        let mut members: Vec<(usize, Vec<Value>)> = Vec::new();
        let mut plausible = false;
        let mut problem = None;
        for (i, (doc, branch)) in branches.iter().enumerate() {
            let Some(schema) = branch.get("properties").and_then(|p| p.get(name)) else {
                continue;
            };
            let required = requires(branch, name);
            let followed = follow(*doc, schema).map(|(_, s)| s);
            let tag = followed.as_ref().and_then(tags_of);
            plausible |= tag.as_ref().is_some_and(|t| t.is_ok());
            not_strings |= tag
                .as_ref()
                .and_then(|t| t.as_ref().ok())
                .is_some_and(|t| t.iter().any(|t| !t.is_string()));
            enums |= tag.is_some() && followed.as_ref().is_some_and(has_enum);
            let found = match tag {
                None => Err(format!(
                    "branch {i} declares it without a string, integer or boolean `const`"
                )),
                Some(Err(why)) => Err(format!("branch {i} {why}")),
                Some(_) if !required => Err(format!("branch {i} does not list it in `required`")),
                Some(Ok(t)) => match members
                    .iter()
                    .find_map(|(j, u)| t.iter().find(|v| u.contains(v)).map(|v| (j, v)))
                {
                    Some((j, v))
                        if t.len() == 1 && members[..].iter().all(|(_, u)| u.len() == 1) =>
                    {
                        Err(format!("branches {j} and {i} both have the `const` {v}"))
                    }
                    Some((j, v)) => Err(format!("branches {j} and {i} both have the tag {v}")),
                    None => Ok(t),
                },
            };
            match found {
                Ok(t) => members.push((i, t)),
                Err(p) => {
                    problem.get_or_insert(p);
                }
            }
        }
        if !plausible {
            continue;
        }
        plausible_properties += 1;
        match problem {
            Some(p) => reasons.push(format!("`{name}` is no tag: {p}")),
            None => groups.push((name, members)),
        }
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|g| std::cmp::Reverse(groups[*g].1.len()));
    let mut group_of: Vec<Option<usize>> = vec![None; branches.len()];
    let mut chosen = Vec::new();
    for g in order {
        match groups[g]
            .1
            .iter()
            .find_map(|(i, _)| group_of[*i].map(|h| (*i, h)))
        {
            Some((i, h)) => reasons.push(format!(
                "`{}` is no tag: branch {i} has its tag on `{}`",
                groups[g].0, groups[h].0
            )),
            None => {
                for (i, _) in &groups[g].1 {
                    group_of[*i] = Some(g);
                }
                chosen.push(g);
            }
        }
    }
    chosen.sort_unstable();
    // Without a tag that is not a string, and with no property that qualifies, `tagged_by`
    // said it all.
    let relevant = not_strings || enums || (!chosen.is_empty() && plausible_properties > 1);
    let why = |reasons: &[String], last: &str| {
        let mut all = reasons.to_vec();
        if !last.is_empty() {
            all.push(last.to_owned());
        }
        relevant.then(|| all.join("; "))
    };
    if chosen.is_empty() {
        return Err(why(&reasons, "no property qualifies"));
    }
    let mut tags: Vec<Option<BranchTag>> = vec![None; branches.len()];
    for (p, g) in chosen.iter().enumerate() {
        for (i, t) in &groups[*g].1 {
            tags[*i] = Some((p, t.clone()));
        }
    }
    let untagged: Vec<usize> = (0..branches.len()).filter(|i| tags[*i].is_none()).collect();
    let mut keys = Vec::new();
    if untagged.len() > 1 {
        let rest: Vec<(usize, &Value)> = untagged.iter().map(|i| (*i, &branches[*i].1)).collect();
        match own_keys(&rest) {
            Ok(own) => {
                keys = vec![Vec::new(); branches.len()];
                for (i, own) in untagged.iter().zip(own) {
                    keys[*i] = own;
                }
            }
            Err(refused) => {
                let (who, verb) = match refused.as_slice() {
                    [one] => (format!("branch {one}"), "does"),
                    _ => (format!("branches {}", numbers(&refused)), "do"),
                };
                let last = format!(
                    "branches {} have no tag, and not each of them requires a property no other of them declares ({who} {verb} not)",
                    numbers(&untagged)
                );
                return Err(why(&reasons, &last));
            }
        }
    }
    Ok(Decider {
        properties: chosen.iter().map(|g| groups[*g].0.clone()).collect(),
        tags,
        keys,
        decision: None,
    })
}

/// A nullable `anyOf`'s null branch.
pub fn is_null_schema(v: &Value) -> bool {
    v.get("type").is_some_and(|t| t == "null")
}

/// `{"type": "null"}` with nothing but annotations beside: the null branch of a nullable
/// `anyOf`, read as `Option` by both doors.
pub fn is_plain_null(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.get("type").is_some_and(|t| t == "null")
            && m.keys().all(|k| k == "type" || is_annotation(k))
    })
}

pub fn value_has_type(v: &Value, ty: &str, nullable: bool) -> bool {
    (nullable && v.is_null())
        || match ty {
            "string" => v.is_string(),
            "integer" => v.as_f64().is_some_and(|x| x.fract() == 0.0),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            _ => false,
        }
}
