//! [`Types`]: the JSON types a schema admits, as a set. `integer` is the integral numbers,
//! `fraction` the others, so `number` is both.

use serde_json::Value;

/// A set of JSON types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Types(u8);

impl Types {
    pub const NULL: Types = Types(1);
    pub const BOOLEAN: Types = Types(2);
    pub const INTEGER: Types = Types(4);
    /// Numbers that are not integral.
    pub const FRACTION: Types = Types(8);
    pub const NUMBER: Types = Types(4 | 8);
    pub const STRING: Types = Types(16);
    pub const ARRAY: Types = Types(32);
    pub const OBJECT: Types = Types(64);
    pub const ALL: Types = Types(127);
    pub const NONE: Types = Types(0);

    /// The set a `type` keyword names, `None` for a malformed one.
    pub fn of_keyword(value: &Value) -> Option<Types> {
        match value {
            Value::String(name) => Types::named(name),
            Value::Array(names) => names.iter().try_fold(Types::NONE, |set, name| {
                Some(set | Types::named(name.as_str()?)?)
            }),
            _ => None,
        }
    }

    fn named(name: &str) -> Option<Types> {
        Some(match name {
            "null" => Types::NULL,
            "boolean" => Types::BOOLEAN,
            "integer" => Types::INTEGER,
            "number" => Types::NUMBER,
            "string" => Types::STRING,
            "array" => Types::ARRAY,
            "object" => Types::OBJECT,
            _ => return None,
        })
    }

    /// The type of a value.
    pub fn of_value(value: &Value) -> Types {
        match value {
            Value::Null => Types::NULL,
            Value::Bool(_) => Types::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Types::INTEGER,
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 => Types::INTEGER,
                _ => Types::FRACTION,
            },
            Value::String(_) => Types::STRING,
            Value::Array(_) => Types::ARRAY,
            Value::Object(_) => Types::OBJECT,
        }
    }

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn intersects(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The single types of the set, `integer` and `fraction` apart.
    pub fn each(self) -> impl Iterator<Item = Types> {
        [
            Types::OBJECT,
            Types::ARRAY,
            Types::STRING,
            Types::INTEGER,
            Types::FRACTION,
            Types::BOOLEAN,
            Types::NULL,
        ]
        .into_iter()
        .filter(move |t| self.contains(*t))
    }

    /// The set as JSON Schema names it: `string|null`, `number` (not `integer|fraction`).
    pub fn name(self) -> String {
        if self == Types::ALL {
            return "any value".to_owned();
        }
        if self.is_empty() {
            return "no value".to_owned();
        }
        let mut names = Vec::new();
        for (t, name) in [
            (Types::OBJECT, "object"),
            (Types::ARRAY, "array"),
            (Types::STRING, "string"),
            (Types::NUMBER, "number"),
            (Types::INTEGER, "integer"),
            (Types::FRACTION, "non-integral number"),
            (Types::BOOLEAN, "boolean"),
            (Types::NULL, "null"),
        ] {
            let already = names.contains(&"number");
            if self.contains(t) && !(already && Types::NUMBER.contains(t)) {
                names.push(name);
            }
        }
        names.join("|")
    }
}

impl std::ops::BitOr for Types {
    type Output = Types;
    fn bitor(self, rhs: Types) -> Types {
        Types(self.0 | rhs.0)
    }
}

impl std::ops::BitAnd for Types {
    type Output = Types;
    fn bitand(self, rhs: Types) -> Types {
        Types(self.0 & rhs.0)
    }
}

impl std::ops::Sub for Types {
    type Output = Types;
    fn sub(self, rhs: Types) -> Types {
        Types(self.0 & !rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_read_as_json_schema_writes_them() {
        assert_eq!(
            Types::of_keyword(&json!(["string", "null"]))
                .unwrap()
                .name(),
            "string|null"
        );
        assert_eq!(
            Types::of_keyword(&json!("number")).unwrap().name(),
            "number"
        );
        assert_eq!(Types::INTEGER.name(), "integer");
        assert_eq!(Types::of_value(&json!(1.0)), Types::INTEGER);
        assert_eq!(Types::of_value(&json!(1.5)), Types::FRACTION);
        assert!(Types::of_keyword(&json!("float")).is_none());
    }
}
