//! The compiled form of a schema the interpreter runs: every `$ref` resolved to a node index,
//! every pattern and format compiled, keyword values checked, so validating a document does
//! no lookups by name and no parsing of the schema.

use crate::check::{Bounds, Lengths, Pattern};
use crate::format::Format;
use serde_json::Value;

/// The index of a compiled node.
pub(crate) type Ix = u32;

/// JSON types, as bits.
pub(crate) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const INTEGER: u8 = 4;
    pub const NUMBER: u8 = 8;
    pub const STRING: u8 = 16;
    pub const ARRAY: u8 = 32;
    pub const OBJECT: u8 = 64;
}

/// `type`: the types admitted and how a violation names them (`a string or null`).
#[derive(Debug, Clone)]
pub(crate) struct Types {
    pub bits: u8,
    pub expected: String,
}

/// How an object that declares its members treats the others when nothing opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// Open (or opened by the schema).
    No,
    /// Closed at this node, as `additionalProperties: false` would: the node has no in-place
    /// applicator, so what it declares is all there is.
    Static,
    /// Closed after the node and its in-place subschemas have run: a member none of them
    /// evaluated is unknown, as `unevaluatedProperties: false` would say.
    Dynamic,
}

/// What a node says about members no `properties` or `patternProperties` entry names.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Additional {
    /// Nothing.
    Unsaid,
    /// `additionalProperties: false` as written: each is an unknown field.
    Forbidden,
    /// A schema each must satisfy.
    Schema(Ix),
}

/// A `oneOf` whose branches properties discriminate (see [`crate::one_of::Decider`]), each
/// branch a closed object: the branch is chosen by those properties and reported alone, as
/// generated code does.
#[derive(Debug, Clone)]
pub(crate) struct Discriminated {
    /// The discriminators; empty when keys alone decide.
    pub properties: Vec<String>,
    /// `(tag, branch)`, the tag being the index of its discriminator and its `const` (or its
    /// `enum`'s values, any of which names the branch): `None` for the branches chosen when no
    /// discriminator is present.
    pub branches: Vec<(Option<crate::one_of::BranchTag>, Ix)>,
    /// When `properties` is empty, per branch the keys only it declares: the branch whose keys
    /// the object has is chosen (none, or several branches', is reported as such). Else, when
    /// several branches have no tag, the same for those (the others' empty), used when the
    /// object has no discriminator.
    pub keys: Vec<Vec<String>>,
    /// Decided by tests of the members one after another (no properties, tags or keys).
    pub decision: Option<crate::one_of::DecisionTree>,
}

/// A `oneOf` / `anyOf` whose branches each take a JSON type of their own: the value is held
/// to the branch of its type alone, as generated code does.
#[derive(Debug, Clone)]
pub(crate) struct Union {
    /// `(type bit, branch)`, in schema order.
    pub branches: Vec<(u8, Ix)>,
    /// How a value of no branch's type is told what is expected.
    pub expected: String,
    /// Several branches that take objects, discriminated by a property (the first of them
    /// stands for all in `branches`).
    pub objects: Option<Discriminated>,
}

/// `contains` with its bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contains {
    pub node: Ix,
    pub min: u64,
    pub max: Option<u64>,
}

/// One compiled schema.
#[derive(Debug)]
pub(crate) struct Node {
    /// `file#pointer`, for messages.
    pub location: String,
    /// The `false` schema.
    pub reject: bool,
    /// Keywords beyond annotations: `{}` and `true` admit everything at no cost.
    pub any: bool,
    pub types: Option<Types>,
    /// `type: integer` alone (or with null): the typed value is an `i64`, so an integer
    /// beyond it is an `integer_range` violation.
    pub integer_range: bool,
    pub constant: Option<Value>,
    pub enumeration: Option<Vec<Value>>,
    // numbers
    pub bounds: Bounds,
    pub multiple_of: Option<f64>,
    // strings
    pub lengths: Lengths,
    pub pattern: Option<Pattern>,
    pub format: Option<Format>,
    // arrays
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub prefix_items: Vec<Ix>,
    pub items: Option<Ix>,
    pub contains: Option<Contains>,
    pub unique_items: bool,
    pub unevaluated_items: Option<Ix>,
    // objects
    pub properties: Vec<(String, Ix)>,
    /// Per property: listed in `required`.
    pub property_required: Vec<bool>,
    /// `required` names that `properties` does not declare.
    pub required_others: Vec<String>,
    pub pattern_properties: Vec<(Pattern, Ix)>,
    pub additional: Additional,
    pub property_names: Option<Ix>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, Ix)>,
    pub unevaluated_properties: Option<Ix>,
    pub close: Close,
    // applicators
    /// A `$ref` beside other keywords, applied in place.
    pub reference: Option<Ix>,
    /// A node that is only a `$ref` (and annotations): its target, run as if written here.
    pub alias: Option<Ix>,
    /// `anyOf: [X, {"type": "null"}]`: null, or X run as if written here.
    pub nullable: Option<Ix>,
    pub discriminated: Option<Discriminated>,
    pub union: Option<Union>,
    pub all_of: Vec<Ix>,
    pub any_of: Vec<Ix>,
    pub one_of: Vec<Ix>,
    pub not: Option<Ix>,
    pub condition: Option<Ix>,
    pub then: Option<Ix>,
    pub otherwise: Option<Ix>,
}

impl Node {
    pub(crate) fn new(location: String) -> Node {
        Node {
            location,
            reject: false,
            any: true,
            types: None,
            integer_range: false,
            constant: None,
            enumeration: None,
            bounds: Bounds::NONE,
            multiple_of: None,
            lengths: Lengths::default(),
            pattern: None,
            format: None,
            min_items: None,
            max_items: None,
            prefix_items: Vec::new(),
            items: None,
            contains: None,
            unique_items: false,
            unevaluated_items: None,
            properties: Vec::new(),
            property_required: Vec::new(),
            required_others: Vec::new(),
            pattern_properties: Vec::new(),
            additional: Additional::Unsaid,
            property_names: None,
            min_properties: None,
            max_properties: None,
            dependent_required: Vec::new(),
            dependent_schemas: Vec::new(),
            unevaluated_properties: None,
            close: Close::No,
            reference: None,
            alias: None,
            nullable: None,
            discriminated: None,
            union: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            condition: None,
            then: None,
            otherwise: None,
        }
    }

    /// The subschemas applied to the same value as this node (in place).
    pub(crate) fn in_place(&self) -> impl Iterator<Item = Ix> + '_ {
        self.reference
            .into_iter()
            .chain(self.alias)
            .chain(self.nullable)
            .chain(self.all_of.iter().copied())
            .chain(self.any_of.iter().copied())
            .chain(self.one_of.iter().copied())
            .chain(self.not)
            .chain(self.condition)
            .chain(self.then)
            .chain(self.otherwise)
            .chain(self.dependent_schemas.iter().map(|(_, n)| *n))
            .chain(
                self.discriminated
                    .iter()
                    .flat_map(|d| d.branches.iter().map(|(_, n)| *n)),
            )
            .chain(self.union.iter().flat_map(|u| {
                u.branches.iter().map(|(_, n)| *n).chain(
                    u.objects
                        .iter()
                        .flat_map(|d| d.branches.iter().map(|(_, n)| *n)),
                )
            }))
    }

    /// True when a general in-place applicator runs here (the forms run "as if written
    /// here" — alias, nullable, discriminated, union — do not count).
    pub(crate) fn has_general_in_place(&self) -> bool {
        self.reference.is_some()
            || !self.all_of.is_empty()
            || !self.any_of.is_empty()
            || !self.one_of.is_empty()
            || self.not.is_some()
            || self.condition.is_some()
            || self.then.is_some()
            || self.otherwise.is_some()
            || !self.dependent_schemas.is_empty()
    }
}

/// A compiled schema set.
#[derive(Debug, Default)]
pub(crate) struct Program {
    pub nodes: Vec<Node>,
}
