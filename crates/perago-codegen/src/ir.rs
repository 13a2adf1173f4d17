//! The one intermediate representation of a set of schemas: what perago-codegen emits Rust from.
//! (What a document means against a schema is the interpreter's, [`perago_schema::Validator`]; the
//! IR only says how it is typed and read.)

use perago_schema::check::{self, Bounds, Lengths, Pattern};
pub use perago_schema::kind::{Kind, kinds_text, string_values};
use serde_json::Value;

/// The index of a node in an [`Ir`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub usize);

/// A set of normalised schemas: every object closed unless it declares a map, every `$ref`
/// resolved to the node it names.
#[derive(Debug, Default)]
pub struct Ir {
    nodes: Vec<Node>,
}

/// One schema node.
#[derive(Debug)]
pub struct Node {
    /// Where it was written: the file and the JSON Pointer in it (`workspace-input.schema.json#/properties/ref`).
    pub location: String,
    /// The Rust type name, for nodes that become a named type (objects, `oneOf`s, enums,
    /// string constants, and `$defs`/root schemas).
    pub name: Option<String>,
    /// `title`
    pub title: Option<String>,
    /// `description`
    pub description: Option<String>,
    /// `default`, applied to the typed value when an optional property is absent.
    pub default: Option<Value>,
    /// What values it admits.
    pub shape: Shape,
    /// Checks on the typed value beside its shape (`format`, `multipleOf`, `uniqueItems`).
    pub checks: Checks,
    /// When the value is deferred to the interpreter (a part of its schema is not typed rule by rule:
    /// `not`, `if`, `contains`…, or it has no one JSON type, then [`Shape::Any`]): why.
    pub deferred: Option<String>,
}

impl Node {
    /// True when its generated type is a `Contract` of its own (a named struct, `oneOf`, union,
    /// or value deferred whole to the interpreter); other named types are aliases, checked where
    /// they are used.
    pub fn implements_contract(&self) -> bool {
        self.name.is_some()
            && match &self.shape {
                Shape::Object {
                    properties,
                    additional,
                    rules,
                } => !(rules.case || (properties.is_empty() && additional.is_some())),
                Shape::OneOf { .. } | Shape::Union(_) => true,
                Shape::Any => self.deferred.is_some(),
                _ => false,
            }
    }
}

/// The checks a node makes on its typed value beyond its [`Shape`], each after the shape's own
/// (as the interpreter orders them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Checks {
    /// `format` of a string, when perago checks that format.
    pub format: Option<check::Format>,
    /// `multipleOf` of an integer or number.
    pub multiple_of: Option<f64>,
    /// `uniqueItems: true` on an array.
    pub unique_items: bool,
}

impl Checks {
    /// True when there is no check.
    pub fn is_empty(&self) -> bool {
        *self == Checks::default()
    }
}

/// True when an `enum`'s values are all strings, integers (`i64`), booleans or `null`: a Rust
/// enum with a variant per value (IntEnum, `Literal[1, 2]`, `Literal["auto", 0]`).
pub fn is_literal_enum(values: &[Value]) -> bool {
    !values.is_empty()
        && values.iter().all(|v| {
            matches!(v, Value::String(_) | Value::Bool(_) | Value::Null) || v.as_i64().is_some()
        })
}

/// What a node admits.
#[derive(Debug)]
pub enum Shape {
    /// `{}`: any JSON value.
    Any,
    /// `type: null`
    Null,
    /// `type: boolean`
    Boolean,
    /// `type: integer` and its bounds.
    Integer(Bounds),
    /// `type: number` and its bounds.
    Number(Bounds),
    /// `type: string` and its rules.
    String {
        /// `minLength` / `maxLength`
        lengths: Lengths,
        /// `pattern`
        pattern: Option<Pattern>,
        /// `writeOnly: true` or `format: password` (Pydantic's `SecretStr`): a `Secret`,
        /// redacted in `Debug`.
        secret: bool,
    },
    /// `const`
    Const(Value),
    /// `enum`
    Enum(Vec<Value>),
    /// `type: array`
    Array {
        /// `items` (Any when absent)
        items: NodeId,
        /// `minItems`
        min_items: Option<u64>,
        /// `maxItems`
        max_items: Option<u64>,
    },
    /// `type: array` with `prefixItems`: a tuple (lint makes `minItems` at least its length),
    /// fixed with `items: false` or by a `maxItems` of its length without `items` (as Pydantic
    /// writes `tuple[int, str]`), else followed by the items `items` admits.
    Tuple {
        /// `prefixItems`, in order.
        items: Vec<NodeId>,
        /// `items`: the schema of the items after them; `None` when the tuple is fixed.
        rest: Option<NodeId>,
        /// Fixed by `items: false` (each further item refused), not by `maxItems` (only the
        /// count refuses them).
        items_false: bool,
        /// `minItems`
        min_items: Option<u64>,
        /// `maxItems`
        max_items: Option<u64>,
    },
    /// `type: object`
    Object {
        /// Declared properties, in schema order.
        properties: Vec<Property>,
        /// `additionalProperties` as a schema (a map); `None` means closed.
        additional: Option<NodeId>,
        /// The object's own rules and, for a merged `allOf`, the interpreter's order of checks.
        rules: ObjectRules,
    },
    /// An object without declared properties whose keys are checked: `patternProperties` with
    /// one pattern (keys that do not match are unknown) or `additionalProperties` a schema, with
    /// `propertyNames`, `minProperties` and `maxProperties`.
    Map {
        /// The schema of every value.
        values: NodeId,
        /// The one `patternProperties` pattern, which every key must match.
        pattern: Option<Pattern>,
        /// `propertyNames`, as a string schema.
        names: Option<NodeId>,
        /// `minProperties`
        min: Option<u64>,
        /// `maxProperties`
        max: Option<u64>,
    },
    /// `oneOf` whose branches a discriminator property distinguishes, or (no discriminator)
    /// the keys only one branch declares ([`Branch::keys`]), or both: the branches without a
    /// tag, when several, are discriminated by their keys when no discriminator is present. With
    /// several discriminators, each branch with a tag has it on one of them (which only the
    /// branches with a tag on it declare): a document with one is one of those branches, with
    /// several none. Or (no discriminators, tags or keys) by tests of their members one after
    /// another (`decision`).
    OneOf {
        /// The properties that tell the branches apart (their tags); empty when keys do.
        discriminators: Vec<String>,
        /// The branches, in schema order.
        branches: Vec<Branch>,
        /// When tests of the branches' members tell them apart, one after another.
        decision: Option<perago_schema::one_of::DecisionTree>,
    },
    /// `type: [T, "null"]` or `anyOf: [T, {type: null}]`.
    Nullable(NodeId),
    /// `anyOf` / `oneOf` whose branches are discriminated by JSON type: a value is checked by the
    /// branch of its type alone.
    Union(Vec<Alternative>),
    /// `$ref`, resolved.
    Ref(NodeId),
}

/// A declared property of an object.
#[derive(Debug, Clone)]
pub struct Property {
    /// The JSON key.
    pub name: String,
    /// Its schema.
    pub node: NodeId,
    /// Listed in `required`.
    pub required: bool,
}

/// What an object checks beyond its members' values, in the interpreter's order: a plain
/// object checks its properties in schema order, then its counts and `dependentRequired`; an
/// `allOf` merged into one object checks each part's properties and rules in turn, then the
/// members no part declares (it is closed over the union of its parts).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRules {
    /// The checks after the undeclared members, in order; empty for a plain object without
    /// rules ([`ObjectRules::steps_of`] gives the implicit ones).
    pub steps: Vec<Step>,
    /// Undeclared members are reported after the steps (`allOf`), not before them.
    pub unknown_last: bool,
    /// How many "must be an object" violations a value of another type gets: one per part that
    /// says `"type": "object"` when the merged object itself does not.
    pub type_errors: usize,
    /// A case of an `if`/`then`/`else` chain (a variant of the `oneOf` it is typed as): read
    /// only as that variant, with no `Contract` of its own (no schema location means it alone).
    pub case: bool,
}

impl Default for ObjectRules {
    fn default() -> Self {
        ObjectRules {
            steps: Vec::new(),
            unknown_last: false,
            type_errors: 1,
            case: false,
        }
    }
}

impl ObjectRules {
    /// True for an object that checks its properties in schema order and nothing else.
    pub fn is_plain(&self) -> bool {
        *self == ObjectRules::default()
    }

    /// The steps of an object with these `properties`, implicit ones included.
    pub fn steps_of(&self, properties: &[Property]) -> Vec<Step> {
        if !self.steps.is_empty() {
            return self.steps.clone();
        }
        properties
            .iter()
            .enumerate()
            .map(|(i, p)| Step::Property(i, p.required))
            .collect()
    }
}

/// One check of an object after its members are read (indices are into its properties).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The property's value (what it recorded), or `required` when absent and this flag says so.
    Property(usize, bool),
    /// `required` naming a property another `allOf` part declares: present, or a violation.
    Present(usize),
    /// `minProperties` / `maxProperties` on the number of members.
    Count(Option<u64>, Option<u64>),
    /// `dependentRequired`: when the first property is present, each of the others must be.
    DependentRequired(usize, Vec<usize>),
}

/// A branch of a discriminated `oneOf`.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The branch's tag, or `None` for a branch chosen when no discriminator is present.
    pub tag: Option<Tag>,
    /// The branch's object schema.
    pub node: NodeId,
    /// When the `oneOf` has no discriminator: the properties only this branch declares, the
    /// first of which in a document chooses it. With discriminators and several branches
    /// without a tag: for each of those, the properties only it of them declares (empty for
    /// the branches with a tag).
    pub keys: Vec<String>,
}

impl Branch {
    /// The branch's tag when it is one string (a string `const`, or an `enum` of one).
    pub fn tag_text(&self) -> Option<&str> {
        match self.tag.as_ref().map(|t| t.values.as_slice()) {
            Some([one]) => one.as_str(),
            _ => None,
        }
    }
}

/// A branch's tag: the `const` it gives a discriminator, or the values of its `enum`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    /// The index of the discriminator among the `oneOf`'s `discriminators`.
    pub property: usize,
    /// The `const`, or the `enum`'s values in schema order (each names the branch; the first
    /// names its variant): strings, booleans or integers (`i64`s), none another branch's.
    pub values: Vec<Value>,
}

impl Tag {
    /// The value that names the branch: the `const`, or the `enum`'s first.
    pub fn first(&self) -> &Value {
        &self.values[0]
    }
}

/// A branch of a [`Shape::Union`]: the JSON type it takes, and its schema.
#[derive(Debug, Clone, Copy)]
pub struct Alternative {
    /// The JSON type of the values it takes.
    pub kind: Kind,
    /// Its schema.
    pub node: NodeId,
}

impl Ir {
    /// An empty IR.
    pub fn new() -> Self {
        Ir::default()
    }

    /// Adds a node and returns its id.
    pub fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        NodeId(self.nodes.len() - 1)
    }

    /// The node with this id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }

    /// The node with this id, to fill in.
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0]
    }

    /// Every node with its id.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i), n))
    }

    /// Follows `$ref`s to the node that says what is admitted.
    pub fn resolve(&self, mut id: NodeId) -> NodeId {
        // Refs always end: the builder rejects a $ref cycle without a node in between.
        while let Shape::Ref(target) = self.node(id).shape {
            id = target;
        }
        id
    }
}
