//! The agent task: the TaskDef of a task type served by `perago gateway`, generated like any
//! other task's (`cargo xtask taskdefs` writes `taskdefs/agent_task.json`).
//!
//! Its input is `{params}` with [`AgentTaskParams`]; its completed output is `{result}` with
//! `worker-completion-result.v1` (the canonical completion; the canonical refusal, routable by
//! `kind` in a `SWITCH`, with the follow-ups of a `scope_exceeded` split for a dynamic fork;
//! or legacy prose): the `outputSchema` says exactly what the gateway reports. A gateway serves
//! any task type; register this TaskDef under the name the gateway is given (`--task-type`),
//! changing only `name` and the schemas' names.

use crate::contracts::agent_task_params::AgentTaskParams;
use perago::task::{Registry, TaskError};
use perago_completion::contracts::worker_completion_result_v1::WorkerCompletionResultV1;
use serde_json::Value;

/// A task worked by an agent through `perago gateway`: the agent claims it, works, and submits
/// a worker-completion/v1 completion or typed refusal. Completions, refusals (route on
/// `result.kind`; a scope_exceeded refusal carries `result.followups`) and legacy prose are
/// COMPLETED; a contract violation or an empty submission is FAILED (`contract_violation: <path>:
/// <message>`), as is a claim whose agent stopped heartbeating.
#[perago::task(
    name = "agent_task",
    result = WorkerCompletionResultV1,
    retry_count = 3,
    retry_delay_seconds = 10,
    response_timeout_seconds = 600,
    owner_email = "agents@example.com"
)]
pub fn agent_task(params: AgentTaskParams) -> Result<Value, TaskError> {
    Err(TaskError::terminal(format!(
        "agent task {:?} is worked by an agent through `perago gateway`, not by a Rust worker",
        params.title
    )))
}

/// The gateway's task descriptors, for the TaskDef generator.
pub fn registry() -> Registry {
    perago::tasks![agent_task]
}
