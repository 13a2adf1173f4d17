//! The JSON Lines log: one JSON object per line, each written whole. The runtime's record of a
//! task outcome is [`TaskRecord`]; the worker writes its own events through the same
//! [`JsonLines`] writer.

use crate::runtime::{Failure, RuntimeTaskResult, TaskStatus};
use serde::Serialize;
use serde_json::Value;
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
    /// The record of one execution (`task_id` and `workflow_id` are `None` for local runs),
    /// stamped with the current time.
    pub fn of(
        result: &RuntimeTaskResult,
        task_type: &str,
        task_id: Option<&str>,
        workflow_id: Option<&str>,
    ) -> TaskRecord {
        TaskRecord::new(
            task_type,
            task_id,
            workflow_id,
            result.status(),
            result.reason().map(str::to_owned),
            result.failure().cloned(),
        )
    }

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

/// The longest line [`JsonLines::write`] writes by default.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

/// Strings and lists longer than this are cut when a line must be shortened.
const MAX_SHORTENED_STRING: usize = 4096;
const MAX_SHORTENED_ITEMS: usize = 100;

/// A JSON Lines writer shared between threads: each record is serialised first, then written
/// as one line under a lock and flushed, so lines never interleave.
///
/// A line is at most [`DEFAULT_MAX_LINE_BYTES`] bytes (or as set by
/// [`with_max_line`](Self::with_max_line)): a longer record has its long strings and lists cut
/// and gets `"truncated": {"original_bytes": N}`, or, if that is not enough, keeps only its
/// short top-level fields. [`write_whole`](Self::write_whole) is for the one record
/// that must never be cut: a result that exists nowhere else.
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: Mutex<W>,
    max_line: usize,
}

impl<W: Write> JsonLines<W> {
    /// Writes to `out`, lines of at most [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines {
            out: Mutex::new(out),
            max_line: DEFAULT_MAX_LINE_BYTES,
        }
    }

    /// This writer with lines of at most `bytes`.
    pub fn with_max_line(mut self, bytes: usize) -> JsonLines<W> {
        self.max_line = bytes;
        self
    }

    /// Appends `record` as one line, shortened to the line limit.
    pub fn write<T: Serialize + ?Sized>(&self, record: &T) -> io::Result<()> {
        let line = serde_json::to_vec(record).map_err(io::Error::other)?;
        if line.len() <= self.max_line {
            return self.put(line);
        }
        let mut value = serde_json::to_value(record).map_err(io::Error::other)?;
        self.put(shortened(&mut value, line.len(), self.max_line)?)
    }

    /// Appends `record` as one line, whatever its length.
    pub fn write_whole<T: Serialize + ?Sized>(&self, record: &T) -> io::Result<()> {
        self.put(serde_json::to_vec(record).map_err(io::Error::other)?)
    }

    fn put(&self, mut line: Vec<u8>) -> io::Result<()> {
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

/// A record of `original` bytes made to fit in `max`: its long strings and lists cut, else
/// only its short top-level fields.
fn shortened(value: &mut Value, original: usize, max: usize) -> io::Result<Vec<u8>> {
    let mark = |value: &mut Value| {
        if let Value::Object(map) = value {
            map.insert(
                "truncated".to_owned(),
                serde_json::json!({ "original_bytes": original }),
            );
        }
    };
    shorten(value);
    mark(value);
    let line = serde_json::to_vec(value).map_err(io::Error::other)?;
    if line.len() <= max {
        return Ok(line);
    }
    if let Value::Object(map) = value {
        map.retain(|_, v| match v {
            Value::String(s) => s.len() <= 256,
            Value::Array(_) | Value::Object(_) => false,
            _ => true,
        });
    }
    mark(value);
    serde_json::to_vec(value).map_err(io::Error::other)
}

fn shorten(value: &mut Value) {
    match value {
        Value::String(s) if s.len() > MAX_SHORTENED_STRING => {
            let cut = (0..=MAX_SHORTENED_STRING)
                .rev()
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(0);
            let more = s.len() - cut;
            s.truncate(cut);
            s.push_str(&format!("… ({more} more bytes)"));
        }
        Value::Array(items) => {
            if items.len() > MAX_SHORTENED_ITEMS {
                let more = items.len() - MAX_SHORTENED_ITEMS;
                items.truncate(MAX_SHORTENED_ITEMS);
                items.push(Value::String(format!("… ({more} more items)")));
            }
            items.iter_mut().for_each(shorten);
        }
        Value::Object(map) => {
            if map.len() > MAX_SHORTENED_ITEMS {
                let more = map.len() - MAX_SHORTENED_ITEMS;
                let mut kept = 0;
                map.retain(|_, _| {
                    kept += 1;
                    kept <= MAX_SHORTENED_ITEMS
                });
                map.insert("…".to_owned(), Value::String(format!("{more} more fields")));
            }
            map.values_mut().for_each(shorten);
        }
        _ => {}
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

    #[test]
    fn long_lines_are_shortened_to_the_limit() {
        let log = JsonLines::new(Vec::new()).with_max_line(20_000);
        let record = serde_json::json!({
            "event": "x",
            "long": "é".repeat(10_000),
            "list": (0..1000).collect::<Vec<_>>(),
            "wide": (0..1000).map(|i| (i.to_string(), Value::from(i))).collect::<serde_json::Map<_, _>>(),
        });
        log.write(&record).unwrap();
        let text = String::from_utf8(log.into_inner()).unwrap();
        assert!(text.len() <= 20_001, "{}", text.len());
        let line: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(line["event"], "x");
        assert!(
            line["long"]
                .as_str()
                .unwrap()
                .ends_with("… (15904 more bytes)")
        );
        assert_eq!(line["list"].as_array().unwrap().len(), 101);
        assert_eq!(line["list"][100], "… (900 more items)");
        assert_eq!(line["wide"]["…"], "900 more fields");
        assert!(line["truncated"]["original_bytes"].as_u64().unwrap() > 20_000);

        // Too long even then: only the short top-level fields stay.
        let log = JsonLines::new(Vec::new()).with_max_line(200);
        log.write(&record).unwrap();
        let line: Value = serde_json::from_slice(&log.into_inner()).unwrap();
        assert_eq!(line.as_object().unwrap().len(), 2, "{line}");
        assert_eq!(line["event"], "x");

        // A record that must stay whole does.
        let log = JsonLines::new(Vec::new()).with_max_line(200);
        log.write_whole(&record).unwrap();
        assert!(log.into_inner().len() > 20_000);
    }
}
