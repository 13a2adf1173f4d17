//! Classification of a completion submission (`docs/src/reference/completion-contract.md` §5, §7): a completion, a refusal, legacy prose,
//! empty text, or a violation.

use super::payload::{Completion, Payload, Refusal};
use super::validate::{validate, validate_text};
use super::whitespace::{is_blank, strip};
use perago_schema::Violations;
use serde_json::Value;

/// What a worker submitted, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A valid completion payload.
    Completion(Completion),
    /// A valid refusal payload.
    Refusal(Refusal),
    /// Plain prose in `result_summary`, accepted unchanged and never validated.
    LegacyProse(String),
    /// A blank `result_summary` and no payload: the API's `empty_result_summary`.
    Empty,
    /// A payload that breaks the contract: every violation, in check order.
    Violation(Violations),
}

impl Outcome {
    /// The snake_case name: `completion`, `refusal`, `legacy_prose`, `empty` or `violation`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Completion(_) => "completion",
            Outcome::Refusal(_) => "refusal",
            Outcome::LegacyProse(_) => "legacy_prose",
            Outcome::Empty => "empty",
            Outcome::Violation(_) => "violation",
        }
    }

    /// True when the completion API accepts the submission (status 200).
    pub fn is_accepted(&self) -> bool {
        matches!(
            self,
            Outcome::Completion(_) | Outcome::Refusal(_) | Outcome::LegacyProse(_)
        )
    }

    /// The violations, for a violation.
    pub fn violations(&self) -> Option<&Violations> {
        match self {
            Outcome::Violation(v) => Some(v),
            _ => None,
        }
    }

    /// The primary violation's path: the `schema_error_path` of the API's 422 answer.
    pub fn schema_error_path(&self) -> Option<&str> {
        self.violations()
            .and_then(Violations::primary)
            .map(|v| v.path.as_str())
    }

    /// The canonical JSON of a valid payload.
    pub fn canonical(&self) -> Option<Value> {
        match self {
            Outcome::Completion(c) => Some(c.to_canonical()),
            Outcome::Refusal(r) => Some(r.to_canonical()),
            _ => None,
        }
    }
}

impl From<Payload> for Outcome {
    fn from(payload: Payload) -> Self {
        match payload {
            Payload::Completion(c) => Outcome::Completion(c),
            Payload::Refusal(r) => Outcome::Refusal(r),
        }
    }
}

impl From<Result<Payload, Violations>> for Outcome {
    fn from(result: Result<Payload, Violations>) -> Self {
        result.map_or_else(Outcome::Violation, Outcome::from)
    }
}

/// §5's sniff: the text, stripped of Python's whitespace, opens as a JSON object. Nothing
/// else is looked at, so a truncated document is still a payload (and then a violation).
pub fn is_payload_text(text: &str) -> bool {
    strip(text).starts_with('{')
}

/// Classifies a `result_summary`: payload text is parsed as given (leading whitespace that
/// JSON does not allow is malformed), blank text is [`Outcome::Empty`], anything else is
/// legacy prose, kept unchanged.
pub fn classify_text(result_summary: &str) -> Outcome {
    if is_payload_text(result_summary) {
        validate_text(result_summary).into()
    } else if is_blank(result_summary) {
        Outcome::Empty
    } else {
        Outcome::LegacyProse(result_summary.to_owned())
    }
}

/// Classifies an explicit payload value: it is validated whatever its type.
pub fn classify_payload(payload: &Value) -> Outcome {
    validate(payload).into()
}

/// Classifies a submission to `POST /tasks/{id}/complete` (§7): a non-null `payload` is
/// validated and `result_summary` ignored; otherwise the text decides.
pub fn classify_submission(result_summary: &str, payload: Option<&Value>) -> Outcome {
    match payload {
        Some(payload) if !payload.is_null() => classify_payload(payload),
        _ => classify_text(result_summary),
    }
}
