//! What a validator reports: `{path, code, message}`, collected in check order.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of a violation, stable for machines; the message is for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The document is not JSON (or nests deeper than the parser allows).
    MalformedJson,
    /// A key appears twice in one object.
    DuplicateField,
    /// The value has the wrong JSON type.
    Type,
    /// A required property is absent.
    Required,
    /// A property the closed object does not declare.
    UnknownField,
    /// The value differs from the schema's `const`.
    Const,
    /// The value is not one of the schema's `enum` values.
    Enum,
    /// The discriminator names no branch of a `oneOf`.
    Discriminator,
    /// Fewer code points than `minLength`.
    MinLength,
    /// More code points than `maxLength`.
    MaxLength,
    /// No match for `pattern`.
    Pattern,
    /// Below `minimum`.
    Minimum,
    /// Above `maximum`.
    Maximum,
    /// At or below `exclusiveMinimum`.
    ExclusiveMinimum,
    /// At or above `exclusiveMaximum`.
    ExclusiveMaximum,
    /// Fewer items than `minItems`.
    MinItems,
    /// More items than `maxItems`.
    MaxItems,
    /// A valid JSON integer that does not fit the 64-bit typed value.
    IntegerRange,
    /// A rule of a contract that JSON Schema cannot state (e.g. worker-completion/v1).
    Contract,
    /// Not a multiple of `multipleOf`.
    MultipleOf,
    /// Fewer members than `minProperties`.
    MinProperties,
    /// More members than `maxProperties`.
    MaxProperties,
    /// An item repeated where `uniqueItems` forbids it.
    UniqueItems,
    /// Too few or too many items matching `contains` (`minContains`, `maxContains`).
    Contains,
    /// A string not in its `format`.
    Format,
    /// No branch of an `anyOf` matches.
    AnyOf,
    /// Not exactly one branch of a `oneOf` matches.
    OneOf,
    /// The schema of `not` matches.
    Not,
    /// A value where the schema is `false`.
    NotAllowed,
}

impl Code {
    /// The snake_case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::MalformedJson => "malformed_json",
            Code::DuplicateField => "duplicate_field",
            Code::Type => "type",
            Code::Required => "required",
            Code::UnknownField => "unknown_field",
            Code::Const => "const",
            Code::Enum => "enum",
            Code::Discriminator => "discriminator",
            Code::MinLength => "min_length",
            Code::MaxLength => "max_length",
            Code::Pattern => "pattern",
            Code::Minimum => "minimum",
            Code::Maximum => "maximum",
            Code::ExclusiveMinimum => "exclusive_minimum",
            Code::ExclusiveMaximum => "exclusive_maximum",
            Code::MinItems => "min_items",
            Code::MaxItems => "max_items",
            Code::IntegerRange => "integer_range",
            Code::Contract => "contract",
            Code::MultipleOf => "multiple_of",
            Code::MinProperties => "min_properties",
            Code::MaxProperties => "max_properties",
            Code::UniqueItems => "unique_items",
            Code::Contains => "contains",
            Code::Format => "format",
            Code::AnyOf => "any_of",
            Code::OneOf => "one_of",
            Code::Not => "not",
            Code::NotAllowed => "not_allowed",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One violation of a contract, at a JSONPath-style location.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Violation {
    /// Where: `$`, `$.summary`, `$.proposed_split[1]`, `$['odd key']`.
    pub path: String,
    /// What kind of rule failed.
    pub code: Code,
    /// What is wrong, for people.
    pub message: String,
}

impl Violation {
    /// A violation at an already rendered path.
    pub fn new(path: impl Into<String>, code: Code, message: impl Into<String>) -> Self {
        Violation {
            path: path.into(),
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every violation of one document, in check order; the first is the primary one.
/// Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// Wraps a list collected by a validator.
    pub fn new(list: Vec<Violation>) -> Self {
        Violations(list)
    }

    /// The primary violation: the first in check order.
    pub fn primary(&self) -> Option<&Violation> {
        self.0.first()
    }

    /// All violations in check order.
    pub fn as_slice(&self) -> &[Violation] {
        &self.0
    }

    /// Iterates in check order.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the document was valid.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The list itself.
    pub fn into_vec(self) -> Vec<Violation> {
        self.0
    }
}

impl From<Vec<Violation>> for Violations {
    fn from(list: Vec<Violation>) -> Self {
        Violations(list)
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// One line per violation: `$.path: message`.
impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}
