//! Conductor TaskDefs from task descriptors (`docs/src/reference/task-contract.md` §6; `docs/src/reference/conductor.md` §1–§3).
//!
//! Pure: [`assemble`] turns a [`Task`] and the workspace-level [`Settings`] into a [`TaskDef`]
//! (its JSON is [`TaskDef::to_json`], in a fixed field order); [`check`] applies Conductor's own
//! validation rules to TaskDef JSON, and `assemble` runs it before returning, so nothing that
//! Conductor would refuse is ever written or sent. [`files`] keeps the checked-in `taskdefs/`
//! directory in step, [`diff`] compares with live TaskDefs, and [`publish`] registers them
//! through [`perago_conductor::Client`] (refusing a changed schema under a published version).
//!
//! What a TaskDef holds:
//! - `inputKeys` / `outputKeys`: `["workspace", "params"]` / `["workspace", "result"]` for a
//!   workspace task, `["params"]` / `["result"]` for a workspace-free one;
//! - `inputSchema` / `outputSchema`: SchemaDefs `{name: "<task>_input" | "<task>_output",
//!   version: schema_version, type: "JSON", data}` whose `data` is the closed envelope (the input
//!   `{workspace, params}` / `{params}`, the completed output `{workspace, result}` / `{result}`)
//!   with `WorkspaceInput` / `WorkspaceOutput` and the task's closed params / result inlined and
//!   their `$defs` bundled at the root, so the document stands alone; `$schema` (2020-12) at its
//!   root; no `default` or `examples` keywords (defaults are applied by the worker, never by
//!   Conductor);
//! - every option of the task (see [`mod@perago::task`]), and where the author was silent Conductor's
//!   default, written out: `retryCount` 3, `timeoutSeconds` 0, `timeoutPolicy` `TIME_OUT_WF`,
//!   `retryLogic` `FIXED`, `retryDelaySeconds` 60, `backoffScaleFactor` 1, `totalTimeoutSeconds`
//!   0, and `responseTimeoutSeconds` 3600, or `timeoutSeconds` when that is in 1..3600 (Conductor
//!   refuses a response timeout above the task timeout); the optional limits
//!   (`concurrentExecLimit`, `rateLimitPerFrequency`, `rateLimitFrequencyInSeconds`,
//!   `pollTimeoutSeconds`) only when set;
//! - `ownerEmail`, always: the task's `owner_email`, else [`Settings::owner_email`]; neither is an
//!   error naming the task;
//! - `enforceSchema: true` only when the task opts in.
//!
//! Never: guardrails, access mode, workspace prefix, publish budget, storage credentials,
//! staging branch, `inputTemplate`, or defaults copied from a schema.

pub mod diff;
mod envelope;
pub mod evolution;
pub mod files;
pub mod publish;

use perago::Contract;
use perago::contracts::{
    workspace_free_task_input::WorkspaceFreeTaskInput, workspace_free_task_result,
    workspace_task_input::WorkspaceTaskInput, workspace_task_result,
};
use perago::task::{Task, TaskKind, TaskOptions, TimeoutPolicy};
use perago_taskdef_rules::{self as rules, TimeoutRule};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

/// The JSON Schema dialect of every SchemaDef's `data`.
pub const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The environment variable a task binary reads the workspace-level owner email from.
pub const OWNER_EMAIL_ENV: &str = "PERAGO_OWNER_EMAIL";

/// Settings that hold for every task of a workspace (or binary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `ownerEmail` for the tasks that set no `owner_email` of their own.
    pub owner_email: Option<String>,
}

/// A Conductor TaskDef as perago writes it: the fields of Conductor's `TaskDef` (§1) that perago
/// sets, serialised in the order Conductor's class declares them, absent ones omitted (never
/// `null`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDef {
    /// `name`: the task type.
    pub name: String,
    /// `description`: the task's description (its doc comment by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `retryCount`.
    pub retry_count: u32,
    /// `timeoutSeconds` (0: none).
    pub timeout_seconds: u64,
    /// `inputKeys`: the exact top-level keys of `inputData`.
    pub input_keys: Vec<String>,
    /// `outputKeys`: the exact top-level keys of a completed output.
    pub output_keys: Vec<String>,
    /// `timeoutPolicy`.
    pub timeout_policy: &'static str,
    /// `retryLogic`.
    pub retry_logic: &'static str,
    /// `retryDelaySeconds`.
    pub retry_delay_seconds: u32,
    /// `responseTimeoutSeconds`, always explicit.
    pub response_timeout_seconds: u64,
    /// `concurrentExecLimit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrent_exec_limit: Option<u32>,
    /// `rateLimitPerFrequency`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_frequency: Option<u32>,
    /// `rateLimitFrequencyInSeconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_frequency_in_seconds: Option<u32>,
    /// `ownerEmail`, always present.
    pub owner_email: String,
    /// `pollTimeoutSeconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_timeout_seconds: Option<u32>,
    /// `backoffScaleFactor`.
    pub backoff_scale_factor: u32,
    /// `totalTimeoutSeconds` (0: off).
    pub total_timeout_seconds: u64,
    /// `inputSchema`.
    pub input_schema: SchemaDef,
    /// `outputSchema`.
    pub output_schema: SchemaDef,
    /// `enforceSchema`: present (and `true`) only when the task opts in.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub enforce_schema: bool,
}

/// A Conductor SchemaDef (§2.1) carrying its JSON Schema inline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaDef {
    /// `<task>_input` or `<task>_output`.
    pub name: String,
    /// The task's `schema_version`.
    pub version: u32,
    /// Always `JSON`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The closed, standalone JSON Schema, `$schema` at its root.
    pub data: Value,
}

impl TaskDef {
    /// The TaskDef as Conductor JSON, fields in a fixed order.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The two SchemaDefs, input first, as JSON (what `POST /api/schema` takes).
    pub fn schema_defs(&self) -> [Value; 2] {
        let json = |s: &SchemaDef| serde_json::to_value(s).unwrap_or(Value::Null);
        [json(&self.input_schema), json(&self.output_schema)]
    }
}

/// A TaskDef that cannot be assembled, or that Conductor would refuse: which task, which field
/// (Conductor's JSON name, e.g. `responseTimeoutSeconds`), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task `{task}`: {field}: {message}")]
pub struct TaskDefError {
    /// The task name.
    pub task: String,
    /// The TaskDef field, e.g. `ownerEmail` or `inputSchema.version`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// Several [`TaskDefError`]s, one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDefErrors(pub Vec<TaskDefError>);

impl fmt::Display for TaskDefErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TaskDefErrors {}

/// The TaskDef of `task`, checked against Conductor's rules.
pub fn assemble(task: &Task, settings: &Settings) -> Result<TaskDef, Vec<TaskDefError>> {
    assemble_parts(
        Parts {
            name: task.name,
            kind: &task.kind,
            params_schema: (task.params.schema)(),
            result_schema: (task.result.schema)(),
            options: &task.options,
        },
        settings,
    )
}

/// The TaskDefs of `tasks`, in order; every error of every task when any fails.
pub fn assemble_all<'a>(
    tasks: impl IntoIterator<Item = &'a Task>,
    settings: &Settings,
) -> Result<Vec<TaskDef>, TaskDefErrors> {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for task in tasks {
        if !seen.insert(task.name) {
            errors.push(TaskDefError {
                task: task.name.to_owned(),
                field: "name".to_owned(),
                message: "two tasks have this name; task names must be unique".to_owned(),
            });
            continue;
        }
        match assemble(task, settings) {
            Ok(def) => defs.push(def),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(defs)
    } else {
        Err(TaskDefErrors(errors))
    }
}

/// What [`assemble_parts`] reads of a task: [`assemble`] takes them from a [`Task`].
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    /// The task name.
    pub name: &'a str,
    /// Its kind.
    pub kind: &'a TaskKind,
    /// The closed standalone schema of its params ([`Contract::schema`]).
    pub params_schema: &'a str,
    /// The closed standalone schema of its result.
    pub result_schema: &'a str,
    /// Its options.
    pub options: &'a TaskOptions,
}

/// [`assemble`] from the parts of a task descriptor.
pub fn assemble_parts(parts: Parts<'_>, settings: &Settings) -> Result<TaskDef, Vec<TaskDefError>> {
    let mut errors = Vec::new();
    let owner_email =
        match owner_email(parts.options, settings) {
            Some(email) => email,
            None => {
                errors.push(parts.error(
                "ownerEmail",
                "no owner email: set `owner_email = \"team@example.com\"` on the task, or a \
                 workspace-level one (`[workspace.metadata.perago] owner-email` for `cargo xtask`, \
                 `--owner-email` or PERAGO_OWNER_EMAIL for a task binary)"
                    .to_owned(),
            ));
                String::new()
            }
        };
    let envelopes = envelopes(&parts, &mut errors);
    let def = taskdef(&parts, owner_email, envelopes);
    // Conductor's rules on the result; a field already reported is not reported twice.
    let violations = check(&def.to_json());
    for v in violations {
        if !errors.iter().any(|e| e.field == v.field) {
            errors.push(v);
        }
    }
    if errors.is_empty() {
        Ok(def)
    } else {
        Err(errors)
    }
}

impl Parts<'_> {
    fn error(&self, field: &str, message: String) -> TaskDefError {
        TaskDefError {
            task: self.name.to_owned(),
            field: field.to_owned(),
            message,
        }
    }
}

/// The task's own `owner_email`, else the workspace-level one unless it is blank.
fn owner_email(options: &TaskOptions, settings: &Settings) -> Option<String> {
    options.owner_email.map(str::to_owned).or_else(|| {
        settings
            .owner_email
            .as_deref()
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::to_owned)
    })
}

/// Each side of a task's contract with Conductor: its exact top-level keys, and the closed
/// envelope that is its SchemaDef's `data` (`null` when either side could not be filled).
struct Envelopes {
    input_keys: Vec<String>,
    output_keys: Vec<String>,
    input_data: Value,
    output_data: Value,
}

/// The envelopes of the task's kind with its params and result schemas filled in; what cannot
/// be filled is an error of `inputSchema.data` or `outputSchema.data`.
fn envelopes(parts: &Parts<'_>, errors: &mut Vec<TaskDefError>) -> Envelopes {
    let Parts { name, kind, .. } = *parts;
    let (input_envelope, output_envelope) = match kind {
        TaskKind::WorkspaceFree => (
            WorkspaceFreeTaskInput::schema(),
            workspace_free_task_result::Output::schema(),
        ),
        TaskKind::Workspace(_) => (
            WorkspaceTaskInput::schema(),
            workspace_task_result::Output::schema(),
        ),
    };
    let keys = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let input_keys = keys(kind.input_keys());
    let output_keys = keys(kind.output_keys());
    let input_data = envelope::fill(
        input_envelope,
        "params",
        parts.params_schema,
        &format!("{name}_input"),
        &format!(
            "The Conductor inputData of the {} task `{name}`: exactly {}.",
            kind.as_str(),
            quoted_list(&input_keys)
        ),
    )
    .map_err(|m| parts.error("inputSchema.data", m));
    let output_data = envelope::fill(
        output_envelope,
        "result",
        parts.result_schema,
        &format!("{name}_output"),
        &format!(
            "The outputData of a completed `{name}` task: exactly {}.",
            quoted_list(&output_keys)
        ),
    )
    .map_err(|m| parts.error("outputSchema.data", m));
    let (input_data, output_data) = match (input_data, output_data) {
        (Ok(i), Ok(o)) => (i, o),
        (i, o) => {
            errors.extend(i.err());
            errors.extend(o.err());
            (Value::Null, Value::Null)
        }
    };
    Envelopes {
        input_keys,
        output_keys,
        input_data,
        output_data,
    }
}

/// The TaskDef of the task's options, with Conductor's default written out for each it is
/// silent on (the module's doc lists them); not yet checked.
fn taskdef(parts: &Parts<'_>, owner_email: String, envelopes: Envelopes) -> TaskDef {
    let Parts {
        name, options: o, ..
    } = *parts;
    let timeout_seconds = o.timeout_seconds.unwrap_or(0);
    TaskDef {
        name: name.to_owned(),
        description: o.description.map(unfold).filter(|d| !d.is_empty()),
        retry_count: o.retry_count.unwrap_or(3),
        timeout_seconds,
        input_keys: envelopes.input_keys,
        output_keys: envelopes.output_keys,
        timeout_policy: o
            .timeout_policy
            .unwrap_or(TimeoutPolicy::TimeOutWf)
            .as_str(),
        retry_logic: o
            .retry_logic
            .unwrap_or(perago::task::RetryLogic::Fixed)
            .as_str(),
        retry_delay_seconds: o.retry_delay_seconds.unwrap_or(60),
        response_timeout_seconds: response_timeout_seconds(o, timeout_seconds),
        concurrent_exec_limit: o.concurrent_exec_limit,
        rate_limit_per_frequency: o.rate_limit_per_frequency,
        rate_limit_frequency_in_seconds: o.rate_limit_frequency_in_seconds,
        owner_email,
        poll_timeout_seconds: o.poll_timeout_seconds,
        backoff_scale_factor: o.backoff_scale_factor.unwrap_or(1),
        total_timeout_seconds: o.total_timeout_seconds.unwrap_or(0),
        input_schema: SchemaDef {
            name: format!("{name}_input"),
            version: o.schema_version,
            kind: "JSON",
            data: envelopes.input_data,
        },
        output_schema: SchemaDef {
            name: format!("{name}_output"),
            version: o.schema_version,
            kind: "JSON",
            data: envelopes.output_data,
        },
        enforce_schema: o.enforce_schema,
    }
}

/// The task's `responseTimeoutSeconds`; when it sets none, Conductor's default, or
/// `timeoutSeconds` when that is shorter, so that the two agree ([`rules::timeouts`]).
fn response_timeout_seconds(options: &TaskOptions, timeout_seconds: u64) -> u64 {
    options.response_timeout_seconds.unwrap_or(
        if timeout_seconds > 0 && timeout_seconds < rules::DEFAULT_RESPONSE_TIMEOUT_SECONDS {
            timeout_seconds
        } else {
            rules::DEFAULT_RESPONSE_TIMEOUT_SECONDS
        },
    )
}

/// A doc comment as one line per paragraph: the source's line breaks inside a paragraph become
/// spaces; paragraphs stay apart (`\n\n`); a list item keeps its own line.
fn unfold(text: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        if !current.is_empty() {
            let item = line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ");
            current.push(if item { '\n' } else { ' ' });
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

fn quoted_list(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    quoted.join(" and ")
}

/// Conductor's rules (§1, §3) and perago's own for TaskDef JSON: every violation, each naming
/// the task and the field.
///
/// - `name` matches `[A-Za-z0-9_]+`;
/// - no field is `null` (Conductor turns a null primitive into 0), nor in a SchemaDef;
/// - `ownerEmail` is an email address (one `@`);
/// - `responseTimeoutSeconds` is present and ≥ 1, and ≤ `timeoutSeconds` when that is > 0;
/// - `timeoutSeconds` ≤ `totalTimeoutSeconds` when both are > 0;
/// - `retryCount`, `retryDelaySeconds`, `pollTimeoutSeconds`, the rate and concurrency limits,
///   `maxRetryDelaySeconds`, `backoffJitterMs` are ≥ 0 and `backoffScaleFactor` ≥ 1, each within
///   its Java type (`int` or `long`);
/// - `timeoutPolicy` and `retryLogic` are Conductor's enum values;
/// - `inputSchema` / `outputSchema` are `{name, version ≥ 1, type: "JSON", data}` with `$schema`
///   at the root of `data`;
/// - no `inputTemplate`.
pub fn check(taskdef: &Value) -> Vec<TaskDefError> {
    let task = taskdef
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let Some(map) = taskdef.as_object() else {
        return vec![TaskDefError {
            task,
            field: String::new(),
            message: "a TaskDef is a JSON object".to_owned(),
        }];
    };
    let mut checker = Checker {
        map,
        task,
        errors: Vec::new(),
    };
    checker.no_nulls();
    checker.name();
    checker.owner_email();
    let values = checker.int_fields();
    checker.timeouts(&values);
    checker.enums();
    checker.key_lists_and_flags();
    checker.no_input_template();
    for field in ["inputSchema", "outputSchema"] {
        checker.schema_def(field);
    }
    checker.errors
}

/// [`check`] over one TaskDef object: a method per group of fields, each adding its violations
/// in turn.
struct Checker<'a> {
    map: &'a serde_json::Map<String, Value>,
    /// The TaskDef's name, or `?`: every violation names it.
    task: String,
    errors: Vec<TaskDefError>,
}

impl Checker<'_> {
    fn error(&mut self, field: &str, message: String) {
        self.errors.push(TaskDefError {
            task: self.task.clone(),
            field: field.to_owned(),
            message,
        });
    }

    fn no_nulls(&mut self) {
        for (key, value) in self.map {
            if value.is_null() {
                self.error(
                    key,
                    "is null; omit the field instead (Conductor reads a null number as 0)"
                        .to_owned(),
                );
            }
        }
    }

    fn name(&mut self) {
        match self.map.get("name") {
            Some(Value::String(name)) => {
                if let Err(why) = rules::task_name(name) {
                    self.error("name", why);
                }
            }
            Some(Value::Null) => {}
            _ => self.error("name", "missing; a TaskDef needs a name".to_owned()),
        }
    }

    fn owner_email(&mut self) {
        match self.map.get("ownerEmail") {
            Some(Value::String(email)) => {
                if let Err(why) = rules::owner_email(email) {
                    self.error("ownerEmail", why);
                }
            }
            Some(Value::Null) => {}
            Some(other) => self.error("ownerEmail", format!("must be a string, got {other}")),
            None => self.error(
                "ownerEmail",
                "missing; perago always sets the owner (Conductor may require it)".to_owned(),
            ),
        }
    }

    /// The integer fields of the TaskDef that are present and within their bounds, by field
    /// (the SchemaDefs' `version` is checked with them, in [`Checker::schema_def`]).
    fn int_fields(&mut self) -> HashMap<&'static str, u64> {
        let mut values = HashMap::new();
        for int in rules::INT_FIELDS.iter().filter(|f| f.field != "version") {
            if let Some(v) = self.int_field(int) {
                values.insert(int.field, v);
            }
        }
        values
    }

    /// The value of `int` when it is present and within its bounds.
    fn int_field(&mut self, int: &rules::IntField) -> Option<u64> {
        let field = int.field;
        match self.map.get(field)? {
            Value::Null => None,
            Value::Number(n) => match n.as_u64() {
                Some(v) => match int.check(v) {
                    Ok(()) => Some(v),
                    Err(why) => {
                        self.error(field, why);
                        None
                    }
                },
                None => {
                    self.error(field, format!("{n} must be a whole number ≥ {}", int.min));
                    None
                }
            },
            other => {
                self.error(field, format!("must be a number, got {other}"));
                None
            }
        }
    }

    /// `responseTimeoutSeconds` is present, and the timeouts agree ([`rules::timeouts`]).
    fn timeouts(&mut self, values: &HashMap<&'static str, u64>) {
        if !self.map.contains_key("responseTimeoutSeconds") {
            self.error(
                "responseTimeoutSeconds",
                "missing; perago always sets it (Conductor's default of 3600 exceeds any shorter \
                 timeoutSeconds)"
                    .to_owned(),
            );
        }
        let value = |field: &str| values.get(field).copied();
        for broken in rules::timeouts(
            value("timeoutSeconds"),
            value("responseTimeoutSeconds"),
            value("totalTimeoutSeconds"),
        ) {
            match broken {
                TimeoutRule::ResponseOverTimeout { response, timeout } => self.error(
                    "responseTimeoutSeconds",
                    format!(
                        "{response} must be ≤ timeoutSeconds ({timeout}) when that is > 0 \
                         (Conductor refuses it)"
                    ),
                ),
                TimeoutRule::TimeoutOverTotal { timeout, total } => self.error(
                    "timeoutSeconds",
                    format!(
                        "{timeout} must be ≤ totalTimeoutSeconds ({total}) when both are > 0 \
                         (Conductor refuses it)"
                    ),
                ),
            }
        }
    }

    fn enums(&mut self) {
        for (field, allowed) in [
            ("timeoutPolicy", rules::TIMEOUT_POLICY),
            ("retryLogic", rules::RETRY_LOGIC),
        ] {
            match self.map.get(field) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if allowed.contains(&s.as_str()) => {}
                Some(other) => self.error(
                    field,
                    format!("{other} is not one of {}", allowed.join(", ")),
                ),
            }
        }
    }

    /// `inputKeys` / `outputKeys` are arrays of strings; the flags are booleans.
    fn key_lists_and_flags(&mut self) {
        for field in ["inputKeys", "outputKeys"] {
            match self.map.get(field) {
                None | Some(Value::Null) => {}
                Some(Value::Array(keys)) if keys.iter().all(Value::is_string) => {}
                Some(_) => self.error(field, "must be an array of strings".to_owned()),
            }
        }
        for field in ["enforceSchema", "taskStatusListenerEnabled"] {
            match self.map.get(field) {
                None | Some(Value::Null | Value::Bool(_)) => {}
                Some(_) => self.error(field, "must be true or false".to_owned()),
            }
        }
    }

    fn no_input_template(&mut self) {
        if self.map.contains_key("inputTemplate") {
            self.error(
                "inputTemplate",
                "perago never sets an inputTemplate: defaults are applied by the worker, never \
                 copied into the Conductor input"
                    .to_owned(),
            );
        }
    }

    /// The SchemaDef in `field` (`inputSchema` or `outputSchema`), when there is one.
    fn schema_def(&mut self, field: &str) {
        match self.map.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(schema)) => self.schema_def_fields(field, schema),
            Some(_) => self.error(field, "must be a SchemaDef object".to_owned()),
        }
    }

    fn schema_def_fields(&mut self, field: &str, schema: &serde_json::Map<String, Value>) {
        for (key, value) in schema {
            if value.is_null() {
                self.error(
                    &format!("{field}.{key}"),
                    "is null; omit it instead".to_owned(),
                );
            }
        }
        match schema.get("name") {
            Some(Value::String(n)) if !n.is_empty() => {}
            Some(Value::Null) => {}
            _ => self.error(&format!("{field}.name"), "missing or empty".to_owned()),
        }
        let version = rules::int_field("version");
        match schema.get("version").and_then(Value::as_u64) {
            Some(v) if version.is_some_and(|f| f.check(v).is_ok()) => {}
            _ if schema.get("version").is_some_and(Value::is_null) => {}
            _ => self.error(
                &format!("{field}.version"),
                "must be a whole number ≥ 1 (a version < 1 means \"latest\" to Conductor)"
                    .to_owned(),
            ),
        }
        match schema.get("type") {
            Some(Value::String(t)) if t == "JSON" => {}
            Some(Value::Null) => {}
            _ => self.error(&format!("{field}.type"), "must be \"JSON\"".to_owned()),
        }
        match schema.get("data") {
            Some(Value::Object(data)) if data.get("$schema").is_some_and(Value::is_string) => {}
            Some(Value::Null) => {}
            _ => self.error(
                &format!("{field}.data"),
                "must be a JSON Schema object with `$schema` at its root (without it a \
                 Conductor server validates nothing)"
                    .to_owned(),
            ),
        }
    }
}

/// The pretty-printed JSON of a TaskDef file (2-space indent, trailing newline).
pub fn render(taskdef: &TaskDef) -> String {
    let mut text = serde_json::to_string_pretty(&taskdef.to_json()).unwrap_or_default();
    text.push('\n');
    text
}

/// The settings of a task binary: `--owner-email`, else [`OWNER_EMAIL_ENV`].
pub fn settings_from_env(owner_email: Option<String>) -> Settings {
    Settings {
        owner_email: owner_email.or_else(|| {
            std::env::var(OWNER_EMAIL_ENV)
                .ok()
                .filter(|e| !e.trim().is_empty())
        }),
    }
}

#[cfg(test)]
mod tests;
