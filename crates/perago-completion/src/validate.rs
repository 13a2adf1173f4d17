//! The semantic layer over the generated validator of `worker-completion.v1.schema.json`.
//!
//! The schema states the structure and the generated walk finds every structural violation;
//! this layer turns them into the contract's report: the contract's message for each
//! (path, rule), the rules JSON Schema cannot state, the contract's check order, and one
//! violation per check. It never re-checks what the schema already says.

use super::payload::{Payload, RefusalKind};
use crate::contracts::worker_completion_v1::{Contract as Tag, WorkerCompletionV1};
use perago_schema::json::{ParseError, parse_strict, parse_strict_slice};
use perago_schema::{Code, Contract, Path, Violation, Violations, check};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// `docs/src/reference/completion-contract.md` §2.1: the payload is not an object.
pub const NOT_AN_OBJECT: &str = "terminal payload must be a JSON object";
/// §3.1: a `contract` tag other than `worker-completion/v1`.
pub const UNSUPPORTED_CONTRACT: &str =
    "unsupported contract version (expected worker-completion/v1)";
/// §4.2: a `kind` that is not a string.
pub const KIND_NOT_A_STRING: &str = "must be a string refusal kind";
/// §4.3: a `kind` string outside the taxonomy.
pub const UNKNOWN_KIND: &str = "unknown refusal kind (allowed: awaiting_operator, scope_exceeded, underspecified, blocked_on_dependency)";
/// A required text is not a string, or is blank.
pub const NON_EMPTY_STRING: &str = "must be a non-empty string";
/// `summary` or `detail` over 2000 code points.
pub const OVER_CAP: &str = "exceeds the 2000-character cap";
/// `files_changed` or `proposed_split` is not a list.
pub const LIST_OF_STRINGS: &str = "must be a list of strings";
/// `verification` is neither an object nor null.
pub const OBJECT_OR_NULL: &str = "must be an object or null";
/// `exit_code` is missing, or not an integer.
pub const INTEGER: &str = "must be an integer";
/// `receipt_ref` is set but not a non-blank string.
pub const NON_EMPTY_STRING_OR_NULL: &str = "must be a non-empty string or null";
/// `proposed_split` is absent.
pub const REQUIRED_FOR_SCOPE_EXCEEDED: &str = "required for scope_exceeded";
/// `proposed_split` is empty or null.
pub const AT_LEAST_ONE_ITEM: &str = "must contain at least one item";

/// Validates a parsed payload against every rule of §2–§4: the typed payload, or every
/// violation in check order (the first is the primary `schema_error_path`).
pub fn validate(value: &Value) -> Result<Payload, Violations> {
    let Value::Object(map) = value else {
        return Err(only(Violation::new("$", Code::Type, NOT_AN_OBJECT)));
    };
    let (typed, mut found) = match WorkerCompletionV1::from_value(value) {
        Ok(typed) => (Some(typed), Vec::new()),
        Err(violations) => (None, violations.into_vec()),
    };
    beyond_the_schema(map, &mut found);
    let found = in_check_order(found.into_iter().map(|v| restate(v, map)).collect());
    match typed {
        Some(typed) if found.is_empty() => Ok(Payload::from_generated(typed)),
        // The generated walk returns nothing only when it recorded why.
        None if found.is_empty() => Err(only(Violation::new(
            "$",
            Code::Contract,
            "does not satisfy the worker-completion/v1 schema",
        ))),
        _ => Err(Violations::new(found)),
    }
}

/// Parses a payload written as JSON text strictly (§5: malformed JSON, trailing data, NaN and
/// truncated documents are a violation at `$`; a repeated key one at its path), then
/// validates it.
pub fn validate_text(text: &str) -> Result<Payload, Violations> {
    parse_strict(text)
        .map_err(parse_violation)
        .and_then(|v| validate(&v))
}

/// [`validate_text`] for bytes; bytes that are not UTF-8 are malformed JSON.
pub fn validate_slice(bytes: &[u8]) -> Result<Payload, Violations> {
    parse_strict_slice(bytes)
        .map_err(parse_violation)
        .and_then(|v| validate(&v))
}

fn parse_violation(error: ParseError) -> Violations {
    only(error.to_violation())
}

fn only(violation: Violation) -> Violations {
    Violations::new(vec![violation])
}

/// The rules the schema cannot state, recorded like the schema's findings and restated with
/// them.
fn beyond_the_schema(map: &Map<String, Value>, out: &mut check::Out) {
    match map.get("kind") {
        None => float_exit_code(map, out),
        // The walk stops at an unknown discriminator, but §4.1 checks the tag before `kind`.
        Some(kind) if kind.as_str().and_then(RefusalKind::from_name).is_none() => {
            if let Some(tag) = map.get("contract") {
                check::const_str(tag, &Path::Root.key("contract"), out, Tag::VALUE);
            }
        }
        Some(_) => {}
    }
}

/// JSON Schema counts `0.0` as an integer; the contract does not (§3.5).
fn float_exit_code(map: &Map<String, Value>, out: &mut check::Out) {
    let exit_code = map
        .get("verification")
        .and_then(|v| v.get("exit_code"))
        .filter(|code| code.as_number().is_some_and(serde_json::Number::is_f64));
    if exit_code.is_some() {
        let path = Path::Root.key("verification");
        check::push(out, &path.key("exit_code"), Code::Contract, INTEGER);
    }
}

/// One finding with the contract's message for its (path, rule).
fn restate(v: Violation, map: &Map<String, Value>) -> Violation {
    let Some((top, rest)) = top_key(&v.path) else {
        return v;
    };
    match message(top, rest, v.code, map) {
        Some((code, message)) => Violation::new(v.path, code, message),
        None => v,
    }
}

/// The contract's (code, message) for a finding, or `None` when the generated one is already
/// the contract's (`unknown field`, `required field is missing`).
fn message(
    top: &str,
    rest: &str,
    code: Code,
    map: &Map<String, Value>,
) -> Option<(Code, &'static str)> {
    let text = |message| Some((code, message));
    match (top, rest, code) {
        (_, _, Code::UnknownField) => None,
        ("contract", "", _) => text(UNSUPPORTED_CONTRACT),
        ("kind", "", _) if map.get("kind").is_some_and(Value::is_string) => {
            Some((Code::Discriminator, UNKNOWN_KIND))
        }
        ("kind", "", _) => Some((Code::Type, KIND_NOT_A_STRING)),
        ("summary" | "detail", "", Code::MaxLength) => text(OVER_CAP),
        ("summary" | "detail" | "question" | "blocking_dep", "", Code::Required) => None,
        ("summary" | "detail" | "question" | "blocking_dep", "", _) => text(NON_EMPTY_STRING),
        ("files_changed" | "proposed_split", item, _) if item.starts_with('[') => {
            text(NON_EMPTY_STRING)
        }
        ("proposed_split", "", Code::Required) => text(REQUIRED_FOR_SCOPE_EXCEEDED),
        ("proposed_split", "", Code::MinItems) => text(AT_LEAST_ONE_ITEM),
        // §4.6: null counts as an empty list.
        ("proposed_split", "", _) if map.get("proposed_split").is_some_and(Value::is_null) => {
            Some((Code::MinItems, AT_LEAST_ONE_ITEM))
        }
        ("files_changed" | "proposed_split", "", _) => text(LIST_OF_STRINGS),
        ("verification", "", _) => text(OBJECT_OR_NULL),
        // §3.5: a missing command or exit code reads like a wrong one.
        ("verification", ".command", _) => text(NON_EMPTY_STRING),
        // A whole number beyond 64 bits is perago's own limit, worded as `perago validate`
        // words it; a float is never an exit code (§3.5).
        ("verification", ".exit_code", Code::IntegerRange)
            if map
                .get("verification")
                .and_then(|v| v.get("exit_code"))
                .is_some_and(|c| c.is_u64() || c.is_i64()) =>
        {
            None
        }
        ("verification", ".exit_code", _) => text(INTEGER),
        ("receipt_ref", "", _) => text(NON_EMPTY_STRING_OR_NULL),
        _ => None,
    }
}

/// The steps of §3 and §4 in order. The two shapes share one order because their fields are
/// disjoint: a completion has no `kind` step, a refusal no `verification` or `receipt_ref`
/// (they are unknown fields there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Document,
    Contract,
    Kind,
    UnknownField,
    Text,
    Field,
    Verification,
    ReceiptRef,
}

fn step(v: &Violation) -> Step {
    match top_key(&v.path) {
        None if v.path == "$" => Step::Document,
        // Declared keys are identifiers, so a bracketed top-level key is an unknown one.
        None => Step::UnknownField,
        Some((_, "")) if v.code == Code::UnknownField => Step::UnknownField,
        Some((top, _)) => match top {
            "contract" => Step::Contract,
            "kind" => Step::Kind,
            "summary" | "detail" => Step::Text,
            "files_changed" | "proposed_split" | "question" | "blocking_dep" => Step::Field,
            "verification" => Step::Verification,
            "receipt_ref" => Step::ReceiptRef,
            _ => Step::UnknownField,
        },
    }
}

/// Sorts into check order and keeps the first violation of each check. The sort is stable,
/// so unknown fields stay in document order and the schema's check order holds within a step; a
/// blank text is reported before (and instead of) its length.
fn in_check_order(mut found: Vec<Violation>) -> Vec<Violation> {
    found.sort_by_key(|v| (step(v), v.code == Code::MaxLength));
    let mut seen = HashSet::with_capacity(found.len());
    found.retain(|v| seen.insert(check_of(&v.path).to_owned()));
    found
}

/// The check a path belongs to: a list's items are one check, which stops at the first bad
/// item (§3.4, §4.6); everything else is checked once per path.
fn check_of(path: &str) -> &str {
    match top_key(path) {
        Some((top @ ("files_changed" | "proposed_split"), _)) => &path[..2 + top.len()],
        _ => path,
    }
}

/// Splits `$.key…` into the top-level key and the rest of the path; `None` for `$` and for
/// bracketed top-level keys.
fn top_key(path: &str) -> Option<(&str, &str)> {
    let tail = path.strip_prefix("$.")?;
    let end = tail.find(['.', '[']).unwrap_or(tail.len());
    Some(tail.split_at(end))
}

/// Deserialises through the full contract, so a stored payload is re-validated on the way
/// back in; the error lists every violation.
impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        validate(&value).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TEXT_CAP_CHARS, whitespace};

    #[test]
    fn top_keys() {
        assert_eq!(top_key("$"), None);
        assert_eq!(top_key("$['odd key']"), None);
        assert_eq!(top_key("$.summary"), Some(("summary", "")));
        assert_eq!(
            top_key("$.files_changed[3]"),
            Some(("files_changed", "[3]"))
        );
        assert_eq!(
            top_key("$.verification.exit_code"),
            Some(("verification", ".exit_code"))
        );
    }

    #[test]
    fn list_items_share_one_check() {
        assert_eq!(check_of("$.files_changed[2]"), "$.files_changed");
        assert_eq!(check_of("$.proposed_split"), "$.proposed_split");
        assert_eq!(check_of("$.summary"), "$.summary");
        assert_eq!(check_of("$.files_changedX"), "$.files_changedX");
    }

    /// The schema's `$defs`, embedded.
    fn defs() -> Value {
        let root: Value = serde_json::from_str(crate::SCHEMA).expect("JSON");
        root["$defs"].clone()
    }

    #[test]
    fn the_schema_states_the_same_blankness_and_cap() {
        let defs = defs();
        let pattern = defs["NonBlankText"]["pattern"].as_str().expect("a pattern");
        assert_eq!(defs["CappedText"]["pattern"], pattern);
        let pattern = check::Pattern::new(pattern).expect("compiles");
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let text = c.to_string();
            assert_eq!(
                pattern.is_match(&text),
                !whitespace::is_blank(&text),
                "U+{:04X}",
                c as u32
            );
        }
        assert_eq!(defs["CappedText"]["maxLength"], TEXT_CAP_CHARS);
        assert_eq!(
            OVER_CAP,
            format!("exceeds the {TEXT_CAP_CHARS}-character cap")
        );
    }

    #[test]
    fn the_unknown_kind_message_lists_the_declared_order() {
        let names: Vec<&str> = RefusalKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            UNKNOWN_KIND,
            format!("unknown refusal kind (allowed: {})", names.join(", "))
        );
    }
}
