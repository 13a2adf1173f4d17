//! The JSON types, as unions and `oneOf` decisions tell branches apart.

use serde_json::Value;

/// A JSON type, as a union tells its branches apart (an integral number is an integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` / `false`
    Boolean,
    /// A number without a fractional part.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// The kind named by a `type` keyword's value.
    pub fn named(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    /// The `type` name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }

    /// How messages name it (`a string`).
    pub fn phrase(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Integer => "an integer",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }

    /// True when `v` is of this type (`1.0` is an integer, as `type` says).
    pub fn admits(self, v: &Value) -> bool {
        match (self, v) {
            (Kind::Null, Value::Null)
            | (Kind::Boolean, Value::Bool(_))
            | (Kind::Number, Value::Number(_))
            | (Kind::String, Value::String(_))
            | (Kind::Array, Value::Array(_))
            | (Kind::Object, Value::Object(_)) => true,
            (Kind::Integer, Value::Number(n)) => {
                !n.is_f64() || n.as_f64().is_some_and(|x| x.fract() == 0.0)
            }
            _ => false,
        }
    }

    /// The kind of a value: `None` for a number, whose kind depends on the branches (an
    /// integral one is both).
    pub fn of_value(v: &Value) -> Option<Kind> {
        Some(match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Boolean,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            Value::Number(_) => return None,
        })
    }
}

/// What a union expects, for its type violation: `a string or an integer`.
pub fn kinds_text(kinds: impl IntoIterator<Item = Kind>) -> String {
    let phrases: Vec<&str> = kinds.into_iter().map(Kind::phrase).collect();
    crate::check::type_list(&phrases)
}

/// The values of an `enum` when all are strings (the case that becomes a Rust enum).
pub fn string_values(values: &[Value]) -> Option<Vec<&str>> {
    values.iter().map(Value::as_str).collect()
}
