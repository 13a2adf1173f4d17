//! The gateway's JSON Lines log (standard error by default): one record per event, with
//! `time` (RFC 3339, UTC) and `event`. The agents' token never appears in it.
//!
//! Events: `gateway_started` (with the address it listens on), `metrics_listening` (with
//! `--metrics-listen`: the address of `/metrics`, `/healthz` and `/readyz`), `poll_error`,
//! `task_left_in_progress` (a task a claim's poll may have left with Conductor unrecorded),
//! `lease_expired`, `lease_extension_failed`, `update_delivered`, `delivery_retry`,
//! `delivery_rejected`,
//! `log_dropped`, `internal_error`, `gateway_stopped`.

use perago::log::{JsonLines, rfc3339_now};
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Arc;

/// Where the log goes: cheap to clone, shared by every part of the gateway.
#[derive(Clone)]
pub struct EventLog {
    out: Arc<JsonLines<Box<dyn Write + Send>>>,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventLog")
    }
}

impl EventLog {
    /// A log written to `out`.
    pub fn to(out: Box<dyn Write + Send>) -> EventLog {
        EventLog {
            out: Arc::new(JsonLines::new(out)),
        }
    }

    /// A log on standard error.
    pub fn stderr() -> EventLog {
        EventLog::to(Box::new(std::io::stderr()))
    }

    /// A log that keeps nothing.
    pub fn discard() -> EventLog {
        EventLog::to(Box::new(std::io::sink()))
    }

    /// Writes `event` with `fields` (an object; anything else is put under `detail`). A log
    /// that cannot be written is said on standard error, and the gateway goes on.
    pub fn event(&self, event: &str, fields: Value) {
        let mut record = Map::new();
        record.insert("time".into(), rfc3339_now().into());
        record.insert("event".into(), event.into());
        match fields {
            Value::Object(map) => record.extend(map),
            Value::Null => {}
            other => {
                record.insert("detail".into(), other);
            }
        }
        if let Err(e) = self.out.write(&record) {
            let _ = writeln!(
                std::io::stderr(),
                "perago gateway: cannot write its log: {e}"
            );
        }
    }
}
