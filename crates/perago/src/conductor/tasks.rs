//! The task worker API (spec `conductor.md` §4): batch poll and task result updates.
//!
//! - [`poll_batch`]: `GET /api/tasks/poll/batch/{taskType}?workerid=&domain=&count=&timeout=`;
//!   200 `[]` and 204 both mean "nothing queued". Each polled Task is read leniently
//!   ([`PolledTask::from_value`]): unknown fields are ignored, and one malformed element does
//!   not fail the batch.
//! - [`update`]: `POST /api/tasks` with a [`TaskResult`]; the server answers 200 with the task
//!   id as text. An update of a task that is already terminal is answered 200 and ignored.
//!
//! Both send one request per call: pass a [`Client`] built with [`Retry::NONE`](crate::conductor::Retry::NONE) to
//! retry at the call site (the worker does, to log each retry), or any other policy to let the
//! client retry connection errors and 5xx answers itself.

use crate::conductor::{Client, Error, path_segment};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
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

/// One task handed out by a poll, read leniently from Conductor's Task JSON (§4.6).
#[derive(Debug, Clone, PartialEq)]
pub struct PolledTask {
    /// `taskId`.
    pub task_id: String,
    /// `workflowInstanceId`.
    pub workflow_instance_id: String,
    /// `taskType` (else `taskDefName`), when the server sent one.
    pub task_type: Option<String>,
    /// `referenceTaskName`, when present.
    pub reference_task_name: Option<String>,
    /// `inputData`; `{}` when absent or null.
    pub input_data: Value,
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
    /// The element as polled.
    pub value: Value,
}

impl PolledTask {
    /// Reads one element of a poll response. Only `taskId` and `workflowInstanceId` are
    /// required (strings; numbers are accepted and turned into strings); every other field is
    /// optional and ill-typed optional fields are treated as absent.
    pub fn from_value(value: Value) -> Result<PolledTask, InvalidTask> {
        let Value::Object(mut map) = value else {
            return Err(InvalidTask {
                reason: format!("a polled task must be an object, not {}", kind(&value)),
                value,
            });
        };
        let id = |map: &Map<String, Value>, key: &str| match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let (Some(task_id), Some(workflow_instance_id)) =
            (id(&map, "taskId"), id(&map, "workflowInstanceId"))
        else {
            let missing = ["taskId", "workflowInstanceId"]
                .into_iter()
                .filter(|k| id(&map, k).is_none())
                .collect::<Vec<_>>()
                .join(" and ");
            return Err(InvalidTask {
                reason: format!("a polled task has no {missing}"),
                value: Value::Object(map),
            });
        };
        let string = |map: &Map<String, Value>, key: &str| match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let input_data = match map.remove("inputData") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(other) => other,
        };
        Ok(PolledTask {
            task_type: string(&map, "taskType").or_else(|| string(&map, "taskDefName")),
            reference_task_name: string(&map, "referenceTaskName"),
            response_timeout_seconds: count(map.get("responseTimeoutSeconds")).filter(|s| *s > 0),
            poll_count: count(map.get("pollCount")),
            retry_count: count(map.get("retryCount")),
            task_id,
            workflow_instance_id,
            input_data,
        })
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

/// Batch-polls `request.task_type`. Returns every element of the answer, each read with
/// [`PolledTask::from_value`]; an empty list for 204, an empty body, `null` or `[]`. A single
/// Task object (what the one-task poll endpoint answers) is read as a batch of one.
pub fn poll_batch(
    client: &Client,
    request: &PollRequest<'_>,
) -> Result<Vec<Result<PolledTask, InvalidTask>>, Error> {
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
    let response = client.get(&path, &query)?;
    if response.status == 204 || response.is_empty() {
        return Ok(Vec::new());
    }
    let body: Value = response.json()?;
    Ok(match body {
        Value::Array(items) => items.into_iter().map(PolledTask::from_value).collect(),
        Value::Null => Vec::new(),
        single @ Value::Object(_) => vec![PolledTask::from_value(single)],
        other => vec![Err(InvalidTask {
            reason: format!("a poll answer must be an array, not {}", kind(&other)),
            value: other,
        })],
    })
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

impl From<crate::runtime::TaskStatus> for TaskResultStatus {
    fn from(status: crate::runtime::TaskStatus) -> Self {
        use crate::runtime::TaskStatus;
        match status {
            TaskStatus::Completed => TaskResultStatus::Completed,
            TaskStatus::Failed => TaskResultStatus::Failed,
            TaskStatus::FailedWithTerminalError => TaskResultStatus::FailedWithTerminalError,
        }
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
    fn polled_tasks_are_read_leniently() {
        let task = PolledTask::from_value(json!({
            "taskId": "t1", "workflowInstanceId": "w1", "taskDefName": "validate_song",
            "inputData": {"params": {"song_id": "x"}}, "responseTimeoutSeconds": 30,
            "pollCount": 2, "retryCount": "1", "unknownField": {"nested": true},
            "workflowTask": {"name": "x"}, "referenceTaskName": 5
        }))
        .unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.task_type.as_deref(), Some("validate_song"));
        assert_eq!(task.reference_task_name, None);
        assert_eq!(task.input_data, json!({"params": {"song_id": "x"}}));
        assert_eq!(task.response_timeout_seconds, Some(30));
        assert_eq!((task.poll_count, task.retry_count), (Some(2), Some(1)));

        let bare = PolledTask::from_value(json!({"taskId": 7, "workflowInstanceId": "w",
            "inputData": null, "responseTimeoutSeconds": 0}))
        .unwrap();
        assert_eq!(bare.task_id, "7");
        assert_eq!(bare.input_data, json!({}));
        assert_eq!(bare.response_timeout_seconds, None);

        let e = PolledTask::from_value(json!({"taskId": ""})).unwrap_err();
        assert_eq!(
            e.reason,
            "a polled task has no taskId and workflowInstanceId"
        );
        let e = PolledTask::from_value(json!([1])).unwrap_err();
        assert_eq!(e.reason, "a polled task must be an object, not an array");
    }

    /// Answers one request per connection with each of `responses` (status line and body),
    /// returning the request lines.
    fn canned(
        responses: Vec<(&'static str, &'static str)>,
    ) -> (Client, std::thread::JoinHandle<Vec<String>>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for (status, body) in responses {
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
                write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
            lines
        });
        let client = Client::new(&url)
            .unwrap()
            .with_retry(crate::conductor::Retry::NONE);
        (client, server)
    }

    #[test]
    fn poll_answers_204_empty_single_and_malformed() {
        let (client, server) = canned(vec![
            ("204 No Content", ""),
            ("200 OK", "[]"),
            ("200 OK", r#"{"taskId": "t", "workflowInstanceId": "w"}"#),
            ("200 OK", r#"[{"taskId": "t"}, 3]"#),
            ("200 OK", "not json"),
        ]);
        let request = PollRequest {
            task_type: "a b",
            worker_id: "w-1",
            domain: Some("blue"),
            count: 3,
            timeout: Duration::from_secs(60),
        };
        assert!(poll_batch(&client, &request).unwrap().is_empty());
        assert!(poll_batch(&client, &request).unwrap().is_empty());
        let single = poll_batch(&client, &request).unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].as_ref().unwrap().task_id, "t");
        let bad = poll_batch(&client, &request).unwrap();
        assert_eq!(bad.len(), 2);
        assert!(bad.iter().all(Result::is_err));
        let e = poll_batch(&client, &request).unwrap_err();
        assert!(matches!(e, Error::Decode { .. }), "{e}");
        assert_eq!(
            server.join().unwrap()[0],
            "GET /api/tasks/poll/batch/a%20b?workerid=w-1&domain=blue&count=3&timeout=5000 HTTP/1.1"
        );
    }

    #[test]
    fn task_results_leave_unset_fields_out() {
        let task =
            PolledTask::from_value(json!({"taskId": "t", "workflowInstanceId": "w"})).unwrap();
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
