//! `worker-completion/v1`: the two terminal shapes a worker may submit at a completion API, a
//! completion or a typed refusal, enforced strictly.
//!
//! - [`classify_text`], [`classify_payload`], [`classify_submission`]: decide what a
//!   submission is — an [`Outcome`]: a [`Completion`], a [`Refusal`], legacy prose, empty text
//!   or a violation. Text is a payload when, stripped of Python's whitespace, it opens with `{`;
//!   anything else is legacy prose, accepted unchanged.
//! - [`validate`], [`validate_text`]: every rule of the contract, every violation in check
//!   order with a JSONPath; the first is the primary `schema_error_path`. Built on the
//!   generated validator of [`SCHEMA`] ([`contracts`]), plus what JSON Schema
//!   cannot say: the contract's messages and check order, `0.0` is not an exit code, `null` is
//!   an empty split, a repeated key is a violation.
//! - [`ContractRecord`] and [`AuditEvent`]: what the ledger and the audit trail record.
//! - [`derive_followups`]: the follow-up tasks of a `scope_exceeded` refusal, with
//!   content-addressed ids.
//!
//! ```
//! use perago_completion::{classify_text, Outcome, RefusalKind};
//!
//! let outcome = classify_text(r#"{"kind": "underspecified", "detail": "Which API?", "question": "v1 or v2?"}"#);
//! assert!(matches!(&outcome, Outcome::Refusal(r) if r.kind() == RefusalKind::Underspecified));
//!
//! let outcome = classify_text(r#"{"summary": "   "}"#);
//! assert_eq!(outcome.schema_error_path(), Some("$.summary"));
//!
//! assert!(matches!(classify_text("Fixed the flaky test."), Outcome::LegacyProse(_)));
//! ```

mod classify;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod contracts;
mod followup;
mod payload;
mod record;
mod validate;
pub mod whitespace;

pub use classify::{
    Outcome, classify_payload, classify_submission, classify_text, is_payload_text,
};
pub use followup::{
    FOLLOWUP_ORIGIN, FollowUpSpec, TITLE_MAX_CHARS, derive_followups, followup_id, followup_title,
};
pub use payload::{Completion, Payload, Refusal, RefusalKind, Verification};
pub use record::{AuditEvent, ContractRecord, Validation};
pub use validate::{validate, validate_slice, validate_text};

/// `worker-completion.v1.schema.json` as written in the repository's `schemas/completion/`:
/// the contract's structure as JSON Schema, the source of [`contracts`] (which embeds it).
pub const SCHEMA: &str = contracts::WORKER_COMPLETION_V1_JSON;

/// The schema's file name.
pub const SCHEMA_FILE: &str = "worker-completion.v1.schema.json";

/// `worker-completion-result.v1.schema.json`: the `result` a Conductor task worked through the
/// contract reports as COMPLETED (the canonical completion or refusal, follow-ups, legacy
/// prose); built on [`SCHEMA`]'s definitions, the source of
/// [`contracts::worker_completion_result_v1`].
pub const RESULT_SCHEMA: &str = contracts::WORKER_COMPLETION_RESULT_V1_JSON;

/// The result schema's file name.
pub const RESULT_SCHEMA_FILE: &str = "worker-completion-result.v1.schema.json";

/// The contract tag: the only accepted `contract` value, and what every record carries.
pub const CONTRACT_VERSION: &str = "worker-completion/v1";

/// The cap on `summary` and `detail`, in code points of the unstripped text.
pub const TEXT_CAP_CHARS: usize = 2000;

/// The contract's violation messages, for callers that match on them.
pub mod messages {
    pub use super::validate::{
        AT_LEAST_ONE_ITEM, INTEGER, KIND_NOT_A_STRING, LIST_OF_STRINGS, NON_EMPTY_STRING,
        NON_EMPTY_STRING_OR_NULL, NOT_AN_OBJECT, OBJECT_OR_NULL, OVER_CAP,
        REQUIRED_FOR_SCOPE_EXCEEDED, UNKNOWN_KIND, UNSUPPORTED_CONTRACT,
    };
}
