//! The typed payloads, built from the generated types once the semantic layer has accepted a
//! document, and their canonical JSON: the form recorded in the ledger (`docs/src/reference/completion-contract.md` §3, §4), which always
//! carries the contract tag and re-validates to an equal value.

use super::CONTRACT_VERSION;
use crate::contracts::worker_completion_v1 as generated;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// A valid `worker-completion/v1` payload: one of the two terminal shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// The worker finished.
    Completion(Completion),
    /// The worker cannot proceed, and says why.
    Refusal(Refusal),
}

/// A successful terminal payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Non-blank, at most 2000 code points, stored as given (not trimmed).
    pub summary: String,
    /// Non-blank paths; absent and `null` are both empty.
    pub files_changed: Vec<String>,
    /// A step the worker ran before completing.
    pub verification: Option<Verification>,
    /// A lineage or receipt reference, free format.
    pub receipt_ref: Option<String>,
}

/// A verification step: the command and its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Verification {
    /// Non-blank.
    pub command: String,
    /// Any integer, negative ones included.
    pub exit_code: i64,
}

/// The refusal kinds: a closed taxonomy with no catch-all, so every refusal routes
/// deterministically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// Needs a human decision before continuing (`question`).
    AwaitingOperator,
    /// Too large; proposes a split (`proposed_split`).
    ScopeExceeded,
    /// The task is too vague to act on (`question`).
    Underspecified,
    /// Blocked on another task or resource (`blocking_dep`).
    BlockedOnDependency,
}

impl RefusalKind {
    /// Every kind, in the contract's declared order (the order of the unknown-kind message).
    pub const ALL: [RefusalKind; 4] = [
        RefusalKind::AwaitingOperator,
        RefusalKind::ScopeExceeded,
        RefusalKind::Underspecified,
        RefusalKind::BlockedOnDependency,
    ];

    /// The `kind` string.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::AwaitingOperator => "awaiting_operator",
            RefusalKind::ScopeExceeded => "scope_exceeded",
            RefusalKind::Underspecified => "underspecified",
            RefusalKind::BlockedOnDependency => "blocked_on_dependency",
        }
    }

    /// The kind a `kind` string names: exact and case-sensitive.
    pub fn from_name(name: &str) -> Option<RefusalKind> {
        RefusalKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The one payload field this kind carries besides `detail`.
    pub fn field(self) -> &'static str {
        match self {
            RefusalKind::AwaitingOperator | RefusalKind::Underspecified => "question",
            RefusalKind::ScopeExceeded => "proposed_split",
            RefusalKind::BlockedOnDependency => "blocking_dep",
        }
    }
}

impl std::fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed refusal: each kind carries `detail` and exactly its own field, so a refusal with
/// another kind's field cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Needs a human decision before continuing.
    AwaitingOperator {
        /// Why; non-blank, at most 2000 code points.
        detail: String,
        /// What the operator must decide; non-blank.
        question: String,
    },
    /// Too large; proposes a split.
    ScopeExceeded {
        /// Why; non-blank, at most 2000 code points.
        detail: String,
        /// One follow-up per item, in order; never empty, items non-blank.
        proposed_split: Vec<String>,
    },
    /// The task is too vague to act on.
    Underspecified {
        /// Why; non-blank, at most 2000 code points.
        detail: String,
        /// What needs clarifying; non-blank.
        question: String,
    },
    /// Blocked on another task or resource.
    BlockedOnDependency {
        /// Why; non-blank, at most 2000 code points.
        detail: String,
        /// What blocks it; non-blank.
        blocking_dep: String,
    },
}

impl Refusal {
    /// The kind.
    pub fn kind(&self) -> RefusalKind {
        match self {
            Refusal::AwaitingOperator { .. } => RefusalKind::AwaitingOperator,
            Refusal::ScopeExceeded { .. } => RefusalKind::ScopeExceeded,
            Refusal::Underspecified { .. } => RefusalKind::Underspecified,
            Refusal::BlockedOnDependency { .. } => RefusalKind::BlockedOnDependency,
        }
    }

    /// The detail, which the completion API stores as the task's `result_summary`.
    pub fn detail(&self) -> &str {
        match self {
            Refusal::AwaitingOperator { detail, .. }
            | Refusal::ScopeExceeded { detail, .. }
            | Refusal::Underspecified { detail, .. }
            | Refusal::BlockedOnDependency { detail, .. } => detail,
        }
    }

    /// The canonical JSON: `contract`, `kind`, `detail`, then the kind's field.
    pub fn to_canonical(&self) -> Value {
        let mut map = Map::new();
        map.insert("contract".into(), CONTRACT_VERSION.into());
        map.insert("kind".into(), self.kind().as_str().into());
        map.insert("detail".into(), self.detail().into());
        let field = match self {
            Refusal::AwaitingOperator { question, .. }
            | Refusal::Underspecified { question, .. } => Value::from(question.as_str()),
            Refusal::ScopeExceeded { proposed_split, .. } => Value::from(proposed_split.clone()),
            Refusal::BlockedOnDependency { blocking_dep, .. } => Value::from(blocking_dep.as_str()),
        };
        map.insert(self.kind().field().into(), field);
        Value::Object(map)
    }
}

impl Completion {
    /// The canonical JSON: `contract`, `summary`, `files_changed` (always), then
    /// `verification` and `receipt_ref` only when set.
    pub fn to_canonical(&self) -> Value {
        let mut map = Map::new();
        map.insert("contract".into(), CONTRACT_VERSION.into());
        map.insert("summary".into(), self.summary.as_str().into());
        map.insert("files_changed".into(), self.files_changed.clone().into());
        if let Some(v) = &self.verification {
            let mut verification = Map::new();
            verification.insert("command".into(), v.command.as_str().into());
            verification.insert("exit_code".into(), v.exit_code.into());
            map.insert("verification".into(), Value::Object(verification));
        }
        if let Some(receipt_ref) = &self.receipt_ref {
            map.insert("receipt_ref".into(), receipt_ref.as_str().into());
        }
        Value::Object(map)
    }
}

impl Payload {
    /// The canonical JSON of either shape.
    pub fn to_canonical(&self) -> Value {
        match self {
            Payload::Completion(c) => c.to_canonical(),
            Payload::Refusal(r) => r.to_canonical(),
        }
    }

    /// Converts a value the semantic layer has accepted; the generated type alone is looser
    /// (it takes `0.0` as an exit code), so this is not public.
    pub(crate) fn from_generated(value: generated::WorkerCompletionV1) -> Payload {
        use generated::WorkerCompletionV1 as G;
        match value {
            G::Completion(c) => Payload::Completion(Completion {
                summary: c.summary,
                files_changed: c.files_changed.unwrap_or_default(),
                verification: c.verification.map(|v| Verification {
                    command: v.command,
                    exit_code: v.exit_code,
                }),
                receipt_ref: c.receipt_ref,
            }),
            G::AwaitingOperator(r) => Payload::Refusal(Refusal::AwaitingOperator {
                detail: r.detail,
                question: r.question,
            }),
            G::ScopeExceeded(r) => Payload::Refusal(Refusal::ScopeExceeded {
                detail: r.detail,
                proposed_split: r.proposed_split,
            }),
            G::Underspecified(r) => Payload::Refusal(Refusal::Underspecified {
                detail: r.detail,
                question: r.question,
            }),
            G::BlockedOnDependency(r) => Payload::Refusal(Refusal::BlockedOnDependency {
                detail: r.detail,
                blocking_dep: r.blocking_dep,
            }),
        }
    }
}

/// Serialises to the canonical JSON.
impl Serialize for Completion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_canonical().serialize(s)
    }
}

/// Serialises to the canonical JSON.
impl Serialize for Refusal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_canonical().serialize(s)
    }
}

/// Serialises to the canonical JSON.
impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_canonical().serialize(s)
    }
}
