//! The task runtime: one Conductor `inputData` in, one Conductor task result payload out.
//!
//! [`execute`] runs a task through the contract, in this order; the first failing step decides
//! the payload:
//!
//! | step | failure status |
//! |---|---|
//! | 1. the top-level key set: exactly `workspace` and `params` (workspace task) or `params` | `FAILED` |
//! | 2. `workspace` against `WorkspaceInput` (workspace tasks) | `FAILED` |
//! | 3. `params` against the task's closed params schema (defaults fill the typed value only) | `FAILED` |
//! | 4. materialise the task's prefix of `repository@ref` into a fresh directory (workspace tasks; see [`perago_workspace::checkout`]) | `FAILED` |
//! | 5. pre guardrails | `FAILED_WITH_TERMINAL_ERROR` |
//! | 6. the handler: `TaskError::Failed`, `TaskError::Unknown` (any `?` error), a panic | `FAILED` |
//! |    `TaskError::Terminal` | `FAILED_WITH_TERMINAL_ERROR` |
//! | 7. the result against the task's closed result schema | `FAILED` |
//! | 8. a read-only task left its workspace as it found it | `FAILED` |
//! | 9. post guardrails | `FAILED` |
//! | 10. read-write: publish the changes (budget, attempt fence, publish fence; see [`perago_workspace::publish`]) | `FAILED` |
//!
//! Otherwise the payload is `COMPLETED` with `output` = `{workspace, result}` or `{result}`; a
//! workspace's `ref` is the publication's merge commit, or the input `ref` when the task is
//! read-only or changed nothing. The attempt's directory is removed in every case.
//! A failure carries only `status` and `reasonForIncompletion`: a short diagnosis (the first
//! violation as `path: message`, or the error's message) cut to
//! [`RuntimeConfig::reason_max_length`]; the full detail ([`Failure`]) goes to the JSON Lines
//! log ([`crate::log`]).

mod input;

use crate::Contract;
use crate::contracts::workspace_input::WorkspaceInput;
use crate::task::{Guardrail, Handler, Output, Task, TaskError, TaskKind};
use crate::workspace::{GuardrailViolation, Workspace, check_guardrail};
use crate::{Violation, Violations};
use input::Input;
use perago_workspace::checkout::{self, Changes, Checkout, CheckoutError};
use perago_workspace::publish::{Publication, PublishError, Published, Publisher};
use perago_workspace::{Access, Store};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// The environment variable that sets [`RuntimeConfig::reason_max_length`].
pub const REASON_MAX_LENGTH_VAR: &str = "PERAGO_FAILURE_REASON_MAX_LENGTH";

/// The default limit of `reasonForIncompletion`: Conductor's own.
pub const DEFAULT_REASON_MAX_LENGTH: usize = 500;

/// The most violations a failure keeps (the log record lists them); the rest are counted.
pub const MAX_KEPT_VIOLATIONS: usize = 100;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Settings of the runtime read at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// The most UTF-16 code units of `reasonForIncompletion` (≥ 1; default 500).
    ///
    /// Conductor cuts the reason at 500 Java `char`s, which are UTF-16 code units, so the
    /// limit counts those: a character outside the Basic Multilingual Plane (an emoji) counts
    /// two. The cut is on a character boundary, so Conductor never splits one.
    pub reason_max_length: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            reason_max_length: DEFAULT_REASON_MAX_LENGTH,
        }
    }
}

/// A setting that cannot be used; the program should stop at start-up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{var} must be a positive integer (the most characters of reasonForIncompletion), got {value:?}"
)]
pub struct ConfigError {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub value: String,
}

impl RuntimeConfig {
    /// Reads [`REASON_MAX_LENGTH_VAR`] from the environment (unset: 500).
    pub fn from_env() -> Result<RuntimeConfig, ConfigError> {
        RuntimeConfig::from_lookup(|var| std::env::var(var).ok())
    }

    /// Reads the settings through `lookup` (unset variables give `None`).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<RuntimeConfig, ConfigError> {
        let mut config = RuntimeConfig::default();
        if let Some(value) = lookup(REASON_MAX_LENGTH_VAR) {
            match value.trim().parse::<usize>() {
                Ok(n) if n > 0 => config.reason_max_length = n,
                _ => {
                    return Err(ConfigError {
                        var: REASON_MAX_LENGTH_VAR,
                        value,
                    });
                }
            }
        }
        Ok(config)
    }
}

/// Where executions run: settings shared by every task of a process.
#[derive(Debug, Clone)]
pub struct ExecutionContext {
    /// The store workspace tasks read and publish to (lakeFS or the local store). A workspace
    /// task whose input is valid fails when there is none.
    pub store: Option<Arc<dyn Store>>,
    /// The directory under which each attempt gets its own fresh workspace directory.
    pub scratch_dir: PathBuf,
    /// How many objects a materialisation downloads at once.
    pub parallel_downloads: usize,
    /// The runtime settings.
    pub config: RuntimeConfig,
}

impl Default for ExecutionContext {
    fn default() -> Self {
        ExecutionContext {
            store: None,
            scratch_dir: std::env::temp_dir().join("perago-workspaces"),
            parallel_downloads: checkout::DEFAULT_PARALLEL_DOWNLOADS,
            config: RuntimeConfig::default(),
        }
    }
}

/// Who runs one execution: the Conductor task behind it and whether it still owns it.
pub struct Attempt<'a> {
    /// The Conductor task id (unique per attempt).
    pub task_id: &'a str,
    /// The workflow instance id.
    pub workflow_id: &'a str,
    /// Conductor's `retryCount`: 0 for the first attempt.
    pub attempt: u32,
    /// The worker running it.
    pub worker_id: &'a str,
    /// The attempt fence: `Ok` while this attempt still owns its task (its lease is live, it
    /// was not abandoned), else why not. Checked before a publication writes and before it
    /// merges.
    pub fence: &'a (dyn Fn() -> Result<(), String> + Sync),
}

impl fmt::Debug for Attempt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Attempt")
            .field("task_id", &self.task_id)
            .field("workflow_id", &self.workflow_id)
            .field("attempt", &self.attempt)
            .field("worker_id", &self.worker_id)
            .finish_non_exhaustive()
    }
}

/// The attempt fence of a run outside Conductor: always held.
fn always_held() -> Result<(), String> {
    Ok(())
}

impl Attempt<'static> {
    /// A run outside Conductor (`run`, tests): task `local`, attempt 0, its fence always held.
    pub const LOCAL: Attempt<'static> = Attempt {
        task_id: "local",
        workflow_id: "local",
        attempt: 0,
        worker_id: "local",
        fence: &always_held,
    };
}

/// The status of a Conductor task result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    /// `output` required, `reasonForIncompletion` forbidden.
    Completed,
    /// Conductor may retry: `reasonForIncompletion` required, `output` forbidden.
    Failed,
    /// Retrying the same input is pointless: `reasonForIncompletion` required, `output` forbidden.
    FailedWithTerminalError,
}

impl TaskStatus {
    /// Conductor's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Completed => "COMPLETED",
            TaskStatus::Failed => "FAILED",
            TaskStatus::FailedWithTerminalError => "FAILED_WITH_TERMINAL_ERROR",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a task error was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// `TaskError::Failed` (`TaskFailed`).
    Failed,
    /// `TaskError::Terminal` (`TaskTerminalError`).
    Terminal,
    /// `TaskError::Unknown`: any other error.
    Unknown,
}

/// Why an execution failed, in full: what the log records.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Failure {
    /// The top-level key set is wrong.
    Input {
        /// The reason, naming the allowed keys.
        message: String,
        /// Every unexpected or missing key.
        violations: Vec<Violation>,
        /// Violations beyond the first [`MAX_KEPT_VIOLATIONS`], counted, not kept.
        #[serde(default, skip_serializing_if = "is_zero")]
        violations_omitted: usize,
    },
    /// `workspace` violates `WorkspaceInput`.
    WorkspaceInput {
        /// Every violation, at `$.workspace…`.
        violations: Vec<Violation>,
        /// Violations beyond the first [`MAX_KEPT_VIOLATIONS`], counted, not kept.
        #[serde(default, skip_serializing_if = "is_zero")]
        violations_omitted: usize,
    },
    /// `params` violates the task's params schema.
    Params {
        /// Every violation, at `$.params…`.
        violations: Vec<Violation>,
        /// Violations beyond the first [`MAX_KEPT_VIOLATIONS`], counted, not kept.
        #[serde(default, skip_serializing_if = "is_zero")]
        violations_omitted: usize,
    },
    /// The workspace could not be materialised (no store, an unknown repository or commit,
    /// a store failure).
    Workspace {
        /// What is wrong.
        message: String,
    },
    /// A pre guardrail did not hold.
    PreGuardrail(GuardrailViolation),
    /// The handler returned an error.
    Task {
        /// How it was raised.
        kind: ErrorKind,
        /// The error and its sources, outermost first.
        chain: Vec<String>,
    },
    /// The handler panicked.
    Panic {
        /// The panic message.
        message: String,
        /// Where, `file:line:column`, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        location: Option<String>,
    },
    /// The result violates the task's result schema (or could not be serialised).
    Result {
        /// Every violation, at `$.result…`.
        violations: Vec<Violation>,
        /// Violations beyond the first [`MAX_KEPT_VIOLATIONS`], counted, not kept.
        #[serde(default, skip_serializing_if = "is_zero")]
        violations_omitted: usize,
    },
    /// A read-only task changed its workspace; nothing was published.
    ReadOnlyChanged {
        /// What it changed.
        changes: Changes,
    },
    /// A post guardrail did not hold.
    PostGuardrail(GuardrailViolation),
    /// The publication did not land: the budget, a fence, or the store.
    Publish {
        /// `budget`, `unsupported`, `attempt_fence`, `publish_fence` or `store`.
        refused_by: &'static str,
        /// Why.
        message: String,
    },
}

impl Failure {
    /// The Conductor status of this failure.
    pub fn status(&self) -> TaskStatus {
        match self {
            Failure::PreGuardrail(_)
            | Failure::Task {
                kind: ErrorKind::Terminal,
                ..
            } => TaskStatus::FailedWithTerminalError,
            _ => TaskStatus::Failed,
        }
    }

    /// The short diagnosis, before it is cut to the configured length.
    pub fn reason(&self) -> String {
        let first = |violations: &[Violation]| {
            violations
                .first()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "invalid".to_owned())
        };
        match self {
            Failure::Input { message, .. }
            | Failure::Workspace { message }
            | Failure::Publish { message, .. } => message.clone(),
            Failure::ReadOnlyChanged { changes } => format!(
                "read-only task changed its workspace: {}; nothing published",
                changes.summary()
            ),
            Failure::WorkspaceInput { violations, .. } | Failure::Params { violations, .. } => {
                first(violations)
            }
            Failure::PreGuardrail(g) => format!("pre guardrail {}", g.describe()),
            Failure::PostGuardrail(g) => format!("post guardrail {}", g.describe()),
            Failure::Task { kind, chain } => match chain.first().map(|m| m.trim()) {
                Some(m) if !m.is_empty() => m.to_owned(),
                _ => match kind {
                    ErrorKind::Terminal => "task failed with a terminal error".to_owned(),
                    _ => "task failed".to_owned(),
                },
            },
            Failure::Panic { message, .. } => format!("task handler panicked: {message}"),
            Failure::Result { violations, .. } => {
                format!("invalid result: {}", first(violations))
            }
        }
    }

    /// The violations recorded, if the failure has any.
    pub fn violations(&self) -> Violations {
        match self {
            Failure::Input { violations, .. }
            | Failure::WorkspaceInput { violations, .. }
            | Failure::Params { violations, .. }
            | Failure::Result { violations, .. } => Violations::new(violations.clone()),
            _ => Violations::default(),
        }
    }

    /// Keeps the first [`MAX_KEPT_VIOLATIONS`] violations and counts the rest, so that a
    /// hostile input (a million unknown keys) makes neither a huge record nor a huge log line.
    fn keep_first_violations(&mut self) {
        let (Failure::Input {
            violations,
            violations_omitted,
            ..
        }
        | Failure::WorkspaceInput {
            violations,
            violations_omitted,
        }
        | Failure::Params {
            violations,
            violations_omitted,
        }
        | Failure::Result {
            violations,
            violations_omitted,
        }) = self
        else {
            return;
        };
        if violations.len() > MAX_KEPT_VIOLATIONS {
            *violations_omitted += violations.len() - MAX_KEPT_VIOLATIONS;
            violations.truncate(MAX_KEPT_VIOLATIONS);
            violations.shrink_to_fit();
        }
    }

    fn task(error: TaskError) -> Failure {
        let kind = match &error {
            TaskError::Failed(_) => ErrorKind::Failed,
            TaskError::Terminal(_) => ErrorKind::Terminal,
            TaskError::Unknown(_) => ErrorKind::Unknown,
        };
        Failure::Task {
            kind,
            chain: error.chain(),
        }
    }
}

/// The bytes a workspace task moved between its store and its directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkspaceBytes {
    /// The objects materialised into the attempt's directory.
    pub downloaded: u64,
    /// The files a publication uploaded (counted when it merged).
    pub uploaded: u64,
}

/// What one execution gives: the Conductor payload and, on failure, the full detail.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeTaskResult {
    status: TaskStatus,
    output: Option<Value>,
    reason: Option<String>,
    failure: Option<Failure>,
    workspace_bytes: WorkspaceBytes,
}

impl RuntimeTaskResult {
    fn completed(output: Value) -> RuntimeTaskResult {
        RuntimeTaskResult {
            status: TaskStatus::Completed,
            output: Some(output),
            reason: None,
            failure: None,
            workspace_bytes: WorkspaceBytes::default(),
        }
    }

    fn failed(mut failure: Failure, config: &RuntimeConfig) -> RuntimeTaskResult {
        failure.keep_first_violations();
        RuntimeTaskResult {
            status: failure.status(),
            output: None,
            reason: Some(truncate_reason(&failure.reason(), config.reason_max_length)),
            failure: Some(failure),
            workspace_bytes: WorkspaceBytes::default(),
        }
    }

    /// The bytes the workspace stages moved (zero for a workspace-free task).
    pub fn workspace_bytes(&self) -> WorkspaceBytes {
        self.workspace_bytes
    }

    /// The Conductor status.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    /// True for `COMPLETED`.
    pub fn is_completed(&self) -> bool {
        self.status == TaskStatus::Completed
    }

    /// The `outputData` of a completion: `{workspace, result}` or `{result}`.
    pub fn output(&self) -> Option<&Value> {
        self.output.as_ref()
    }

    /// The `reasonForIncompletion` of a failure, already cut to the configured length.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The full detail of a failure.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// The payload for Conductor: `{"status": "COMPLETED", "output": …}` or
    /// `{"status": "FAILED" | "FAILED_WITH_TERMINAL_ERROR", "reasonForIncompletion": …}`.
    pub fn conductor_payload(&self) -> Value {
        match (&self.output, &self.reason) {
            (Some(output), _) => json!({"status": self.status, "output": output}),
            (None, reason) => json!({
                "status": self.status,
                "reasonForIncompletion": reason.as_deref().unwrap_or("task failed"),
            }),
        }
    }
}

/// Runs `task` on `input` with the default context (no store) as a local attempt.
pub fn execute(task: &Task, input: &Value) -> RuntimeTaskResult {
    execute_with(task, input, &ExecutionContext::default())
}

/// Runs `task` on `input`, the text of a Conductor `inputData`, read strictly: text that is
/// not JSON, or repeats a key in an object, is a `FAILED` input error at its path, so that a
/// closed contract never depends on which of two equal keys a parser keeps. The text is read
/// in one pass: `workspace` and `params` straight into their typed values by their generated
/// readers, every violation recorded on the way; the result is [`execute_attempt`]'s on the
/// parsed document.
pub fn execute_json(
    task: &Task,
    input: &str,
    context: &ExecutionContext,
    attempt: &Attempt<'_>,
) -> RuntimeTaskResult {
    execute_input(task, Input::Text(input), context, attempt)
}

/// Runs `task` on `input` (a Conductor `inputData`) in `context` as a local attempt
/// ([`Attempt::LOCAL`]).
pub fn execute_with(task: &Task, input: &Value, context: &ExecutionContext) -> RuntimeTaskResult {
    execute_attempt(task, input, context, &Attempt::LOCAL)
}

/// Runs `task` on `input` (a Conductor `inputData`) in `context` for `attempt`. Never panics
/// on bad input, and a panicking handler becomes a `FAILED` result.
pub fn execute_attempt(
    task: &Task,
    input: &Value,
    context: &ExecutionContext,
    attempt: &Attempt<'_>,
) -> RuntimeTaskResult {
    execute_input(task, Input::Value(input), context, attempt)
}

fn execute_input(
    task: &Task,
    input: Input<'_>,
    context: &ExecutionContext,
    attempt: &Attempt<'_>,
) -> RuntimeTaskResult {
    let (run, workspace_bytes) = run(task, input, context, attempt);
    let result = match run {
        Ok(output) => RuntimeTaskResult::completed(output),
        Err(failure) => RuntimeTaskResult::failed(failure, &context.config),
    };
    RuntimeTaskResult {
        workspace_bytes,
        ..result
    }
}

/// Cuts `reason` to at most `max` UTF-16 code units, on a character boundary.
pub fn truncate_reason(reason: &str, max: usize) -> String {
    let mut units = 0;
    for (i, c) in reason.char_indices() {
        units += c.len_utf16();
        if units > max {
            return reason[..i].to_owned();
        }
    }
    reason.to_owned()
}

/// The typed part of a task, behind a plain function pointer: built by `#[perago::task]` with
/// [`Runner::of`].
#[derive(Clone, Copy)]
pub struct Runner(fn(&mut Stages<'_>) -> Result<Value, Failure>);

impl Runner {
    /// The runner of handler `H`.
    pub const fn of<H: Handler>() -> Runner {
        Runner(run_typed::<H>)
    }
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Runner")
    }
}

/// The state of one execution between the untyped steps and the typed ones.
pub(crate) struct Stages<'a> {
    task: &'a Task,
    input: Input<'a>,
    workspace_input: Option<WorkspaceInput>,
    context: &'a ExecutionContext,
    attempt: &'a Attempt<'a>,
    /// The attempt's materialised workspace; its directory goes when it is dropped.
    checkout: Option<Checkout>,
    workspace: Option<Workspace>,
    bytes: WorkspaceBytes,
}

impl fmt::Debug for Stages<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stages")
            .field("task", &self.task.name)
            .finish_non_exhaustive()
    }
}

impl Stages<'_> {
    /// Steps 4 and 5: materialise the workspace, then the pre guardrails.
    fn enter(&mut self) -> Result<(), Failure> {
        let (TaskKind::Workspace(spec), Some(input)) =
            (&self.task.kind, self.workspace_input.take())
        else {
            return Ok(());
        };
        let Some(store) = &self.context.store else {
            return Err(Failure::Workspace {
                message: format!(
                    "workspace task {} has no workspace store: configure lakeFS \
                     (LAKECTL_SERVER_ENDPOINT_URL) or a local store (--store DIR)",
                    self.task.name
                ),
            });
        };
        let dir = self
            .context
            .scratch_dir
            .join(attempt_dir_name(self.task, self.attempt));
        let checkout = checkout::materialise(
            store.as_ref(),
            &input.repository,
            &input.r#ref,
            spec.prefix,
            &dir,
            self.context.parallel_downloads,
        )
        .map_err(|e| Failure::Workspace {
            message: match e {
                CheckoutError::Store(e) => format!(
                    "workspace {}@{}: {e}",
                    input.repository,
                    short(&input.r#ref)
                ),
                e => format!("workspace: {e}"),
            },
        })?;
        self.bytes.downloaded = checkout.bytes();
        check_all(spec.pre, checkout.dir()).map_err(Failure::PreGuardrail)?;
        self.workspace = Some(Workspace::new(input, checkout.dir(), spec.access));
        self.checkout = Some(checkout);
        Ok(())
    }

    /// Steps 8 to 10, after a valid result: the read-only check, the post guardrails, the
    /// publication. Returns the `workspace` of the output.
    fn leave(&mut self) -> Result<Option<Value>, Failure> {
        let (TaskKind::Workspace(spec), Some(checkout), Some(workspace)) =
            (&self.task.kind, &self.checkout, &mut self.workspace)
        else {
            return Ok(None);
        };
        let changes = checkout.changes().map_err(|e| Failure::Workspace {
            message: format!("cannot read the workspace after the handler: {e}"),
        })?;
        if spec.access == Access::ReadOnly && !changes.is_empty() {
            return Err(Failure::ReadOnlyChanged { changes });
        }
        check_all(spec.post, checkout.dir()).map_err(Failure::PostGuardrail)?;
        if spec.access == Access::ReadWrite {
            let store = self
                .context
                .store
                .as_deref()
                .ok_or_else(|| Failure::Workspace {
                    message: "the workspace store went away".to_owned(),
                })?;
            let publisher = Publisher {
                task_type: self.task.name.to_owned(),
                task_id: self.attempt.task_id.to_owned(),
                workflow_id: self.attempt.workflow_id.to_owned(),
                attempt: self.attempt.attempt,
                worker_id: self.attempt.worker_id.to_owned(),
            };
            let publication = Publication {
                store,
                checkout,
                changes: &changes,
                branch: workspace.branch(),
                publisher: &publisher,
                budget: spec.publish_budget,
            };
            match publication.run(self.attempt.fence) {
                Ok(Published::NoChange) => {}
                Ok(Published::Merged(commit)) => {
                    self.bytes.uploaded = changes.bytes();
                    workspace.set_published(commit.to_string());
                }
                Err(e) => {
                    let refused_by = match &e {
                        PublishError::Budget { .. } => "budget",
                        PublishError::Unsupported(_) => "unsupported",
                        PublishError::AttemptFence(_) => "attempt_fence",
                        PublishError::PublishFence(_) => "publish_fence",
                        PublishError::Store(_) => "store",
                    };
                    return Err(Failure::Publish {
                        refused_by,
                        message: e.to_string(),
                    });
                }
            }
        }
        serde_json::to_value(workspace.output())
            .map(Some)
            .map_err(|e| Failure::Workspace {
                message: format!("workspace output cannot be serialised: {e}"),
            })
    }

    /// Step 6, under `catch_unwind`; the panic goes to the log record, not to the panic hook.
    fn call<R>(
        &mut self,
        handler: impl FnOnce(Option<&mut Workspace>) -> Result<Output<R>, TaskError>,
    ) -> Result<Output<R>, Failure> {
        let workspace = self.workspace.as_mut();
        match quiet_panics::catch(move || handler(workspace)) {
            Ok(Ok(output)) => Ok(output),
            Ok(Err(error)) => Err(Failure::task(error)),
            Err((message, location)) => Err(Failure::Panic { message, location }),
        }
    }
}

/// The message of a panic payload: its `&str` or `String`.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic with a non-string payload".to_owned())
}

/// Handler panics are part of a task's outcome, recorded in its JSON Lines record: the default
/// panic hook would print them on standard error too, outside the log. One process-wide hook,
/// installed on first use, stays silent for a panic inside a handler (keeping its location for
/// the record) and hands every other panic to the hook that was there before.
mod quiet_panics {
    use std::cell::{Cell, RefCell};
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Once;

    thread_local! {
        static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
        static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
    }

    static INSTALL: Once = Once::new();

    /// Runs `f`; a panic is `Err((message, location))`.
    pub(super) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, (String, Option<String>)> {
        INSTALL.call_once(|| {
            let previous = panic::take_hook();
            panic::set_hook(Box::new(move |info| {
                if IN_HANDLER.get() {
                    LOCATION.set(info.location().map(|l| l.to_string()));
                } else {
                    previous(info);
                }
            }));
        });
        let was = IN_HANDLER.replace(true);
        let caught = panic::catch_unwind(AssertUnwindSafe(f));
        IN_HANDLER.set(was);
        caught.map_err(|payload| (super::panic_message(payload.as_ref()), LOCATION.take()))
    }
}

fn check_all(guardrails: &[Guardrail], root: &std::path::Path) -> Result<(), GuardrailViolation> {
    guardrails.iter().try_for_each(|g| check_guardrail(g, root))
}

/// Steps 1 to 7, typed.
fn run_typed<H: Handler>(stages: &mut Stages<'_>) -> Result<Value, Failure> {
    let input = input::read::<H::Params>(stages.task, stages.input)?;
    stages.workspace_input = input.workspace;
    stages.enter()?;
    let params = input.params;
    let output = stages.call(move |workspace| H::call(workspace, params))?;
    check_result::<H::Result>(output)
}

/// Step 7: the result as `R`'s closed schema has it, serialised.
fn check_result<R: Contract>(output: Output<R>) -> Result<Value, Failure> {
    let value = match output {
        Output::Typed(typed) => serde_json::to_value(&typed).map_err(unserialisable)?,
        Output::Mapping(value) => value,
    };
    let typed = input::decode_at::<R>(&value, "result").map_err(|violations| Failure::Result {
        violations,
        violations_omitted: 0,
    })?;
    serde_json::to_value(&typed).map_err(unserialisable)
}

fn unserialisable(e: serde_json::Error) -> Failure {
    Failure::Result {
        violations: vec![Violation::new(
            "$.result",
            crate::Code::Type,
            format!("cannot be serialised: {e}"),
        )],
        violations_omitted: 0,
    }
}

/// The first 12 characters of a ref, for messages.
fn short(reference: &str) -> &str {
    reference.get(..12).unwrap_or(reference)
}

/// `<task>-<task id>-<attempt>-<n>`: one fresh directory per attempt, even for two runs of
/// one attempt in one process.
fn attempt_dir_name(task: &Task, attempt: &Attempt<'_>) -> String {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!(
        "{}-{}-{}-{}-{n}",
        task.name,
        attempt.task_id,
        attempt.attempt,
        std::process::id()
    );
    perago_workspace::publish::safe_name(&name)
}

fn run(
    task: &Task,
    input: Input<'_>,
    context: &ExecutionContext,
    attempt: &Attempt<'_>,
) -> (Result<Value, Failure>, WorkspaceBytes) {
    let mut stages = Stages {
        task,
        input,
        workspace_input: None,
        context,
        attempt,
        checkout: None,
        workspace: None,
        bytes: WorkspaceBytes::default(),
    };
    let output = run_stages(&mut stages);
    (output, stages.bytes)
}

fn run_stages(stages: &mut Stages<'_>) -> Result<Value, Failure> {
    let result = (stages.task.run.0)(stages)?;
    let mut output = Map::new();
    if let Some(workspace) = stages.leave()? {
        output.insert("workspace".to_owned(), workspace);
    }
    output.insert("result".to_owned(), result);
    Ok(Value::Object(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_counts_utf16_units_and_keeps_characters_whole() {
        assert_eq!(truncate_reason("abcdef", 3), "abc");
        assert_eq!(truncate_reason("abc", 3), "abc");
        assert_eq!(truncate_reason("歌曲时长不足", 4), "歌曲时长");
        // An emoji is two UTF-16 units: it does not fit in the last one.
        assert_eq!(truncate_reason("ab😀c", 3), "ab");
        assert_eq!(truncate_reason("ab😀c", 4), "ab😀");
        assert_eq!(truncate_reason("é", 1), "é");
    }

    #[test]
    fn config_from_lookup() {
        let none = RuntimeConfig::from_lookup(|_| None).unwrap();
        assert_eq!(none.reason_max_length, 500);
        let set = RuntimeConfig::from_lookup(|_| Some("120".into())).unwrap();
        assert_eq!(set.reason_max_length, 120);
        for bad in ["0", "-1", "abc", "", "1.5"] {
            let err = RuntimeConfig::from_lookup(|_| Some(bad.into())).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "PERAGO_FAILURE_REASON_MAX_LENGTH must be a positive integer (the most \
                     characters of reasonForIncompletion), got {bad:?}"
                )
            );
        }
    }

    #[test]
    fn statuses() {
        let terminal = Failure::Task {
            kind: ErrorKind::Terminal,
            chain: vec!["no".into()],
        };
        assert_eq!(terminal.status(), TaskStatus::FailedWithTerminalError);
        let failed = Failure::Task {
            kind: ErrorKind::Unknown,
            chain: vec![String::new()],
        };
        assert_eq!(failed.status(), TaskStatus::Failed);
        assert_eq!(failed.reason(), "task failed");
    }
}
