//! The dialect perago reads and the keywords of its vocabulary that only annotate, for the
//! interpreter and code generation alike.

/// The dialect every root must declare.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

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
