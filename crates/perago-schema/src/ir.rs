//! The one intermediate representation of a set of schemas: what perago-codegen emits Rust from
//! and what [`Ir::validate`] interprets at run time for a schema that was not compiled in.

use crate::check::{self, Bounds, Lengths, Out, Pattern};
use crate::path::Path;
use crate::violation::Violation;
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
    /// `type: object`
    Object {
        /// Declared properties, in schema order.
        properties: Vec<Property>,
        /// `additionalProperties` as a schema (a map); `None` means closed.
        additional: Option<NodeId>,
    },
    /// `oneOf` whose branches a discriminator property tells apart.
    OneOf {
        /// The property that tells the branches apart.
        discriminator: String,
        /// The branches, in schema order.
        branches: Vec<Branch>,
    },
    /// `type: [T, "null"]` or `anyOf: [T, {type: null}]`.
    Nullable(NodeId),
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

/// A branch of a discriminated `oneOf`.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The discriminator's `const` in this branch, or `None` for the branch chosen when the
    /// discriminator is absent.
    pub tag: Option<String>,
    /// The branch's object schema.
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

    /// Validates `value` against node `root`: every violation, in check order.
    pub fn validate(&self, root: NodeId, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        self.walk(root, value, &Path::Root, &mut out);
        out
    }

    /// Parses `bytes` strictly and validates the document; malformed JSON is a violation at
    /// `$`, a repeated key one at its path.
    pub fn validate_slice(&self, root: NodeId, bytes: &[u8]) -> Vec<Violation> {
        match crate::json::parse_strict_slice(bytes) {
            Ok(value) => self.validate(root, &value),
            Err(e) => vec![e.to_violation()],
        }
    }

    /// The walk generated validators follow too: same checks, same order.
    fn walk(&self, id: NodeId, v: &Value, path: &Path<'_>, out: &mut Out) -> bool {
        match &self.node(id).shape {
            Shape::Any => true,
            Shape::Null => check::null(v, path, out).is_some(),
            Shape::Boolean => check::boolean(v, path, out).is_some(),
            Shape::Integer(bounds) => check::integer(v, path, out, bounds).is_some(),
            Shape::Number(bounds) => check::number(v, path, out, bounds).is_some(),
            Shape::String { lengths, pattern } => {
                check::string(v, path, out, lengths, pattern.as_ref()).is_some()
            }
            Shape::Const(Value::String(s)) => check::const_str(v, path, out, s),
            Shape::Const(c) => check::const_value(v, path, out, c),
            Shape::Enum(values) => match string_values(values) {
                Some(allowed) => check::string_enum(v, path, out, &allowed).is_some(),
                None => check::value_enum(v, path, out, values),
            },
            Shape::Array {
                items,
                min_items,
                max_items,
            } => {
                let Some((elements, mut ok)) = check::array(v, path, out, *min_items, *max_items)
                else {
                    return false;
                };
                for (i, element) in elements.iter().enumerate() {
                    ok &= self.walk(*items, element, &path.index(i), out);
                }
                ok
            }
            Shape::Object {
                properties,
                additional,
            } => {
                let Some(map) = check::object(v, path, out) else {
                    return false;
                };
                let mut ok = true;
                for (key, value) in map {
                    if properties.iter().any(|p| p.name == *key) {
                        continue;
                    }
                    match additional {
                        Some(schema) => ok &= self.walk(*schema, value, &path.key(key), out),
                        None => {
                            check::unknown_field(&path.key(key), out);
                            ok = false;
                        }
                    }
                }
                for property in properties {
                    match map.get(&property.name) {
                        Some(value) => {
                            ok &= self.walk(property.node, value, &path.key(&property.name), out)
                        }
                        None if property.required => {
                            check::required(&path.key(&property.name), out);
                            ok = false;
                        }
                        None => {}
                    }
                }
                ok
            }
            Shape::OneOf {
                discriminator,
                branches,
            } => {
                let Some(map) = check::object(v, path, out) else {
                    return false;
                };
                let chosen = match map.get(discriminator) {
                    None => branches.iter().find(|b| b.tag.is_none()),
                    Some(tag) => branches
                        .iter()
                        .find(|b| b.tag.is_some() && b.tag.as_deref() == tag.as_str()),
                };
                match chosen {
                    Some(branch) => self.walk(branch.node, v, path, out),
                    None if map.contains_key(discriminator) => {
                        let tags: Vec<&str> =
                            branches.iter().filter_map(|b| b.tag.as_deref()).collect();
                        check::unknown_discriminator(&path.key(discriminator), out, &tags);
                        false
                    }
                    None => {
                        check::required(&path.key(discriminator), out);
                        false
                    }
                }
            }
            Shape::Nullable(inner) => v.is_null() || self.walk(*inner, v, path, out),
            Shape::Ref(target) => self.walk(*target, v, path, out),
        }
    }
}

/// The values of an `enum` when all are strings (the case that becomes a Rust enum).
pub fn string_values(values: &[Value]) -> Option<Vec<&str>> {
    values.iter().map(Value::as_str).collect()
}
