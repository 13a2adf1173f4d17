//! The gateway's settings.

use crate::auth::BearerToken;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The default listening address: loopback only; put a TLS-terminating proxy in front to serve
/// agents elsewhere.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8642";

/// The default database file, in the working directory.
pub const DEFAULT_DB: &str = "perago-gateway.db";

/// The default limit of a request body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;

/// A task type the gateway serves and how many of its tasks agents may hold at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskTypeSlots {
    /// The Conductor task type.
    pub name: String,
    /// Claims held at once (≥ 1).
    pub slots: usize,
}

impl TaskTypeSlots {
    /// The slots of a type when `NAME` is given without `=SLOTS`.
    pub const DEFAULT_SLOTS: usize = 1;

    /// Reads `NAME` or `NAME=SLOTS` (the `--task-type` flag).
    pub fn parse(text: &str) -> Result<TaskTypeSlots, String> {
        let (name, slots) = match text.split_once('=') {
            None => (text.trim(), TaskTypeSlots::DEFAULT_SLOTS),
            Some((name, slots)) => {
                let slots = match slots.trim().parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        return Err(format!(
                            "--task-type {text:?}: SLOTS must be a positive integer"
                        ));
                    }
                };
                (name.trim(), slots)
            }
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "--task-type {text:?}: a task type is [A-Za-z0-9_]+ (a Conductor TaskDef name)"
            ));
        }
        Ok(TaskTypeSlots {
            name: name.to_owned(),
            slots,
        })
    }
}

/// Everything the gateway needs to run.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The Conductor server root.
    pub conductor_url: String,
    /// `X-Authorization` for Orkes servers (`CONDUCTOR_AUTH_TOKEN`).
    pub conductor_token: Option<String>,
    /// The task types served, each with its slots (at least one; no name twice).
    pub task_types: Vec<TaskTypeSlots>,
    /// Where to listen (port 0: any free port; [`crate::Gateway::local_addr`] says which).
    pub listen: SocketAddr,
    /// The SQLite database: the ledger, audit trail and outbox.
    pub db: PathBuf,
    /// How durable a commit is before it is answered (default: on disk).
    pub durability: crate::ledger::Durability,
    /// The agents' token.
    pub token: BearerToken,
    /// This gateway's id, sent to Conductor as `workerid` / `workerId` (followed by
    /// `/<agent_id>` for the agent that holds the task).
    pub worker_id: String,
    /// A claim's lease when shorter than the task's `responseTimeoutSeconds` (which is
    /// Conductor's lease, and the default).
    pub lease: Option<Duration>,
    /// The longest request body; more is 413.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's head, and its body: past it, 408 (or
    /// the connection is closed, for a head that never ends).
    pub request_timeout: Duration,
    /// How long a claim waits for a task (Conductor's long poll; at most 5 s).
    pub poll_timeout: Duration,
    /// Conductor's timeout for one request of the gateway's.
    pub conductor_timeout: Duration,
    /// The most UTF-16 code units of `reasonForIncompletion` (`PERAGO_FAILURE_REASON_MAX_LENGTH`).
    pub reason_max_length: usize,
    /// How often claims are checked for lapsed leases.
    pub lease_check_interval: Duration,
    /// Where to serve `/metrics`, `/healthz` and `/readyz` (port 0: any free port,
    /// [`crate::Gateway::metrics_addr`] says which); `None` (the default): no metrics.
    pub metrics_listen: Option<SocketAddr>,
}

impl GatewayConfig {
    /// The defaults for everything but the server, the task types and the token.
    pub fn new(
        conductor_url: &str,
        task_types: Vec<TaskTypeSlots>,
        token: BearerToken,
    ) -> GatewayConfig {
        GatewayConfig {
            conductor_url: conductor_url.to_owned(),
            conductor_token: None,
            task_types,
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            db: PathBuf::from(DEFAULT_DB),
            durability: crate::ledger::Durability::Full,
            token,
            worker_id: perago_conductor::tasks::default_worker_id(),
            lease: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            request_timeout: Duration::from_secs(10),
            poll_timeout: Duration::from_millis(500),
            conductor_timeout: Duration::from_secs(10),
            reason_max_length: perago::runtime::DEFAULT_REASON_MAX_LENGTH,
            lease_check_interval: Duration::from_millis(200),
            metrics_listen: None,
        }
    }

    /// The settings that cannot work, each said: no task type, a type named twice.
    pub fn check(&self) -> Result<(), String> {
        if self.task_types.is_empty() {
            return Err("no task type: give --task-type NAME[=SLOTS] at least once".into());
        }
        for (i, t) in self.task_types.iter().enumerate() {
            if self.task_types[..i].iter().any(|u| u.name == t.name) {
                return Err(format!("--task-type {} is given twice", t.name));
            }
        }
        if self.max_body_bytes == 0 {
            return Err("--max-body-bytes must be at least 1 byte".into());
        }
        if self.request_timeout.is_zero() {
            return Err("--request-timeout must be longer than 0".into());
        }
        if self.lease.is_some_and(|l| l < Duration::from_millis(1)) {
            return Err("--lease must be at least 1ms".into());
        }
        Ok(())
    }

    /// The slots of `task_type`, when it is served.
    pub fn slots(&self, task_type: &str) -> Option<usize> {
        self.task_types
            .iter()
            .find(|t| t.name == task_type)
            .map(|t| t.slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_types_parse() {
        assert_eq!(
            TaskTypeSlots::parse("agent_task=4").unwrap(),
            TaskTypeSlots {
                name: "agent_task".into(),
                slots: 4
            }
        );
        assert_eq!(TaskTypeSlots::parse("a").unwrap().slots, 1);
        for bad in ["", "a=0", "a=x", "a b=2", "=3", "a-b"] {
            assert!(TaskTypeSlots::parse(bad).is_err(), "{bad}");
        }
    }
}
