//! Task descriptors: what `#[perago::task]` records about a handler, and the [`Registry`] that
//! the runtime, the TaskDef generator and the worker read.
//!
//! ```ignore
//! use perago::task::TaskError;
//! use perago::workspace::Workspace;
//!
//! /// Checks that a song is long enough. (The doc comment is the TaskDef description.)
//! #[perago::task(name = "validate_song", retry_count = 2, owner_email = "songs@example.com")]
//! fn validate_song(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> { ... }
//!
//! #[perago::task(
//!     name = "build_features",
//!     workspace(
//!         prefix = "features/",
//!         pre = [require_glob("raw/**/*.parquet", min_count = 1), forbid_glob("**/*.tmp")],
//!         post = [require_file("out/features.csv"), max_total_bytes("1 GB")],
//!     ),
//! )]
//! fn build_features(ws: &Workspace, params: BuildFeaturesParams)
//!     -> Result<BuildFeaturesResult, TaskError> { ... }
//!
//! let registry = perago::tasks![validate_song, build_features];
//! ```
//!
//! # Signatures
//!
//! The attribute goes on a module-level function (not a method, nor a function declared inside
//! another function's body): beside it, it declares a module of the same name holding the
//! descriptor, `NAME` and `TASK`, which `perago::tasks!` names.
//!
//! | kind | handler |
//! |---|---|
//! | workspace-free | `fn(params: P) -> Result<R, TaskError>` |
//! | workspace, read-only | `fn(ws: &Workspace, params: P) -> Result<R, TaskError>` |
//! | workspace, read-write | `fn(ws: &mut Workspace, params: P) -> Result<R, TaskError>` |
//!
//! `P` and `R` are schema-backed types (they implement [`Contract`]: generate them from JSON
//! Schemas with `cargo xtask codegen`). A handler may instead return a JSON mapping
//! (`serde_json::Map<String, Value>` or `Value`); then `result = Type` names the schema-backed
//! type the mapping must validate against.
//!
//! # Options
//!
//! | option | value | TaskDef field |
//! |---|---|---|
//! | `name` (required) | `"[A-Za-z0-9_]+"` | `name` |
//! | `description` | string; default: the function's doc comment | `description` |
//! | `result` | a schema-backed type, only with a mapping return | — |
//! | `retry_count` | integer ≥ 0 | `retryCount` |
//! | `retry_logic` | `FIXED` \| `EXPONENTIAL_BACKOFF` \| `LINEAR_BACKOFF` | `retryLogic` |
//! | `retry_delay_seconds` | integer ≥ 0 | `retryDelaySeconds` |
//! | `timeout_seconds` | integer ≥ 0 | `timeoutSeconds` |
//! | `response_timeout_seconds` | integer ≥ 1, ≤ `timeout_seconds` when that is > 0 | `responseTimeoutSeconds` |
//! | `total_timeout_seconds` | integer ≥ 0, ≥ `timeout_seconds` when both are > 0 | `totalTimeoutSeconds` |
//! | `timeout_policy` | `RETRY` \| `TIME_OUT_WF` \| `ALERT_ONLY` | `timeoutPolicy` |
//! | `concurrent_exec_limit` | integer ≥ 0 | `concurrentExecLimit` |
//! | `rate_limit_per_frequency` | integer ≥ 0 | `rateLimitPerFrequency` |
//! | `rate_limit_frequency_in_seconds` | integer ≥ 0 | `rateLimitFrequencyInSeconds` |
//! | `poll_timeout_seconds` | integer ≥ 0 | `pollTimeoutSeconds` |
//! | `backoff_scale_factor` | integer ≥ 1 | `backoffScaleFactor` |
//! | `owner_email` | an email address | `ownerEmail` |
//! | `schema_version` | integer ≥ 1, default 1 | the SchemaDefs' `version` |
//! | `enforce_schema` | `true` \| `false`, default `false` | `enforceSchema` |
//! | `workspace(...)` | workspace tasks only, see [`WorkspaceSpec`] | — |
//!
//! `workspace(prefix = "features/", access = read_only | read_write, pre = [...], post = [...],
//! publish_budget(max_files = N, max_bytes = N))`: `access` defaults to what the signature says
//! and must agree with it; `publish_budget` is for read-write tasks only. None of these appear in
//! the task's input/output contract or its TaskDef.
//!
//! # Guardrails
//!
//! `pre = [...]` is checked on the workspace directory before the handler runs (a failure is
//! `FAILED_WITH_TERMINAL_ERROR`, reason `pre guardrail <why>`), `post = [...]` after it returns a
//! valid result (`FAILED`, reason `post guardrail <why>`), in order, stopping at the first that
//! does not hold:
//!
//! | guardrail | holds when | `<why>` when it does not |
//! |---|---|---|
//! | `require_glob("pattern", min_count = N)` | at least N files match; N ≥ 1, default 1 | `require_glob('raw/**/*.parquet') matched 0 files; min_count=1` |
//! | `forbid_glob("pattern")` | no file matches | `forbid_glob('**/*.tmp') matched 2 files: a.tmp, b/c.tmp` (five listed at most, then `, …`) |
//! | `require_file("path")` | `path` is a regular file | `require_file('manifest.json') found no file` (or a directory, a symlink, …) |
//! | `max_total_bytes(N)` | all files add up to at most N bytes; N ≥ 1, an integer literal (`1_000_000`) or a string with a unit (`"500 MB"`; B, kB, MB, GB, TB, KiB, MiB, GiB, TiB) | `max_total_bytes(1000000) found 1500000 bytes in 12 files` |
//! | `max_files(N)` | at most N files; N ≥ 1 | `max_files(100) found 120 files` |
//!
//! Globs and paths are relative to the workspace directory (which holds the prefix): `/`
//! separators, no leading `/`, no empty, `.` or `..` segments. In a glob, `*` and `?` stay within
//! one path segment, `**` crosses them (`**/*.tmp` also matches `a.tmp`), `{a,b}` and `[ab]` as
//! usual. "Files" are regular files: a check never follows a symbolic link, so a symlink neither
//! matches nor counts, and nothing behind a symlinked directory is seen. A directory that cannot
//! be read fails the guardrail, its reason naming the path.
//!
//! The attribute refuses, each at its token, a malformed guardrail (an invalid or absolute glob,
//! a path with `..`, a count or size of 0, an unknown unit) and, within one list, a repeated
//! guardrail or guardrails no workspace passes together (`require_glob("x")` with
//! `forbid_glob("x")`, a `require_file` that a `forbid_glob` matches, a `min_count` above
//! `max_files`). The descriptor holds [`Guardrail`]s; the runtime checks them with
//! [`check_guardrail`](crate::workspace::check_guardrail).

use crate::Contract;
use crate::contracts::workspace_free_task_input::WorkspaceFreeTaskInput;
use crate::contracts::workspace_task_input::WorkspaceTaskInput;
use crate::contracts::{workspace_free_task_result, workspace_task_result};
use crate::workspace::Workspace;
pub use crate::workspace::{Access, Guardrail, PublishBudget, WorkspaceSpec};
use serde_json::Value;
use std::fmt;

pub use crate::runtime::Runner;

/// A registered task: its name, kind, schemas and options, and the handler behind it.
///
/// Built by `#[perago::task]` as `<handler>::TASK`; read through a [`Registry`].
#[derive(Debug)]
pub struct Task {
    /// The Conductor task type, `[A-Za-z0-9_]+`.
    pub name: &'static str,
    /// The handler function's path, e.g. `perago_example::validate_song`.
    pub handler: &'static str,
    /// Workspace-free, or a workspace task with its spec.
    pub kind: TaskKind,
    /// The closed schema of `params`.
    pub params: SchemaType,
    /// The closed schema of `result`.
    pub result: SchemaType,
    /// The TaskDef options.
    pub options: TaskOptions,
    /// Runs the handler through the contract (see [`crate::runtime`]).
    #[doc(hidden)]
    pub run: Runner,
}

impl Task {
    /// The workspace spec of a workspace task.
    pub fn workspace(&self) -> Option<&WorkspaceSpec> {
        match &self.kind {
            TaskKind::WorkspaceFree => None,
            TaskKind::Workspace(spec) => Some(spec),
        }
    }
}

/// The two kinds of task, read from the handler's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// `fn(params: P) -> Result<R, TaskError>`: input `{params}`, output `{result}`.
    WorkspaceFree,
    /// `fn(ws: &Workspace | &mut Workspace, params: P) -> Result<R, TaskError>`: input
    /// `{workspace, params}`, output `{workspace, result}`.
    Workspace(WorkspaceSpec),
}

impl TaskKind {
    /// The exact top-level keys of the Conductor `inputData` (the TaskDef's `inputKeys`), as
    /// the envelope schema declares them.
    pub fn input_keys(&self) -> &'static [&'static str] {
        match self {
            TaskKind::WorkspaceFree => WorkspaceFreeTaskInput::PROPERTIES,
            TaskKind::Workspace(_) => WorkspaceTaskInput::PROPERTIES,
        }
    }

    /// The exact top-level keys of a completed `output` (the TaskDef's `outputKeys`), as the
    /// result envelope's schema declares them.
    pub fn output_keys(&self) -> &'static [&'static str] {
        match self {
            TaskKind::WorkspaceFree => workspace_free_task_result::Output::PROPERTIES,
            TaskKind::Workspace(_) => workspace_task_result::Output::PROPERTIES,
        }
    }

    /// `workspace-free` or `workspace`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskKind::WorkspaceFree => "workspace-free",
            TaskKind::Workspace(_) => "workspace",
        }
    }
}

/// A schema-backed type as the descriptor records it.
#[derive(Debug, Clone, Copy)]
pub struct SchemaType {
    /// The Rust type's name, e.g. `ValidateSongParams`.
    pub name: &'static str,
    /// The schema file and JSON Pointer it was generated from ([`Contract::LOCATION`]).
    pub location: &'static str,
    /// Its closed standalone JSON Schema ([`Contract::schema`]).
    pub schema: fn() -> &'static str,
}

/// Equal when they name the same type with the same schema: a function pointer's address says
/// nothing (one function may have several, two may share one).
impl PartialEq for SchemaType {
    fn eq(&self, other: &SchemaType) -> bool {
        self.name == other.name
            && self.location == other.location
            && (self.schema)() == (other.schema)()
    }
}

impl Eq for SchemaType {}

impl SchemaType {
    /// The descriptor of `T`.
    pub const fn of<T: Contract>(name: &'static str) -> SchemaType {
        SchemaType {
            name,
            location: T::LOCATION,
            schema: T::schema,
        }
    }

    /// The params type of handler `H`.
    pub const fn params_of<H: Handler>(name: &'static str) -> SchemaType {
        SchemaType::of::<H::Params>(name)
    }

    /// The result type of handler `H`.
    pub const fn result_of<H: Handler>(name: &'static str) -> SchemaType {
        SchemaType::of::<H::Result>(name)
    }
}

/// The TaskDef options of a task. `None` means the author was silent: the TaskDef generator
/// applies its (and Conductor's) defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskOptions {
    /// The task's description: the `description` option, else the handler's doc comment.
    pub description: Option<&'static str>,
    /// `retryCount`.
    pub retry_count: Option<u32>,
    /// `retryLogic`.
    pub retry_logic: Option<RetryLogic>,
    /// `retryDelaySeconds`.
    pub retry_delay_seconds: Option<u32>,
    /// `timeoutSeconds` (0 = no timeout).
    pub timeout_seconds: Option<u64>,
    /// `responseTimeoutSeconds` (≥ 1).
    pub response_timeout_seconds: Option<u64>,
    /// `totalTimeoutSeconds` (0 = off).
    pub total_timeout_seconds: Option<u64>,
    /// `timeoutPolicy`.
    pub timeout_policy: Option<TimeoutPolicy>,
    /// `concurrentExecLimit`.
    pub concurrent_exec_limit: Option<u32>,
    /// `rateLimitPerFrequency`.
    pub rate_limit_per_frequency: Option<u32>,
    /// `rateLimitFrequencyInSeconds`.
    pub rate_limit_frequency_in_seconds: Option<u32>,
    /// `pollTimeoutSeconds`.
    pub poll_timeout_seconds: Option<u32>,
    /// `backoffScaleFactor` (≥ 1).
    pub backoff_scale_factor: Option<u32>,
    /// `ownerEmail`; when absent, the TaskDef generator takes a workspace-level setting.
    pub owner_email: Option<&'static str>,
    /// The version of the task's input and output SchemaDefs (default 1).
    pub schema_version: u32,
    /// `enforceSchema` (default false).
    pub enforce_schema: bool,
}

impl TaskOptions {
    /// Nothing set: schema version 1, schema enforcement off.
    pub const DEFAULT: TaskOptions = TaskOptions {
        description: None,
        retry_count: None,
        retry_logic: None,
        retry_delay_seconds: None,
        timeout_seconds: None,
        response_timeout_seconds: None,
        total_timeout_seconds: None,
        timeout_policy: None,
        concurrent_exec_limit: None,
        rate_limit_per_frequency: None,
        rate_limit_frequency_in_seconds: None,
        poll_timeout_seconds: None,
        backoff_scale_factor: None,
        owner_email: None,
        schema_version: 1,
        enforce_schema: false,
    };
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions::DEFAULT
    }
}

/// Conductor's `retryLogic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryLogic {
    /// `FIXED`
    Fixed,
    /// `EXPONENTIAL_BACKOFF`
    ExponentialBackoff,
    /// `LINEAR_BACKOFF`
    LinearBackoff,
}

impl RetryLogic {
    /// Conductor's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryLogic::Fixed => "FIXED",
            RetryLogic::ExponentialBackoff => "EXPONENTIAL_BACKOFF",
            RetryLogic::LinearBackoff => "LINEAR_BACKOFF",
        }
    }
}

/// Conductor's `timeoutPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPolicy {
    /// `RETRY`
    Retry,
    /// `TIME_OUT_WF`
    TimeOutWf,
    /// `ALERT_ONLY`
    AlertOnly,
}

impl TimeoutPolicy {
    /// Conductor's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutPolicy::Retry => "RETRY",
            TimeoutPolicy::TimeOutWf => "TIME_OUT_WF",
            TimeoutPolicy::AlertOnly => "ALERT_ONLY",
        }
    }
}

/// Why a handler did not produce a result.
///
/// Like `anyhow::Error`, it does not implement [`std::error::Error`], so that `?` converts any
/// error into it ([`TaskError::Unknown`]).
pub enum TaskError {
    /// The seed's `TaskFailed`: the attempt failed, Conductor may retry it (`FAILED`).
    Failed(String),
    /// The seed's `TaskTerminalError`: retrying the same input is pointless
    /// (`FAILED_WITH_TERMINAL_ERROR`).
    Terminal(String),
    /// Any other error, reached with `?` (`FAILED`).
    Unknown(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl TaskError {
    /// [`TaskError::Failed`].
    pub fn failed(message: impl Into<String>) -> TaskError {
        TaskError::Failed(message.into())
    }

    /// [`TaskError::Terminal`].
    pub fn terminal(message: impl Into<String>) -> TaskError {
        TaskError::Terminal(message.into())
    }

    /// The top-level message.
    pub fn message(&self) -> String {
        match self {
            TaskError::Failed(m) | TaskError::Terminal(m) => m.clone(),
            TaskError::Unknown(e) => e.to_string(),
        }
    }

    /// The messages of the error and its sources, outermost first.
    pub fn chain(&self) -> Vec<String> {
        match self {
            TaskError::Failed(m) | TaskError::Terminal(m) => vec![m.clone()],
            TaskError::Unknown(e) => {
                let mut chain = vec![e.to_string()];
                let mut source = e.source();
                while let Some(s) = source {
                    chain.push(s.to_string());
                    source = s.source();
                }
                chain
            }
        }
    }

    /// Used by the expansion of a workspace task when the runtime passes no workspace, which
    /// the runtime never does.
    #[doc(hidden)]
    pub fn __missing_workspace() -> TaskError {
        TaskError::Failed("internal error: a workspace task was run without a workspace".into())
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for TaskError {
    fn from(error: E) -> Self {
        TaskError::Unknown(Box::new(error))
    }
}

impl fmt::Debug for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskError::Failed(m) => f.debug_tuple("Failed").field(m).finish(),
            TaskError::Terminal(m) => f.debug_tuple("Terminal").field(m).finish(),
            TaskError::Unknown(e) => f.debug_tuple("Unknown").field(e).finish(),
        }
    }
}

/// The message; `{:#}` adds the sources, `: `-separated.
impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&self.chain().join(": "))
        } else {
            f.write_str(&self.message())
        }
    }
}

/// What a handler returned, before it is validated against the result schema `R`.
#[derive(Debug)]
pub enum Output<R> {
    /// The schema-backed type itself (serialised, then validated again).
    Typed(R),
    /// A JSON mapping, validated against `R`'s closed schema.
    Mapping(Value),
}

impl<R> Output<R> {
    /// A mapping (`serde_json::Map<String, Value>` or `Value`).
    pub fn mapping(value: impl Into<Value>) -> Output<R> {
        Output::Mapping(value.into())
    }
}

/// The typed side of a task, implemented by `#[perago::task]` for a hidden type per handler.
///
/// The `Contract` bounds are what makes `P` and `R` schema-backed: a type that is not gets
/// "`X` is not a schema-backed type" at the type itself.
pub trait Handler: 'static {
    /// `P`: the params type.
    type Params: Contract;
    /// `R`: the result type (for a mapping return, the `result = Type` option).
    type Result: Contract;

    /// Calls the handler; `workspace` is `Some` exactly for workspace tasks.
    fn call(
        workspace: Option<&mut Workspace>,
        params: Self::Params,
    ) -> Result<Output<Self::Result>, TaskError>;
}

/// The tasks of a crate, in a deterministic order (the order given), names unique.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tasks: Vec<&'static Task>,
}

/// Two tasks of one registry share a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("two tasks are named `{name}`: `{first}` and `{second}`; task names must be unique")]
pub struct DuplicateTaskName {
    /// The shared name.
    pub name: String,
    /// The first handler's path.
    pub first: String,
    /// The second handler's path.
    pub second: String,
}

impl Registry {
    /// A registry of `tasks` in the given order; two tasks with one name are an error.
    pub fn new(
        tasks: impl IntoIterator<Item = &'static Task>,
    ) -> Result<Registry, DuplicateTaskName> {
        let mut registry = Registry::default();
        for task in tasks {
            if let Some(first) = registry.get(task.name) {
                return Err(DuplicateTaskName {
                    name: task.name.to_owned(),
                    first: first.handler.to_owned(),
                    second: task.handler.to_owned(),
                });
            }
            registry.tasks.push(task);
        }
        Ok(registry)
    }

    /// The task named `name`.
    pub fn get(&self, name: &str) -> Option<&'static Task> {
        self.tasks.iter().copied().find(|t| t.name == name)
    }

    /// Every task, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &'static Task> + '_ {
        self.tasks.iter().copied()
    }

    /// Every task name, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tasks.iter().map(|t| t.name).collect()
    }

    /// How many tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

impl<'a> IntoIterator for &'a Registry {
    type Item = &'static Task;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, &'static Task>>;
    fn into_iter(self) -> Self::IntoIter {
        self.tasks.iter().copied()
    }
}

#[doc(hidden)]
pub mod __private {
    /// Byte equality of two names, usable in the constants `perago::tasks!` emits.
    pub const fn same_name(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_is_byte_equality() {
        assert!(__private::same_name("a_b", "a_b"));
        assert!(!__private::same_name("a_b", "a_c"));
        assert!(!__private::same_name("a", "ab"));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn any_error_converts_with_question_mark() {
        fn f() -> Result<(), TaskError> {
            Err(Outer(std::io::Error::other("inner")))?;
            Ok(())
        }
        let e = f().unwrap_err();
        assert!(matches!(e, TaskError::Unknown(_)));
        assert_eq!(e.message(), "outer");
        assert_eq!(e.chain(), ["outer", "inner"]);
        assert_eq!(format!("{e:#}"), "outer: inner");
    }

    #[test]
    fn guardrails_display_as_in_reasons() {
        let g = Guardrail::RequireGlob {
            pattern: "raw/**/*.parquet",
            min_count: 1,
        };
        assert_eq!(g.to_string(), "require_glob('raw/**/*.parquet')");
    }
}
