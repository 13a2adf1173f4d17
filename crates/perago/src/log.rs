//! The JSON Lines log: one JSON object per line, each written whole. The runtime's record of a
//! task outcome is [`TaskRecord`]; the worker writes its own events through the same
//! [`JsonLines`] writer.

use crate::runtime::{Failure, TaskStatus};
use serde::Serialize;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::SystemTime;

/// The log record of one task execution: what Conductor got (status, cut reason) and the full
/// detail it did not (every violation, the error chain, the panic message).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    /// When, RFC 3339 in UTC with milliseconds: `2026-11-30T12:00:00.000Z`.
    pub time: String,
    /// Always `task_result`, telling these records from the worker's own events.
    pub event: &'static str,
    /// The task type (the task's name).
    pub task_type: String,
    /// Conductor's task id; `None` for a local run.
    pub task_id: Option<String>,
    /// Conductor's workflow instance id; `None` for a local run.
    pub workflow_id: Option<String>,
    /// The status reported.
    pub status: TaskStatus,
    /// The `reasonForIncompletion` reported (cut to the configured length).
    pub reason: Option<String>,
    /// The full detail of a failure.
    pub detail: Option<Failure>,
}

impl TaskRecord {
    /// A record stamped with the current time.
    pub fn new(
        task_type: &str,
        task_id: Option<&str>,
        workflow_id: Option<&str>,
        status: TaskStatus,
        reason: Option<String>,
        detail: Option<Failure>,
    ) -> TaskRecord {
        TaskRecord {
            time: rfc3339_now(),
            event: "task_result",
            task_type: task_type.to_owned(),
            task_id: task_id.map(str::to_owned),
            workflow_id: workflow_id.map(str::to_owned),
            status,
            reason,
            detail,
        }
    }
}

/// The current time, RFC 3339 in UTC with milliseconds.
pub fn rfc3339_now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// A JSON Lines writer shared between threads: each record is serialised first, then written
/// as one line under a lock and flushed, so lines never interleave.
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: Mutex<W>,
}

impl<W: Write> JsonLines<W> {
    /// Writes to `out`.
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines {
            out: Mutex::new(out),
        }
    }

    /// Appends `record` as one line.
    pub fn write<T: Serialize + ?Sized>(&self, record: &T) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        out.write_all(&line)?;
        out.flush()
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_rfc3339_utc_with_millis() {
        let t = rfc3339_now();
        assert_eq!(t.len(), "2026-11-30T12:00:00.000Z".len(), "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }

    #[test]
    fn one_record_per_line() {
        let log = JsonLines::new(Vec::new());
        log.write(&serde_json::json!({"a": "x\ny"})).unwrap();
        log.write(&serde_json::json!({"b": 2})).unwrap();
        let text = String::from_utf8(log.into_inner()).unwrap();
        assert_eq!(text, "{\"a\":\"x\\ny\"}\n{\"b\":2}\n");
    }
}
