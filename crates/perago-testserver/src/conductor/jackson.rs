//! Reading request JSON the way Conductor's Jackson `ObjectMapper` does (`docs/src/reference/conductor.md` §1,
//! "JSON (de)serialisation quirks").
//!
//! - Unknown properties are ignored (`FAIL_ON_UNKNOWN_PROPERTIES` off).
//! - `null` for a primitive (`int`, `long`, `boolean`) becomes 0 / false
//!   (`FAIL_ON_NULL_FOR_PRIMITIVES` off); for boxed types and objects it stays null.
//! - Scalars are coerced (`"5"` → 5, 5 → `"5"`, 1.9 → 1); anything else that does
//!   not fit, and enum values outside the enum, are `HttpMessageNotReadableException`,
//!   which Conductor answers with **500** ([`NotReadable`]).

use serde_json::{Map, Value};

/// A body Jackson could not map onto the Java type; answered with 500.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotReadable(pub(crate) String);

impl NotReadable {
    fn new(java_type: &str, field: &str, value: &Value) -> NotReadable {
        NotReadable(format!(
            "JSON parse error: Cannot deserialize value of type `{java_type}` from {} (property \"{field}\")",
            describe(value)
        ))
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "Null value".into(),
        Value::Bool(b) => format!("Boolean value ({b})"),
        Value::Number(n) => format!("Number value ({n})"),
        Value::String(s) => format!("String \"{s}\""),
        Value::Array(_) => "Array value (token `JsonToken.START_ARRAY`)".into(),
        Value::Object(_) => "Object value (token `JsonToken.START_OBJECT`)".into(),
    }
}

/// Parses a request body; malformed JSON is a 500 like any unreadable body.
pub(crate) fn parse_body(body: &str) -> Result<Value, NotReadable> {
    if body.trim().is_empty() {
        return Err(NotReadable("Required request body is missing".into()));
    }
    serde_json::from_str(body).map_err(|e| NotReadable(format!("JSON parse error: {e}")))
}

/// A Java integral number of at most `bits` bits, or `None` for JSON null.
fn integral(
    value: &Value,
    java_type: &str,
    field: &str,
    bits: u32,
) -> Result<Option<i64>, NotReadable> {
    let err = || NotReadable::new(java_type, field, value);
    let n = match value {
        Value::Null => return Ok(None),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i,
            // ACCEPT_FLOAT_AS_INT: 1.9 → 1.
            None => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
                .ok_or_else(err)?,
        },
        Value::String(s) if s.trim().is_empty() => return Ok(None),
        Value::String(s) => s.trim().parse::<i64>().map_err(|_| err())?,
        _ => return Err(err()),
    };
    let (min, max) = if bits == 32 {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (i64::MIN, i64::MAX)
    };
    if n < min || n > max {
        return Err(err());
    }
    Ok(Some(n))
}

/// Java `int` (primitive: null → 0).
pub(crate) fn int(value: &Value, field: &str) -> Result<i64, NotReadable> {
    Ok(integral(value, "int", field, 32)?.unwrap_or(0))
}

/// Java `long` (primitive: null → 0).
pub(crate) fn long(value: &Value, field: &str) -> Result<i64, NotReadable> {
    Ok(integral(value, "long", field, 64)?.unwrap_or(0))
}

/// Java `Integer` (boxed: null stays null).
pub(crate) fn boxed_int(value: &Value, field: &str) -> Result<Option<i64>, NotReadable> {
    integral(value, "java.lang.Integer", field, 32)
}

/// Java `Long` (boxed: null stays null).
pub(crate) fn boxed_long(value: &Value, field: &str) -> Result<Option<i64>, NotReadable> {
    integral(value, "java.lang.Long", field, 64)
}

/// Java `boolean` (primitive: null → false; 0/1 and "true"/"false" coerced).
pub(crate) fn boolean(value: &Value, field: &str) -> Result<bool, NotReadable> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.as_i64() == Some(0) => Ok(false),
        Value::Number(n) if n.as_i64() == Some(1) => Ok(true),
        Value::String(s) if s == "true" => Ok(true),
        Value::String(s) if s == "false" => Ok(false),
        _ => Err(NotReadable::new("boolean", field, value)),
    }
}

/// Java `String` (scalars coerced to their text; null stays null).
pub(crate) fn string(value: &Value, field: &str) -> Result<Option<String>, NotReadable> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Number(n) => Ok(Some(n.to_string())),
        _ => Err(NotReadable::new("java.lang.String", field, value)),
    }
}

/// Java `List<String>` (null stays null).
pub(crate) fn string_list(value: &Value, field: &str) -> Result<Option<Vec<Value>>, NotReadable> {
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .iter()
            .map(|item| string(item, field).map(|s| s.map_or(Value::Null, Value::String)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        _ => Err(NotReadable::new(
            "java.util.ArrayList<java.lang.String>",
            field,
            value,
        )),
    }
}

/// Java `Map<String, Object>` (null stays null).
pub(crate) fn object(
    value: &Value,
    field: &str,
) -> Result<Option<Map<String, Value>>, NotReadable> {
    match value {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map.clone())),
        _ => Err(NotReadable::new(
            "java.util.LinkedHashMap<java.lang.String,java.lang.Object>",
            field,
            value,
        )),
    }
}

/// A Java enum (case-sensitive; null stays null).
pub(crate) fn enumeration(
    value: &Value,
    java_type: &str,
    variants: &[&str],
    field: &str,
) -> Result<Option<String>, NotReadable> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if variants.contains(&s.as_str()) => Ok(Some(s.clone())),
        Value::String(s) => Err(NotReadable(format!(
            "JSON parse error: Cannot deserialize value of type `{java_type}` from String \"{s}\": not one of the values accepted for Enum class: [{}]",
            variants.join(", ")
        ))),
        _ => Err(NotReadable::new(java_type, field, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn primitives_take_null_as_zero_and_boxed_keep_null() {
        assert_eq!(int(&Value::Null, "retryCount"), Ok(0));
        assert_eq!(boxed_int(&Value::Null, "pollTimeoutSeconds"), Ok(None));
        assert_eq!(boolean(&Value::Null, "enforceSchema"), Ok(false));
    }

    #[test]
    fn scalars_are_coerced() {
        assert_eq!(int(&json!("7"), "f"), Ok(7));
        assert_eq!(int(&json!(2.9), "f"), Ok(2));
        assert_eq!(string(&json!(5), "f"), Ok(Some("5".into())));
    }

    #[test]
    fn misfits_are_not_readable() {
        assert!(int(&json!("x"), "f").is_err());
        assert!(int(&json!(i64::from(i32::MAX) + 1), "f").is_err());
        assert!(int(&json!(true), "f").is_err());
        assert!(string(&json!({}), "f").is_err());
        assert!(enumeration(&json!("fixed"), "RetryLogic", &["FIXED"], "retryLogic").is_err());
        assert!(parse_body("{").is_err());
        assert!(parse_body("").is_err());
    }
}
