//! What ends a claim, decided once: the task's new status, what the ledger records, and what
//! Conductor is told (`docs/src/reference/task-contract.md` §5: a business-recoverable outcome is
//! a successful result; `docs/src/reference/completion-contract.md` §7).
//!
//! | submission | task becomes | terminal_reason | Conductor |
//! |---|---|---|---|
//! | valid completion | `done`, result_summary := `summary` | — | `COMPLETED`, `output.result` = the canonical completion |
//! | valid refusal | `refused`, result_summary := `detail` | `refused:<kind>` | `COMPLETED`, `output.result` = the canonical refusal (routable by `kind`), with `followups` for `scope_exceeded` |
//! | legacy prose | `done`, the text unchanged | — | `COMPLETED`, `output.result` = `{"kind": "legacy_prose", "text": text}` |
//! | empty text | `failed` (`completion missing summary`) | — | `FAILED`, `empty_result_summary: completion missing summary` |
//! | violation | `failed` | `contract_violation` | `FAILED`, `contract_violation: <path>: <message>` |
//! | lease lapsed | `failed` | `lease_expired` | `FAILED`, `lease_expired: …` (Conductor retries it per its TaskDef) |
//!
//! Every reason is cut to `PERAGO_FAILURE_REASON_MAX_LENGTH` by the runtime's one rule
//! ([`perago::runtime::truncate_reason`]). Every `output.result` is read back through the
//! generated reader of `worker-completion-result.v1.schema.json` before anything is recorded,
//! so Conductor is never sent a result the agent task's `outputSchema` refuses.

use perago_completion::contracts::worker_completion_result_v1::WorkerCompletionResultV1;
use perago_completion::{ContractRecord, FollowUpSpec, Outcome, derive_followups};
use perago_conductor::tasks::TaskResultStatus;
use perago_schema::{Contract, Violation};
use serde_json::{Map, Value, json};
use std::fmt;

/// The status of a task in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Held by an agent.
    Claimed,
    /// Completed (a completion or legacy prose).
    Done,
    /// Refused with a typed refusal.
    Refused,
    /// Failed: a violation, empty text, or a lapsed lease.
    Failed,
}

impl TaskStatus {
    /// The ledger's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Claimed => "claimed",
            TaskStatus::Done => "done",
            TaskStatus::Refused => "refused",
            TaskStatus::Failed => "failed",
        }
    }

    /// Reads the ledger's spelling.
    pub fn from_name(name: &str) -> Option<TaskStatus> {
        [
            TaskStatus::Claimed,
            TaskStatus::Done,
            TaskStatus::Refused,
            TaskStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Whether the claim has ended.
    pub fn is_terminal(self) -> bool {
        self != TaskStatus::Claimed
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `terminal_reason` of a contract violation.
pub const CONTRACT_VIOLATION: &str = "contract_violation";
/// The `terminal_reason` of a lapsed lease.
pub const LEASE_EXPIRED: &str = "lease_expired";
/// What an empty submission fails with (§7).
pub const MISSING_SUMMARY: &str = "completion missing summary";
/// The API error of an empty submission (§7).
pub const EMPTY_RESULT_SUMMARY: &str = "empty_result_summary";

/// How a claim ends: everything the ledger records and Conductor is told.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The task's new status.
    pub status: TaskStatus,
    /// `completion`, `refusal`, `legacy_prose`, `empty`, `violation` or `lease_expired`.
    pub outcome: &'static str,
    /// The task's result summary: the summary, the refusal's detail or the prose.
    pub result_summary: Option<String>,
    /// `refused:<kind>`, `contract_violation` or `lease_expired`.
    pub terminal_reason: Option<String>,
    /// Why a failed task failed, in words (`completion missing summary`, the primary
    /// violation).
    pub failure: Option<String>,
    /// The contract's record, for a validated payload (never for prose or empty text).
    pub record: Option<ContractRecord>,
    /// Every violation, for a violation.
    pub violations: Vec<Violation>,
    /// The follow-ups of a `scope_exceeded` refusal.
    pub followups: Vec<FollowUpSpec>,
    /// What Conductor is told.
    pub conductor: ConductorResult,
}

/// The status, output and reason of the Conductor update that ends the task.
#[derive(Debug, Clone, PartialEq)]
pub struct ConductorResult {
    /// `COMPLETED` or `FAILED`.
    pub status: TaskResultStatus,
    /// `{result}` when completed, `{}` when failed.
    pub output: Map<String, Value>,
    /// Why it failed, cut to the reason limit.
    pub reason: Option<String>,
}

/// The result of a submission that breaks a rule of the gateway's own, never the agent's:
/// an output its schema refuses (a bug, reported as such).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the gateway built a result its schema refuses ({0}); nothing was recorded")]
pub struct InvalidResult(pub String);

/// Decides how the submission `outcome` ends task `task_id`.
pub fn decide(
    task_id: &str,
    outcome: Outcome,
    reason_max_length: usize,
) -> Result<Decision, InvalidResult> {
    let record = ContractRecord::of(&outcome);
    let decision = match outcome {
        Outcome::Completion(completion) => Decision {
            status: TaskStatus::Done,
            outcome: "completion",
            result_summary: Some(completion.summary.clone()),
            terminal_reason: None,
            failure: None,
            record,
            violations: Vec::new(),
            followups: Vec::new(),
            conductor: completed(completion.to_canonical())?,
        },
        Outcome::Refusal(refusal) => {
            let followups = derive_followups(task_id, &refusal);
            let mut result = refusal.to_canonical();
            if !followups.is_empty() {
                let specs =
                    serde_json::to_value(&followups).map_err(|e| InvalidResult(e.to_string()))?;
                if let Value::Object(map) = &mut result {
                    map.insert("followups".into(), specs);
                }
            }
            Decision {
                status: TaskStatus::Refused,
                outcome: "refusal",
                result_summary: Some(refusal.detail().to_owned()),
                terminal_reason: Some(format!("refused:{}", refusal.kind())),
                failure: None,
                record,
                violations: Vec::new(),
                followups,
                conductor: completed(result)?,
            }
        }
        Outcome::LegacyProse(text) => Decision {
            status: TaskStatus::Done,
            outcome: "legacy_prose",
            conductor: completed(json!({"kind": "legacy_prose", "text": text}))?,
            result_summary: Some(text),
            terminal_reason: None,
            failure: None,
            record,
            violations: Vec::new(),
            followups: Vec::new(),
        },
        Outcome::Empty => Decision {
            status: TaskStatus::Failed,
            outcome: "empty",
            result_summary: None,
            terminal_reason: None,
            failure: Some(MISSING_SUMMARY.to_owned()),
            record,
            violations: Vec::new(),
            followups: Vec::new(),
            conductor: failed(
                &format!("{EMPTY_RESULT_SUMMARY}: {MISSING_SUMMARY}"),
                reason_max_length,
            ),
        },
        Outcome::Violation(violations) => {
            let violations = violations.into_vec();
            let primary = violations
                .first()
                .map(|v| format!("{}: {}", v.path, v.message))
                .unwrap_or_else(|| "$: does not satisfy worker-completion/v1".to_owned());
            Decision {
                status: TaskStatus::Failed,
                outcome: "violation",
                result_summary: None,
                terminal_reason: Some(CONTRACT_VIOLATION.to_owned()),
                conductor: failed(
                    &format!("{CONTRACT_VIOLATION}: {primary}"),
                    reason_max_length,
                ),
                failure: Some(primary),
                record,
                violations,
                followups: Vec::new(),
            }
        }
    };
    Ok(decision)
}

/// How a claim whose agent stopped heartbeating ends.
pub fn lease_expired(agent_id: &str, lease_ms: u64, reason_max_length: usize) -> Decision {
    let why = format!(
        "agent {agent_id:?} sent no heartbeat within its lease of {}; the slot is free and \
         Conductor may retry the task",
        humantime::format_duration(std::time::Duration::from_millis(lease_ms))
    );
    Decision {
        status: TaskStatus::Failed,
        outcome: LEASE_EXPIRED,
        result_summary: None,
        terminal_reason: Some(LEASE_EXPIRED.to_owned()),
        conductor: failed(&format!("{LEASE_EXPIRED}: {why}"), reason_max_length),
        failure: Some(why),
        record: None,
        violations: Vec::new(),
        followups: Vec::new(),
    }
}

/// `COMPLETED` with `{result}`, once the result reads as the agent task's result schema.
fn completed(result: Value) -> Result<ConductorResult, InvalidResult> {
    if let Err(violations) = WorkerCompletionResultV1::from_value(&result) {
        return Err(InvalidResult(
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    let mut output = Map::new();
    output.insert("result".into(), result);
    Ok(ConductorResult {
        status: TaskResultStatus::Completed,
        output,
        reason: None,
    })
}

/// `FAILED` with `reason` cut by the runtime's rule.
fn failed(reason: &str, reason_max_length: usize) -> ConductorResult {
    ConductorResult {
        status: TaskResultStatus::Failed,
        output: Map::new(),
        reason: Some(perago::runtime::truncate_reason(reason, reason_max_length)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perago_completion::{classify_submission, classify_text};

    fn decide_text(text: &str) -> Decision {
        decide("T-1", classify_text(text), 500).unwrap()
    }

    #[test]
    fn each_outcome_ends_the_task_as_the_table_says() {
        let done = decide_text(r#"{"summary": "Added tests", "files_changed": ["a.rs"]}"#);
        assert_eq!(
            (done.status, done.outcome),
            (TaskStatus::Done, "completion")
        );
        assert_eq!(done.result_summary.as_deref(), Some("Added tests"));
        assert_eq!(done.conductor.status, TaskResultStatus::Completed);
        assert_eq!(
            done.conductor.output["result"],
            json!({"contract": "worker-completion/v1", "summary": "Added tests", "files_changed": ["a.rs"]})
        );

        let refused = decide_text(
            r#"{"kind": "scope_exceeded", "detail": "Too big.", "proposed_split": ["part one", "part two"]}"#,
        );
        assert_eq!(refused.status, TaskStatus::Refused);
        assert_eq!(
            refused.terminal_reason.as_deref(),
            Some("refused:scope_exceeded")
        );
        let ids: Vec<&str> = refused.followups.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["fu-90df2783d9e0", "fu-2970de185e27"]);
        let result = &refused.conductor.output["result"];
        assert_eq!(result["kind"], "scope_exceeded");
        assert_eq!(result["followups"][1]["id"], "fu-2970de185e27");
        assert_eq!(result["followups"][0]["title"], "part one");

        let prose = decide_text("Fixed the flaky login test.");
        assert_eq!(
            (prose.status, prose.outcome),
            (TaskStatus::Done, "legacy_prose")
        );
        assert!(prose.record.is_none());
        assert_eq!(
            prose.conductor.output["result"],
            json!({"kind": "legacy_prose", "text": "Fixed the flaky login test."})
        );

        let empty = decide("T-1", classify_submission(" \n", None), 500).unwrap();
        assert_eq!((empty.status, empty.outcome), (TaskStatus::Failed, "empty"));
        assert_eq!(
            empty.conductor.reason.as_deref(),
            Some("empty_result_summary: completion missing summary")
        );
        assert!(empty.conductor.output.is_empty());

        let violation = decide_text(r#"{"summary": "   ", "notes": 1}"#);
        assert_eq!(
            violation.terminal_reason.as_deref(),
            Some("contract_violation")
        );
        assert_eq!(
            violation.conductor.reason.as_deref(),
            Some("contract_violation: $.notes: unknown field")
        );
        assert_eq!(violation.violations.len(), 2);
        assert_eq!(
            violation.record.unwrap().contract_error_path.as_deref(),
            Some("$.notes")
        );
    }

    #[test]
    fn reasons_are_cut_by_the_runtime_rule() {
        let long = format!(r#"{{"{}": 1, "summary": "x"}}"#, "k".repeat(2000));
        let d = decide("T-1", classify_text(&long), 40).unwrap();
        let reason = d.conductor.reason.unwrap();
        assert_eq!(reason.encode_utf16().count(), 40);
        assert!(reason.starts_with("contract_violation: $.kkk"), "{reason}");
        let lapsed = lease_expired("a-1", 1500, 500);
        assert_eq!(lapsed.terminal_reason.as_deref(), Some("lease_expired"));
        assert!(lapsed.conductor.reason.unwrap().starts_with(
            "lease_expired: agent \"a-1\" sent no heartbeat within its lease of 1s 500ms"
        ));
    }
}
