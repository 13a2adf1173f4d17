//! What the completion API records for a validated payload (`docs/src/reference/completion-contract.md` §7): the ledger fields of the
//! task and the `task.contract_validation` audit event. Legacy prose and empty text are not
//! validated payloads and record nothing.

use super::CONTRACT_VERSION;
use super::classify::Outcome;
use super::payload::{Payload, RefusalKind};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The validation outcome as the ledger spells it: `valid`, `violation` or `refused:<kind>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Validation {
    /// A valid completion.
    Valid,
    /// A payload that broke the contract.
    Violation,
    /// A valid refusal of this kind.
    Refused(RefusalKind),
}

impl Validation {
    /// Reads the ledger spelling back.
    pub fn from_name(name: &str) -> Option<Validation> {
        match name {
            "valid" => Some(Validation::Valid),
            "violation" => Some(Validation::Violation),
            _ => name
                .strip_prefix("refused:")
                .and_then(RefusalKind::from_name)
                .map(Validation::Refused),
        }
    }
}

impl fmt::Display for Validation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Validation::Valid => f.write_str("valid"),
            Validation::Violation => f.write_str("violation"),
            Validation::Refused(kind) => write!(f, "refused:{kind}"),
        }
    }
}

impl Serialize for Validation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Validation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Validation::from_name(&name).ok_or_else(|| {
            D::Error::custom(format_args!(
                "{name:?} is not `valid`, `violation` or `refused:<kind>`"
            ))
        })
    }
}

/// The ledger fields of a task whose payload was validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractRecord {
    /// `worker-completion/v1`.
    pub contract_version: String,
    /// The outcome.
    pub contract_validation: Validation,
    /// The primary violation's path, for a violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_error_path: Option<String>,
    /// The canonical payload, for a valid one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<Payload>,
}

/// The details of the `task.contract_validation` audit event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// `worker-completion/v1`.
    pub contract_version: String,
    /// The outcome, spelled as in the ledger.
    pub outcome: Validation,
    /// The primary violation's path, for a violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_error_path: Option<String>,
}

impl AuditEvent {
    /// The audit trail's event type.
    pub const EVENT_TYPE: &'static str = "task.contract_validation";
}

impl ContractRecord {
    /// The record of an outcome; `None` for legacy prose and empty text, which are not
    /// validated.
    pub fn of(outcome: &Outcome) -> Option<ContractRecord> {
        let (validation, canonical) = match outcome {
            Outcome::Completion(c) => (Validation::Valid, Some(Payload::Completion(c.clone()))),
            Outcome::Refusal(r) => (
                Validation::Refused(r.kind()),
                Some(Payload::Refusal(r.clone())),
            ),
            Outcome::Violation(_) => (Validation::Violation, None),
            Outcome::LegacyProse(_) | Outcome::Empty => return None,
        };
        Some(ContractRecord {
            contract_version: CONTRACT_VERSION.to_owned(),
            contract_validation: validation,
            contract_error_path: outcome.schema_error_path().map(str::to_owned),
            canonical,
        })
    }

    /// The audit event that goes with this record.
    pub fn audit_event(&self) -> AuditEvent {
        AuditEvent {
            contract_version: self.contract_version.clone(),
            outcome: self.contract_validation,
            schema_error_path: self.contract_error_path.clone(),
        }
    }
}
