//! The dialects perago reads and their vocabularies, for the interpreter and code generation
//! alike. A document's root `$schema` decides its dialect (none means 2020-12); a draft-07 or
//! 2019-09 document is read as its 2020-12 equivalent ([`upgrade`]), so every later stage
//! speaks 2020-12 and the one policy (closed objects, repeated keys refused, `i64`) sits on top
//! of each draft's own meaning.

pub mod upgrade;

use serde_json::Value;

/// The dialect a schema without `$schema` is read in, and the one everything is read as.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A JSON Schema dialect perago reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `http://json-schema.org/draft-07/schema#`
    Draft07,
    /// `https://json-schema.org/draft/2019-09/schema`
    Draft2019_09,
    /// `https://json-schema.org/draft/2020-12/schema`
    Draft2020_12,
}

impl Dialect {
    /// Its meta-schema's URI, as `$schema` names it.
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft07 => "http://json-schema.org/draft-07/schema#",
            Dialect::Draft2019_09 => "https://json-schema.org/draft/2019-09/schema",
            Dialect::Draft2020_12 => DIALECT,
        }
    }

    /// Its name in messages: `draft-07`, `2019-09`, `2020-12`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Draft07 => "draft-07",
            Dialect::Draft2019_09 => "2019-09",
            Dialect::Draft2020_12 => "2020-12",
        }
    }

    /// The dialect a `$schema` value names (`http` or `https`, with or without the empty
    /// fragment), or why perago does not read it.
    pub fn named(uri: &str) -> Result<Dialect, String> {
        let bare = uri.trim_end_matches('#');
        let bare = bare
            .strip_prefix("https://")
            .or_else(|| bare.strip_prefix("http://"))
            .unwrap_or(bare);
        match bare {
            "json-schema.org/draft-07/schema" => Ok(Dialect::Draft07),
            "json-schema.org/draft/2019-09/schema" => Ok(Dialect::Draft2019_09),
            "json-schema.org/draft/2020-12/schema" => Ok(Dialect::Draft2020_12),
            "json-schema.org/draft-06/schema"
            | "json-schema.org/draft-04/schema"
            | "json-schema.org/draft-03/schema" => Err(format!(
                "{uri:?} is a draft perago does not read; it reads {}: a draft-06 schema reads the same as draft-07, and a draft-04 one once `id` is `$id` and a boolean `exclusiveMinimum`/`exclusiveMaximum` is the bound itself",
                Dialect::LIST
            )),
            _ => Err(format!(
                "{uri:?} is not a dialect perago reads; it reads {} (without `$schema`, 2020-12)",
                Dialect::LIST
            )),
        }
    }

    const LIST: &'static str = "\"https://json-schema.org/draft/2020-12/schema\", \"https://json-schema.org/draft/2019-09/schema\" and \"http://json-schema.org/draft-07/schema#\"";

    /// The dialect of a document: its root's `$schema`, 2020-12 when it has none. A `$schema`
    /// perago does not read is 2020-12 here too, and refused when the schema is compiled or
    /// linted, at its location.
    pub fn of(root: &Value) -> Dialect {
        root.get("$schema")
            .and_then(Value::as_str)
            .and_then(|s| Dialect::named(s).ok())
            .unwrap_or(Dialect::Draft2020_12)
    }

    /// Whether `$ref` stands alone (draft-07: its siblings are ignored) rather than applying
    /// beside them.
    pub fn ref_overrides_siblings(self) -> bool {
        self == Dialect::Draft07
    }
}

/// Keywords whose value is one schema (2020-12).
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
/// Keywords whose value is an array of schemas (2020-12).
pub const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of schemas (2020-12).
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

/// Keywords that assert something of a value (2020-12's validation and format vocabularies).
pub const ASSERTIONS: &[&str] = &[
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
];
/// The core keywords perago reads (2020-12, less the dynamic references).
pub const CORE: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$ref",
    "$defs",
];

/// True when the interpreter reads `keyword` in a document of `dialect` (as read: a draft-07
/// or 2019-09 document upgraded to 2020-12's names), extension keywords (`x-…`) included.
pub fn is_keyword(dialect: Dialect, keyword: &str) -> bool {
    let k = &keyword;
    keyword.starts_with("x-")
        || SCHEMA_KEYWORDS.contains(k)
        || SCHEMA_ARRAY_KEYWORDS.contains(k)
        || SCHEMA_MAP_KEYWORDS.contains(k)
        || ANNOTATIONS.contains(k)
        || ASSERTIONS.contains(k)
        || CORE.contains(k)
        || (dialect == Dialect::Draft2019_09
            && matches!(keyword, "$recursiveRef" | "$recursiveAnchor"))
}

/// Keywords that say something of a schema and constrain nothing.
pub fn is_annotation(keyword: &str) -> bool {
    ANNOTATIONS.contains(&keyword)
}
