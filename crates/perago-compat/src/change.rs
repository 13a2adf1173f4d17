//! [`Change`]: one difference between two schemas that decides, or bears on, whether every
//! document the first accepts the second accepts too.

use serde_json::Value;
use std::fmt;

/// What a change does to "every document A accepts, B accepts".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// It keeps it: B accepts at least what A accepted here (a loosened bound, a widened type).
    Compatible,
    /// It may break it, and the analysis could not tell: a changed `pattern` or `format`, a
    /// keyword it does not compare, a witness it could not build. Treated as breaking.
    Unproven,
    /// It breaks it: a witness document A accepts and B refuses was built and checked.
    Breaking,
}

impl Effect {
    /// Whether the change is, or must be treated as, breaking.
    pub fn breaks(self) -> bool {
        self != Effect::Compatible
    }
}

/// A step of a path in documents.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// An object member.
    Key(String),
    /// The item at an index.
    Item(usize),
    /// Any item of an array.
    Items,
    /// A member no `properties` entry names.
    Other,
}

/// A path in documents as perago's violations write it (`$.a[0]`, `$['odd key'][*]`).
pub fn json_path(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Key(k) => perago_schema::push_key(&mut out, k),
            Step::Item(i) => out.push_str(&format!("[{i}]")),
            Step::Items => out.push_str("[*]"),
            Step::Other => out.push_str(".*"),
        }
    }
    out
}

/// What kind of change it is: the codes a schema registry's user recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// B admits a JSON type A does not (`string` → `string|null`).
    TypeWidened,
    /// A admits a JSON type B does not (`string|null` → `string`, `number` → `integer`).
    TypeNarrowed,
    /// B accepts a `const`/`enum` value A did not.
    EnumValueAdded,
    /// A accepts a value B's `const`/`enum` (or other keywords) refuse.
    EnumValueRemoved,
    /// B restricts the value to an `enum` or `const` where A had none.
    EnumAdded,
    /// A restricted the value to an `enum` or `const`; B does not.
    EnumRemoved,
    /// A bound (`minimum`, `maxLength`, `minItems`, ...) admits less in B.
    BoundTightened,
    /// A bound admits more in B.
    BoundLoosened,
    /// B's `multipleOf` is not a divisor of A's.
    MultipleOfChanged,
    /// B requires a member A does not.
    RequiredAdded,
    /// A required a member B does not.
    RequiredRemoved,
    /// A allows a member B's closed object does not declare.
    PropertyRemoved,
    /// B declares a member A did not.
    PropertyAdded,
    /// A admits members it does not declare; B does not.
    AdditionalPropertiesNarrowed,
    /// B admits members it does not declare; A did not.
    AdditionalPropertiesWidened,
    /// B requires distinct items; A did not.
    UniqueItemsAdded,
    /// A required distinct items; B does not.
    UniqueItemsRemoved,
    /// B's `pattern` differs from A's.
    PatternChanged,
    /// B's `format` differs from A's.
    FormatChanged,
    /// A branch of A's `oneOf`/`anyOf` is accepted by no branch of B's.
    BranchRemoved,
    /// B's `oneOf`/`anyOf` has a branch no branch of A's matches.
    BranchAdded,
    /// B's `oneOf` may match a document of A twice (a branch overlaps another).
    BranchOverlap,
    /// A value of A is accepted by none of B's `oneOf`/`anyOf` branches.
    NoBranchAccepts,
    /// B is the `false` schema here.
    Refused,
    /// `default` differs (an annotation: what a consumer assumes when the member is absent).
    DefaultChanged,
    /// B has a keyword the analysis does not compare, and A has not the same.
    KeywordUnproven,
}

impl Code {
    /// The code as written in reports: `type_narrowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::TypeWidened => "type_widened",
            Code::TypeNarrowed => "type_narrowed",
            Code::EnumValueAdded => "enum_value_added",
            Code::EnumValueRemoved => "enum_value_removed",
            Code::EnumAdded => "enum_added",
            Code::EnumRemoved => "enum_removed",
            Code::BoundTightened => "bound_tightened",
            Code::BoundLoosened => "bound_loosened",
            Code::MultipleOfChanged => "multiple_of_changed",
            Code::RequiredAdded => "required_added",
            Code::RequiredRemoved => "required_removed",
            Code::PropertyRemoved => "property_removed",
            Code::PropertyAdded => "property_added",
            Code::AdditionalPropertiesNarrowed => "additional_properties_narrowed",
            Code::AdditionalPropertiesWidened => "additional_properties_widened",
            Code::UniqueItemsAdded => "unique_items_added",
            Code::UniqueItemsRemoved => "unique_items_removed",
            Code::PatternChanged => "pattern_changed",
            Code::FormatChanged => "format_changed",
            Code::BranchRemoved => "branch_removed",
            Code::BranchAdded => "branch_added",
            Code::BranchOverlap => "branch_overlap",
            Code::NoBranchAccepts => "no_branch_accepts",
            Code::Refused => "refused",
            Code::DefaultChanged => "default_changed",
            Code::KeywordUnproven => "keyword_unproven",
        }
    }
}

impl Code {
    /// The same change seen the other way (B to A): what B lacks, A added. A schema's result
    /// is compared new-into-old, but a user reads its changes old-to-new.
    pub fn reversed(self) -> Code {
        match self {
            Code::TypeWidened => Code::TypeNarrowed,
            Code::TypeNarrowed => Code::TypeWidened,
            Code::EnumValueAdded => Code::EnumValueRemoved,
            Code::EnumValueRemoved => Code::EnumValueAdded,
            Code::EnumAdded => Code::EnumRemoved,
            Code::EnumRemoved => Code::EnumAdded,
            Code::BoundTightened => Code::BoundLoosened,
            Code::BoundLoosened => Code::BoundTightened,
            Code::RequiredAdded => Code::RequiredRemoved,
            Code::RequiredRemoved => Code::RequiredAdded,
            Code::PropertyRemoved => Code::PropertyAdded,
            Code::PropertyAdded => Code::PropertyRemoved,
            Code::AdditionalPropertiesNarrowed => Code::AdditionalPropertiesWidened,
            Code::AdditionalPropertiesWidened => Code::AdditionalPropertiesNarrowed,
            Code::UniqueItemsAdded => Code::UniqueItemsRemoved,
            Code::UniqueItemsRemoved => Code::UniqueItemsAdded,
            Code::BranchRemoved => Code::BranchAdded,
            Code::BranchAdded => Code::BranchRemoved,
            other => other,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change between schema A (what was accepted) and schema B (what must accept it).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub code: Code,
    pub effect: Effect,
    /// Where in A's document the change is (a JSON Pointer).
    pub a_pointer: String,
    /// Where in B's document the change is.
    pub b_pointer: String,
    /// Where in documents the change bears (relative to the compared places).
    pub path: Vec<Step>,
    /// What changed, naming A and B by their labels.
    pub message: String,
    /// A document A accepts and B refuses, checked by the interpreter against both (at the
    /// compared places); `None` when none could be built.
    pub witness: Option<Value>,
    /// How many steps of `path` lead to the value the witness was first built for.
    pub(crate) witness_at: usize,
}
