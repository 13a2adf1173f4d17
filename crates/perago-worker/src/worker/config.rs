//! The worker's settings: [`WorkerConfig`], with defaults for everything but the server URL.

use perago::runtime::RuntimeConfig;
use perago_conductor::tasks::{MAX_POLL_TIMEOUT, default_worker_id};
use perago_conductor::{AuthToken, Backoff, DEFAULT_MAX_BODY_BYTES};
use perago_workspace::Store;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How a worker polls, runs and reports. Build it with [`WorkerConfig::new`] and adjust the
/// public fields; [`crate::worker::Worker::new`] checks it.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The Conductor server root (`http://host:8080`; a trailing `/api` is accepted).
    pub server_url: String,
    /// The Orkes `X-Authorization` token, if the server wants one. Never logged.
    pub auth_token: Option<AuthToken>,
    /// `workerid` on polls and `workerId` on results; default [`default_worker_id`].
    pub worker_id: String,
    /// The task domain to poll, if any.
    pub domain: Option<String>,
    /// Tasks in flight per task type (default 1).
    pub concurrency: usize,
    /// Per task type overrides of [`concurrency`](Self::concurrency).
    pub task_concurrency: BTreeMap<String, usize>,
    /// The task types to serve; empty: every task of the registry.
    pub tasks: Vec<String>,
    /// The pause after a poll that brought nothing (default 100 ms).
    pub poll_interval: Duration,
    /// How long the server may hold a poll while the queue is empty (long poll; default 1 s,
    /// at most 5 s).
    pub poll_timeout: Duration,
    /// The pause after a failed poll: doubles from `initial` up to `max` while the failures
    /// last (default 100 ms to 10 s).
    pub poll_backoff: Backoff,
    /// The waits between attempts to deliver a task result after a connection error, a 5xx or
    /// a 429 (default 250 ms doubling up to 8 s).
    pub update_backoff: Backoff,
    /// How long a task result is retried, from its first attempt (default 30 s): a result
    /// still undelivered then is written whole to the log (`update_failed`).
    pub update_horizon: Duration,
    /// When to renew a task's lease, as a fraction of its `responseTimeoutSeconds` (default
    /// 0.8: a task with a 30 s response timeout gets `extendLease` updates every 24 s).
    pub lease_fraction: f64,
    /// After a shutdown request, how long tasks in flight may run before they are reported
    /// `FAILED` (default 20 s).
    pub shutdown_grace: Duration,
    /// The timeout of one request, on top of the long-poll wait (default 10 s): connecting,
    /// sending, the wait for the answer, and any pause while a body moves. A large body may
    /// take as long as it needs while it keeps arriving (see
    /// [`Client::with_timeout`](perago_conductor::Client::with_timeout)).
    pub request_timeout: Duration,
    /// The largest poll answer read (default 256 MiB). The tasks of a larger answer that were
    /// read whole still run; the one it broke off in is logged as lost.
    pub max_poll_bytes: u64,
    /// The store workspace tasks read and publish to (lakeFS or the local store); required
    /// when a workspace task is served.
    pub store: Option<Arc<dyn Store>>,
    /// The runtime's settings (the `reasonForIncompletion` limit).
    pub runtime: RuntimeConfig,
    /// Where to serve `/metrics`, `/healthz` and `/readyz` (port 0: any free port,
    /// [`crate::worker::Worker::metrics_addr`] says which); `None` (the default): no metrics.
    pub metrics_listen: Option<SocketAddr>,
}

impl WorkerConfig {
    /// The defaults, against `server_url`.
    pub fn new(server_url: impl Into<String>) -> WorkerConfig {
        WorkerConfig {
            server_url: server_url.into(),
            auth_token: None,
            worker_id: default_worker_id(),
            domain: None,
            concurrency: 1,
            task_concurrency: BTreeMap::new(),
            tasks: Vec::new(),
            poll_interval: Duration::from_millis(100),
            poll_timeout: Duration::from_secs(1),
            poll_backoff: Backoff {
                initial: Duration::from_millis(100),
                max: Duration::from_secs(10),
            },
            update_backoff: Backoff {
                initial: Duration::from_millis(250),
                max: Duration::from_secs(8),
            },
            update_horizon: Duration::from_secs(30),
            lease_fraction: 0.8,
            shutdown_grace: Duration::from_secs(20),
            request_timeout: Duration::from_secs(10),
            max_poll_bytes: DEFAULT_MAX_BODY_BYTES,
            store: None,
            runtime: RuntimeConfig::default(),
            metrics_listen: None,
        }
    }

    /// The concurrency of `task_type`: its override, else [`concurrency`](Self::concurrency).
    pub fn concurrency_of(&self, task_type: &str) -> usize {
        self.task_concurrency
            .get(task_type)
            .copied()
            .unwrap_or(self.concurrency)
    }

    /// The problems that stop a worker from starting (the task list is checked against the
    /// registry by the worker).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.worker_id.trim().is_empty() {
            return Err("the worker id must not be empty".to_owned());
        }
        if self.concurrency == 0 {
            return Err("the concurrency must be at least 1".to_owned());
        }
        if let Some((name, _)) = self.task_concurrency.iter().find(|(_, n)| **n == 0) {
            return Err(format!("the concurrency of {name} must be at least 1"));
        }
        if self.poll_timeout > MAX_POLL_TIMEOUT {
            return Err(format!(
                "the poll timeout must be at most {} (Conductor refuses longer polls), got {}",
                humantime::format_duration(MAX_POLL_TIMEOUT),
                humantime::format_duration(self.poll_timeout)
            ));
        }
        if !(self.lease_fraction > 0.0 && self.lease_fraction < 1.0) {
            return Err(format!(
                "the lease fraction must be between 0 and 1, got {}",
                self.lease_fraction
            ));
        }
        if self.request_timeout.is_zero() {
            return Err("the request timeout must be more than 0".to_owned());
        }
        if self.max_poll_bytes == 0 {
            return Err("the poll answer limit must be more than 0 bytes".to_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        let ok = WorkerConfig::new("http://h");
        assert_eq!(ok.check(), Ok(()));
        let mut c = ok.clone();
        c.poll_timeout = Duration::from_millis(5001);
        assert_eq!(
            c.check().unwrap_err(),
            "the poll timeout must be at most 5s (Conductor refuses longer polls), got 5s 1ms"
        );
        let mut c = ok.clone();
        c.task_concurrency.insert("a".into(), 0);
        assert_eq!(
            c.check().unwrap_err(),
            "the concurrency of a must be at least 1"
        );
        assert!(!format!("{:?}", AuthToken::new("s3cret")).contains("s3cret"));
    }
}
