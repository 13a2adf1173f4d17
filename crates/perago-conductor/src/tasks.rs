//! The task worker API (`docs/src/reference/conductor.md` §4): batch poll and task result updates.
//!
//! - [`poll_batch`]: `GET /api/tasks/poll/batch/{taskType}?workerid=&domain=&count=&timeout=`;
//!   200 `[]` and 204 both mean "nothing queued". Each polled Task is read leniently
//!   ([`PolledTask::from_json`]): unknown fields are ignored, and one malformed element does
//!   not fail the batch.
//! - [`update`]: `POST /api/tasks` with a [`TaskResult`]; the server answers 200 with the task
//!   id as text. An update of a task that is already terminal is answered 200 and ignored.
//!
//! Both send one request per call: pass a [`Client`] built with [`Retry::NONE`](crate::Retry::NONE) to
//! retry at the call site (the worker does, to log each retry), or any other policy to let the
//! client retry connection errors and 5xx answers itself.

use crate::{Client, Error, Method, path_segment};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::time::Duration;

/// The longest long-poll wait Conductor accepts (`timeout` above 5000 ms is a 400).
pub const MAX_POLL_TIMEOUT: Duration = Duration::from_millis(5000);

/// What one batch poll asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollRequest<'a> {
    /// The task type (the TaskDef name).
    pub task_type: &'a str,
    /// `workerid`: recorded by the server on the polled tasks.
    pub worker_id: &'a str,
    /// `domain`, if the worker polls a task domain.
    pub domain: Option<&'a str>,
    /// `count`: the most tasks to hand out (at least 1).
    pub count: usize,
    /// `timeout`: how long the server may hold the request while the queue is empty (long
    /// poll); cut to [`MAX_POLL_TIMEOUT`].
    pub timeout: Duration,
}

/// `<hostname>-<pid>`: what the Conductor SDKs report (the host name), made unique per process
/// so that several copies on one machine are distinguished.
pub fn default_worker_id() -> String {
    format!("{}-{}", hostname(), std::process::id())
}

/// The machine's host name: `HOSTNAME` / `COMPUTERNAME`, else `/proc/sys/kernel/hostname` or
/// `/etc/hostname`, else `localhost`.
fn hostname() -> String {
    let from_env = ["HOSTNAME", "COMPUTERNAME"]
        .into_iter()
        .filter_map(|var| std::env::var(var).ok());
    let from_files = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .into_iter()
        .filter_map(|path| std::fs::read_to_string(path).ok());
    from_env
        .chain(from_files)
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// One task handed out by a poll, read leniently from Conductor's Task JSON (§4.6).
#[derive(Debug, Clone)]
pub struct PolledTask {
    /// `taskId`.
    pub task_id: String,
    /// `workflowInstanceId`.
    pub workflow_instance_id: String,
    /// `taskType` (else `taskDefName`), when the server sent one.
    pub task_type: Option<String>,
    /// `referenceTaskName`, when present.
    pub reference_task_name: Option<String>,
    /// `inputData` as the server sent it, unparsed: the runtime reads it strictly (a repeated
    /// key is a violation), and a large input is held once, as text. `{}` when absent or null.
    pub input_data: Box<RawValue>,
    /// `responseTimeoutSeconds` when present and positive: the lease a worker must renew.
    pub response_timeout_seconds: Option<u64>,
    /// `pollCount`, when present.
    pub poll_count: Option<u64>,
    /// `retryCount`, when present.
    pub retry_count: Option<u64>,
}

/// A polled element that cannot be run: not an object, or without a `taskId` or
/// `workflowInstanceId` to report to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{reason}")]
pub struct InvalidTask {
    /// What is missing or wrong.
    pub reason: String,
    /// The element as polled (an object's fields but `inputData`).
    pub value: Value,
}

/// What a poll that failed may have left with the server: tasks it handed out to this worker
/// and holds `IN_PROGRESS`, whose input the worker never read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// Nothing: no connection was made, or the server answered with an error status.
    Nothing,
    /// The request reached the server but no answer was read whole (a timeout, a reset, a body
    /// that broke off between tasks): tasks may have been handed out, their ids unknown.
    Unknown,
    /// The answer broke off inside a task: its ids, as far as they were read.
    Task(LostTask),
}

/// A task an answer was handing out when it broke off: its ids, as far as they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LostTask {
    /// `taskId`, if it was read.
    pub task_id: Option<String>,
    /// `workflowInstanceId`, if it was read.
    pub workflow_instance_id: Option<String>,
}

/// A batch poll whose answer could not be read whole.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct PollError {
    /// What failed.
    pub error: Error,
    /// The tasks read whole before the failure: they were handed out and can be run.
    pub received: Vec<Result<PolledTask, InvalidTask>>,
    /// What the failure may have left with the server.
    pub lost: Lost,
    /// The bytes of the body read before the failure.
    pub bytes_read: u64,
}

impl PollError {
    /// A poll that read no task.
    fn new(error: Error) -> PollError {
        let lost = match &error {
            Error::Transport {
                request_sent: true, ..
            } => Lost::Unknown,
            _ => Lost::Nothing,
        };
        PollError {
            error,
            received: Vec::new(),
            lost,
            bytes_read: 0,
        }
    }
}

impl PolledTask {
    /// Reads one element of a poll response. Only `taskId` and `workflowInstanceId` are
    /// required (strings; numbers are accepted and turned into strings); every other field is
    /// optional and ill-typed optional fields are treated as absent.
    pub fn from_json(text: &str) -> Result<PolledTask, InvalidTask> {
        let progress = RefCell::new(Progress::default());
        let mut de = serde_json::Deserializer::from_str(text);
        if let Err(e) = Element(&progress).deserialize(&mut de) {
            return Err(InvalidTask {
                reason: format!("a polled task is not JSON: {e}"),
                value: Value::Null,
            });
        }
        let mut progress = progress.into_inner();
        progress.tasks.pop().unwrap_or_else(|| {
            Err(InvalidTask {
                reason: "a polled task is empty".to_owned(),
                value: Value::Null,
            })
        })
    }

    /// [`PolledTask::from_json`] of a parsed element.
    pub fn from_value(value: &Value) -> Result<PolledTask, InvalidTask> {
        PolledTask::from_json(&value.to_string())
    }
}

/// What the answer's reader has seen: the elements read whole, and the ids of the one being
/// read. Kept outside the deserialiser, so that it survives an error that breaks off the
/// answer.
#[derive(Debug, Default)]
struct Progress {
    tasks: Vec<Result<PolledTask, InvalidTask>>,
    current: Option<LostTask>,
    /// The answer was `null`.
    null: bool,
}

/// The whole answer: an array of tasks, or a single Task object (what the one-task poll
/// endpoint answers) read as a batch of one.
struct Answer<'a>(&'a RefCell<Progress>);

impl<'de> Visitor<'de> for Answer<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of tasks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Element(self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        Element(self.0).visit_map(map)
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.borrow_mut().null = true;
        Ok(())
    }
}

/// One element of the answer, pushed onto the progress when read whole.
struct Element<'a>(&'a RefCell<Progress>);

impl Element<'_> {
    fn invalid(&self, reason: String, value: Value) {
        self.0
            .borrow_mut()
            .tasks
            .push(Err(InvalidTask { reason, value }));
    }

    fn not_an_object<E>(&self, value: Value) -> Result<(), E> {
        self.invalid(
            format!("a polled task must be an object, not {}", kind(&value)),
            value,
        );
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Task object")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.not_an_object(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.not_an_object(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.not_an_object(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.not_an_object(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.not_an_object(Value::from(v))
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.not_an_object(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let value = Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        self.not_an_object(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.borrow_mut().current = Some(LostTask::default());
        // Every field but inputData, for what is logged of an invalid element.
        let mut fields = Map::new();
        let mut input_data = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "inputData" {
                input_data = Some(map.next_value::<Box<RawValue>>()?);
                continue;
            }
            let value: Value = match key.as_str() {
                "taskId"
                | "workflowInstanceId"
                | "taskType"
                | "taskDefName"
                | "referenceTaskName"
                | "responseTimeoutSeconds"
                | "pollCount"
                | "retryCount" => map.next_value()?,
                // Conductor's Task JSON has dozens more fields; none is read.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if let Some(current) = self.0.borrow_mut().current.as_mut() {
                match key.as_str() {
                    "taskId" => current.task_id = id(Some(&value)),
                    "workflowInstanceId" => current.workflow_instance_id = id(Some(&value)),
                    _ => {}
                }
            }
            fields.insert(key, value);
        }
        let task = task_of(&fields, input_data);
        let mut progress = self.0.borrow_mut();
        progress.current = None;
        progress.tasks.push(task);
        Ok(())
    }
}

/// The task of an element's fields.
fn task_of(
    fields: &Map<String, Value>,
    input_data: Option<Box<RawValue>>,
) -> Result<PolledTask, InvalidTask> {
    let (Some(task_id), Some(workflow_instance_id)) = (
        id(fields.get("taskId")),
        id(fields.get("workflowInstanceId")),
    ) else {
        let missing = ["taskId", "workflowInstanceId"]
            .into_iter()
            .filter(|k| id(fields.get(*k)).is_none())
            .collect::<Vec<_>>()
            .join(" and ");
        return Err(InvalidTask {
            reason: format!("a polled task has no {missing}"),
            value: Value::Object(fields.clone()),
        });
    };
    let string = |key: &str| match fields.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let input_data = match input_data {
        Some(raw) if raw.get() != "null" => raw,
        _ => RawValue::from_string("{}".to_owned()).expect("`{}` is JSON"),
    };
    Ok(PolledTask {
        task_type: string("taskType").or_else(|| string("taskDefName")),
        reference_task_name: string("referenceTaskName"),
        response_timeout_seconds: count(fields.get("responseTimeoutSeconds")).filter(|s| *s > 0),
        poll_count: count(fields.get("pollCount")),
        retry_count: count(fields.get("retryCount")),
        task_id,
        workflow_instance_id,
        input_data,
    })
}

/// A task or workflow id: a non-empty string, or a number written as one.
fn id(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A non-negative whole number, from a JSON number (whole or not) or a numeric string.
fn count(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Counts the bytes read and keeps the words of a read error (serde_json keeps only its
/// kind), so that a broken-off answer is reported as what it is: a stall, the size limit, a
/// reset.
struct Counting<'a, R> {
    inner: R,
    client: &'a Client,
    status: u16,
    bytes: u64,
    error: Option<String>,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.bytes += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.error = Some(self.client.describe_body_error(self.status, &e));
                Err(e)
            }
        }
    }
}

/// Batch-polls `request.task_type`, reading the answer as it arrives (each task's `inputData`
/// is kept as text). Returns every element of the answer, each read like
/// [`PolledTask::from_json`]; an empty list for 204 or `[]`. A 200 with an empty body or
/// `null` is not an answer Conductor gives, and is an error saying so.
///
/// When the answer breaks off (a stall, the size limit, a reset, malformed JSON), the
/// [`PollError`] holds the tasks read whole before it, which can still be run, and the ids of
/// the task that was being read, which cannot.
pub fn poll_batch(
    client: &Client,
    request: &PollRequest<'_>,
) -> Result<Vec<Result<PolledTask, InvalidTask>>, Box<PollError>> {
    let path = format!("/api/tasks/poll/batch/{}", path_segment(request.task_type));
    let count = request.count.max(1).to_string();
    let timeout = request
        .timeout
        .min(MAX_POLL_TIMEOUT)
        .as_millis()
        .to_string();
    let mut query: Vec<(&str, &str)> = vec![("workerid", request.worker_id)];
    if let Some(domain) = request.domain {
        query.push(("domain", domain));
    }
    query.push(("count", &count));
    query.push(("timeout", &timeout));
    let url = client.url(&path);
    client
        .get_streaming(&path, &query, |status, body| {
            if status == 204 {
                return Ok(Vec::new());
            }
            read_answer(client, &url, status, body)
        })
        .map_err(|e| Box::new(PollError::new(e)))?
}

fn read_answer(
    client: &Client,
    url: &str,
    status: u16,
    body: &mut dyn Read,
) -> Result<Vec<Result<PolledTask, InvalidTask>>, Box<PollError>> {
    let mut reader = BufReader::with_capacity(
        64 * 1024,
        Counting {
            inner: body,
            client,
            status,
            bytes: 0,
            error: None,
        },
    );
    let decode = |message: String| Error::Decode {
        method: Method::Get,
        url: url.to_owned(),
        status,
        message,
        body: String::new(),
    };
    // The body broke off: the request reached the server.
    let transport = |message: String| Error::Transport {
        method: Method::Get,
        url: url.to_owned(),
        message,
        attempts: 1,
        request_sent: true,
    };
    // An empty body is distinguished from a malformed one.
    loop {
        match reader.fill_buf() {
            Ok([]) => {
                return Err(Box::new(PollError::new(decode(
                    "an empty body is not a poll answer (expected a JSON array of tasks, or 204)"
                        .to_owned(),
                ))));
            }
            Ok(buf) => match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    reader.consume(i);
                    break;
                }
                None => {
                    let n = buf.len();
                    reader.consume(n);
                }
            },
            Err(e) => {
                let message = client.describe_body_error(status, &e);
                return Err(Box::new(PollError::new(transport(message))));
            }
        }
    }
    let progress = RefCell::new(Progress::default());
    let mut de = serde_json::Deserializer::from_reader(&mut reader);
    let read = de
        .deserialize_any(Answer(&progress))
        .and_then(|()| de.end());
    let Progress {
        tasks,
        current,
        null,
    } = progress.into_inner();
    let e = match read {
        Ok(()) if null => {
            return Err(Box::new(PollError::new(decode(
                "null is not a poll answer (expected a JSON array of tasks, or 204)".to_owned(),
            ))));
        }
        Ok(()) => return Ok(tasks),
        Err(e) => e,
    };
    let counting = reader.get_ref();
    let error = match counting.error.clone() {
        Some(message) => transport(message),
        None => decode(e.to_string()),
    };
    Err(Box::new(PollError {
        error,
        received: tasks,
        lost: current.map_or(Lost::Unknown, Lost::Task),
        bytes_read: counting.bytes,
    }))
}

/// Reports `result` with `POST /api/tasks`; returns the body of the answer (the task id).
pub fn update(client: &Client, result: &TaskResult) -> Result<String, Error> {
    client
        .post_json("/api/tasks", &[], result)
        .map(|response| response.body)
}

/// `TaskResult.Status` (§4.4): what a worker may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskResultStatus {
    /// Still running: re-queued after `callbackAfterSeconds` (or, with `extendLease`, a
    /// heartbeat only).
    InProgress,
    /// Failed; Conductor retries it if the TaskDef allows.
    Failed,
    /// Failed; never retried.
    FailedWithTerminalError,
    /// Done.
    Completed,
    /// Canceled.
    Canceled,
}

impl TaskResultStatus {
    /// Conductor's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskResultStatus::InProgress => "IN_PROGRESS",
            TaskResultStatus::Failed => "FAILED",
            TaskResultStatus::FailedWithTerminalError => "FAILED_WITH_TERMINAL_ERROR",
            TaskResultStatus::Completed => "COMPLETED",
            TaskResultStatus::Canceled => "CANCELED",
        }
    }
}

impl fmt::Display for TaskResultStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `TaskExecLog` entry sent with a result (the server overwrites `taskId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskExecLog {
    /// The line.
    pub log: String,
    /// The task's id.
    pub task_id: String,
    /// Epoch milliseconds.
    pub created_time: i64,
}

/// The body of `POST /api/tasks` (§4.5). Optional fields that are unset are left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// The task's workflow (required by the server).
    pub workflow_instance_id: String,
    /// The task (required by the server).
    pub task_id: String,
    /// The outcome.
    pub status: TaskResultStatus,
    /// The task's output: `{workspace, result}` or `{result}` on completion, `{}` otherwise.
    pub output_data: Map<String, Value>,
    /// Why the task did not complete (the server cuts it to 500 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_for_incompletion: Option<String>,
    /// For `IN_PROGRESS`: re-queue after this many seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_after_seconds: Option<i64>,
    /// Who reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    /// Execution log lines (the server keeps at most 10 per update).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<TaskExecLog>,
    /// True: a heartbeat that only renews the task's lease; every other field is ignored.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub extend_lease: bool,
}

impl TaskResult {
    /// A result of `status` for `task`, with empty output and nothing else set.
    pub fn new(task: &PolledTask, status: TaskResultStatus) -> TaskResult {
        TaskResult {
            workflow_instance_id: task.workflow_instance_id.clone(),
            task_id: task.task_id.clone(),
            status,
            output_data: Map::new(),
            reason_for_incompletion: None,
            callback_after_seconds: None,
            worker_id: None,
            logs: Vec::new(),
            extend_lease: false,
        }
    }

    /// The lease extension of `task`: `IN_PROGRESS` with `extendLease: true`.
    pub fn extend_lease(task: &PolledTask, worker_id: &str) -> TaskResult {
        TaskResult {
            worker_id: Some(worker_id.to_owned()),
            extend_lease: true,
            ..TaskResult::new(task, TaskResultStatus::InProgress)
        }
    }

    /// This result from `worker_id`.
    pub fn with_worker_id(mut self, worker_id: &str) -> TaskResult {
        self.worker_id = Some(worker_id.to_owned());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_default_worker_id_names_the_host_and_the_process() {
        let id = default_worker_id();
        assert!(id.ends_with(&format!("-{}", std::process::id())), "{id}");
        assert!(id.len() > format!("-{}", std::process::id()).len(), "{id}");
    }

    #[test]
    fn polled_tasks_are_read_leniently() {
        let task = PolledTask::from_value(&json!({
            "taskId": "t1", "workflowInstanceId": "w1", "taskDefName": "validate_song",
            "inputData": {"params": {"song_id": "x"}}, "responseTimeoutSeconds": 30,
            "pollCount": 2, "retryCount": "1", "unknownField": {"nested": true},
            "workflowTask": {"name": "x"}, "referenceTaskName": 5
        }))
        .unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.task_type.as_deref(), Some("validate_song"));
        assert_eq!(task.reference_task_name, None);
        assert_eq!(task.input_data.get(), r#"{"params":{"song_id":"x"}}"#);
        assert_eq!(task.response_timeout_seconds, Some(30));
        assert_eq!((task.poll_count, task.retry_count), (Some(2), Some(1)));

        let bare = PolledTask::from_value(&json!({"taskId": 7, "workflowInstanceId": "w",
            "inputData": null, "responseTimeoutSeconds": 0}))
        .unwrap();
        assert_eq!(bare.task_id, "7");
        assert_eq!(bare.input_data.get(), "{}");
        assert_eq!(bare.response_timeout_seconds, None);

        let e =
            PolledTask::from_value(&json!({"taskId": "", "inputData": {"big": 1}})).unwrap_err();
        assert_eq!(
            e.reason,
            "a polled task has no taskId and workflowInstanceId"
        );
        assert_eq!(e.value, json!({"taskId": ""}), "inputData is not kept");
        let e = PolledTask::from_value(&json!([1])).unwrap_err();
        assert_eq!(e.reason, "a polled task must be an object, not an array");
    }

    #[test]
    fn input_data_is_kept_as_sent() {
        // A repeated key is the runtime's to reject, at its path: the text is kept as is.
        let text = r#"{"taskId": "t", "workflowInstanceId": "w",
                       "inputData": {"params": {"a": 1, "a": 2}}}"#;
        let task = PolledTask::from_json(text).unwrap();
        assert_eq!(task.input_data.get(), r#"{"params": {"a": 1, "a": 2}}"#);
    }

    /// Answers one request per connection with each of `responses` (the whole answer after
    /// the status line's `HTTP/1.1 `), returning the request lines.
    fn canned_raw(responses: Vec<String>) -> (Client, std::thread::JoinHandle<Vec<String>>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for response in responses {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                lines.push(line.trim_end().to_owned());
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    if header == "\r\n" || header.is_empty() {
                        break;
                    }
                }
                let mut stream = reader.into_inner();
                // The client may have given up (a body over its limit).
                let _ = write!(stream, "HTTP/1.1 {response}");
            }
            lines
        });
        let client = Client::new(&url).unwrap().with_retry(crate::Retry::NONE);
        (client, server)
    }

    fn canned(
        responses: Vec<(&'static str, &'static str)>,
    ) -> (Client, std::thread::JoinHandle<Vec<String>>) {
        canned_raw(
            responses
                .into_iter()
                .map(|(status, body)| {
                    format!(
                        "{status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                })
                .collect(),
        )
    }

    fn request() -> PollRequest<'static> {
        PollRequest {
            task_type: "a b",
            worker_id: "w-1",
            domain: Some("blue"),
            count: 3,
            timeout: Duration::from_secs(60),
        }
    }

    #[test]
    fn poll_answers_204_empty_single_and_malformed() {
        let (client, server) = canned(vec![
            ("204 No Content", ""),
            ("200 OK", "[]"),
            ("200 OK", r#"{"taskId": "t", "workflowInstanceId": "w"}"#),
            ("200 OK", r#"[{"taskId": "t"}, 3]"#),
            ("200 OK", "not json"),
            ("200 OK", ""),
            ("200 OK", " null "),
        ]);
        let request = request();
        assert!(poll_batch(&client, &request).unwrap().is_empty());
        assert!(poll_batch(&client, &request).unwrap().is_empty());
        let single = poll_batch(&client, &request).unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].as_ref().unwrap().task_id, "t");
        let bad = poll_batch(&client, &request).unwrap();
        assert_eq!(bad.len(), 2);
        assert!(bad.iter().all(Result::is_err));
        let e = poll_batch(&client, &request).unwrap_err();
        assert!(matches!(e.error, Error::Decode { .. }), "{e}");
        let e = poll_batch(&client, &request).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "HTTP 200 with a body that is not the expected JSON: an empty body is not a poll \
                 answer (expected a JSON array of tasks, or 204)"
            ),
            "{e}"
        );
        let e = poll_batch(&client, &request).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("null is not a poll answer (expected a JSON array of tasks, or 204)"),
            "{e}"
        );
        assert_eq!(
            server.join().unwrap()[0],
            "GET /api/tasks/poll/batch/a%20b?workerid=w-1&domain=blue&count=3&timeout=5000 HTTP/1.1"
        );
    }

    #[test]
    fn an_answer_that_breaks_off_keeps_what_came_whole_and_names_the_task_it_cut() {
        let whole = r#"{"taskId": "t1", "workflowInstanceId": "w1", "inputData": {"params": {}}}"#;
        let cut = r#"{"workflowInstanceId": "w2", "taskId": "t2", "inputData": {"params": {"song"#;
        let body = format!("[{whole}, {cut}");
        let (client, _server) = canned_raw(vec![format!(
            "200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len() + 1000
        )]);
        let e = poll_batch(&client, &request()).unwrap_err();
        assert_eq!(e.received.len(), 1);
        assert_eq!(e.received[0].as_ref().unwrap().task_id, "t1");
        assert_eq!(
            e.lost,
            Lost::Task(LostTask {
                task_id: Some("t2".into()),
                workflow_instance_id: Some("w2".into())
            })
        );
        assert_eq!(e.bytes_read, body.len() as u64);
        assert!(matches!(e.error, Error::Transport { .. }), "{e}");
    }

    #[test]
    fn an_answer_over_the_limit_is_an_error_naming_it() {
        let body = format!(
            r#"[{{"taskId": "t", "workflowInstanceId": "w", "inputData": {{"x": "{}"}}}}]"#,
            "a".repeat(5000)
        );
        let (client, _server) = canned_raw(vec![format!(
            "200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )]);
        let client = client.with_max_body(1000);
        let e = poll_batch(&client, &request()).unwrap_err();
        assert!(e.received.is_empty());
        // The ids came before the input that broke the limit.
        assert_eq!(
            e.lost,
            Lost::Task(LostTask {
                task_id: Some("t".into()),
                workflow_instance_id: Some("w".into())
            }),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("the answer is larger than the limit of 1000 bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_redirect_is_not_followed_and_says_where_it_points() {
        let (client, _server) = canned_raw(vec![
            "302 Found\r\nLocation: https://login.example/\r\nContent-Length: 0\r\n\r\n".to_owned(),
        ]);
        let e = poll_batch(&client, &request()).unwrap_err();
        assert_eq!(e.error.status(), Some(302));
        assert!(
            e.to_string().ends_with(
                "HTTP 302 (a redirect to https://login.example/; perago does not follow \
                 redirects: give the Conductor server's own URL)"
            ),
            "{e}"
        );
    }

    #[test]
    fn task_results_leave_unset_fields_out() {
        let task =
            PolledTask::from_value(&json!({"taskId": "t", "workflowInstanceId": "w"})).unwrap();
        let failed = TaskResult {
            reason_for_incompletion: Some("no".into()),
            ..TaskResult::new(&task, TaskResultStatus::FailedWithTerminalError)
        }
        .with_worker_id("host-1");
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            json!({"workflowInstanceId": "w", "taskId": "t", "status": "FAILED_WITH_TERMINAL_ERROR",
                   "outputData": {}, "reasonForIncompletion": "no", "workerId": "host-1"})
        );
        assert_eq!(
            serde_json::to_value(TaskResult::extend_lease(&task, "h")).unwrap(),
            json!({"workflowInstanceId": "w", "taskId": "t", "status": "IN_PROGRESS",
                   "outputData": {}, "workerId": "h", "extendLease": true})
        );
    }
}
