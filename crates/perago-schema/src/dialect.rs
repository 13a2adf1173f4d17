//! The dialect perago reads and the keywords of its vocabulary that only annotate, for the
//! interpreter and code generation alike.

/// The dialect every root must declare.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords whose value is one schema.
pub const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value is an array of schemas.
pub const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of schemas.
pub const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
];
/// Keywords that only annotate (the interpreter's too).
pub const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords that say something of a schema and constrain nothing.
pub fn is_annotation(keyword: &str) -> bool {
    ANNOTATIONS.contains(&keyword)
}
