//! `worker [--conductor-url URL] [--concurrency N] [--task-concurrency TASK=N]... [--task TASK]...
//! [--domain D] [--worker-id ID] [--poll-interval D] [--poll-timeout D] [--request-timeout D]
//! [--update-retry-horizon D] [--max-poll-bytes SIZE] [--shutdown-grace D]
//! [--store DIR | --lakefs-endpoint URL ...] [--log FILE] [--metrics-listen ADDR]`: serve the binary's tasks against a Conductor server
//! until SIGINT or SIGTERM (see [`crate::worker`]).
//!
//! Every flag has an environment variable; a flag wins over its variable. The auth token is
//! read from `CONDUCTOR_AUTH_TOKEN` only, never from the command line, and never logged.
//!
//! Exit status: 0 after a graceful shutdown; 1 when a task result was lost (neither delivered
//! nor logged: it was written to standard error and the worker stopped polling); 2 on a
//! configuration error; 128 + the signal's number after a second SIGINT or SIGTERM.

use super::{CommandError, EXIT_FAILED, EXIT_OK, open_log};
use crate::worker::{AuthToken, Worker, WorkerConfig};
use perago::runtime::RuntimeConfig;
use perago::task::Registry;
use std::path::PathBuf;
use std::time::Duration;

/// The arguments of `worker`.
#[derive(Debug, Default, clap::Args)]
pub struct WorkerArgs {
    /// The Conductor server, e.g. http://localhost:8080 (a trailing /api is accepted)
    /// [env: CONDUCTOR_SERVER_URL]
    #[arg(long, value_name = "URL")]
    pub conductor_url: Option<String>,
    /// Tasks in flight per task type (default 1) [env: PERAGO_WORKER_CONCURRENCY]
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// The concurrency of one task type, overriding --concurrency; repeatable
    /// [env: PERAGO_WORKER_TASK_CONCURRENCY, comma-separated]
    #[arg(long, value_name = "TASK=N")]
    pub task_concurrency: Vec<String>,
    /// Serve only this task; repeatable (default: every task of the binary)
    /// [env: PERAGO_WORKER_TASKS, comma-separated]
    #[arg(long = "task", value_name = "TASK")]
    pub tasks: Vec<String>,
    /// The task domain to poll [env: PERAGO_WORKER_DOMAIN]
    #[arg(long, value_name = "DOMAIN")]
    pub domain: Option<String>,
    /// The worker id reported to Conductor (default: hostname-pid) [env: PERAGO_WORKER_ID]
    #[arg(long, value_name = "ID")]
    pub worker_id: Option<String>,
    /// The pause after a poll that brought nothing (default 100ms) [env: PERAGO_WORKER_POLL_INTERVAL]
    #[arg(long, value_name = "DURATION")]
    pub poll_interval: Option<String>,
    /// How long the server may hold a poll open, at most 5s (default 1s)
    /// [env: PERAGO_WORKER_POLL_TIMEOUT]
    #[arg(long, value_name = "DURATION")]
    pub poll_timeout: Option<String>,
    /// The timeout of a request to Conductor, on top of the poll wait: connecting, the wait
    /// for an answer, any pause while a body moves; a large body may take as long as it keeps
    /// arriving (default 10s) [env: PERAGO_WORKER_REQUEST_TIMEOUT]
    #[arg(long, value_name = "DURATION")]
    pub request_timeout: Option<String>,
    /// How long a task result is retried while Conductor fails before it is written to the
    /// log instead (default 30s) [env: PERAGO_WORKER_UPDATE_RETRY_HORIZON]
    #[arg(long, value_name = "DURATION")]
    pub update_retry_horizon: Option<String>,
    /// The largest poll answer read, e.g. 256MiB (the default) or 1GB
    /// [env: PERAGO_WORKER_MAX_POLL_BYTES]
    #[arg(long, value_name = "SIZE")]
    pub max_poll_bytes: Option<String>,
    /// After SIGINT/SIGTERM, how long tasks in flight may still run (default 20s)
    /// [env: PERAGO_WORKER_SHUTDOWN_GRACE]
    #[arg(long, value_name = "DURATION")]
    pub shutdown_grace: Option<String>,
    /// Where workspace tasks find their repositories.
    #[command(flatten)]
    pub store: super::store::StoreArgs,
    /// Append the JSON Lines log to FILE instead of standard error [env: PERAGO_WORKER_LOG]
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Serve Prometheus metrics (GET /metrics) and the probes GET /healthz and GET /readyz
    /// at ADDR, e.g. 0.0.0.0:9464 (port 0: any free port, logged as metrics_listening);
    /// off unless given [env: PERAGO_METRICS_LISTEN]
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
}

impl WorkerArgs {
    /// The worker's settings: each flag, else its environment variable (through `lookup`),
    /// else the default. `Err` names the bad flag or variable.
    pub fn config(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<WorkerConfig, String> {
        let env = |var: &str| lookup(var).filter(|v| !v.trim().is_empty());
        let setting = |flag: &Option<String>, var: &str| -> Option<(String, String)> {
            match flag {
                Some(value) => Some((format!("--{}", flag_name(var)), value.clone())),
                None => env(var).map(|value| (var.to_owned(), value)),
            }
        };
        let server = super::server_url(self.conductor_url.as_deref(), &lookup)?;
        let mut config = WorkerConfig::new(server);
        config.runtime = RuntimeConfig::from_lookup(&lookup).map_err(|e| e.to_string())?;
        config.auth_token = env(perago_conductor::AUTH_TOKEN_ENV).map(|t| AuthToken::new(t.trim()));
        if let Some((_, id)) = setting(&self.worker_id, "PERAGO_WORKER_ID") {
            config.worker_id = id.trim().to_owned();
        }
        config.domain = setting(&self.domain, "PERAGO_WORKER_DOMAIN").map(|(_, d)| d);
        let concurrency = self.concurrency.map(|n| n.to_string());
        if let Some((name, value)) = setting(&concurrency, "PERAGO_WORKER_CONCURRENCY") {
            config.concurrency = positive(&name, &value)?;
        }
        let (name, overrides) = list(&self.task_concurrency, "--task-concurrency", || {
            env("PERAGO_WORKER_TASK_CONCURRENCY").map(|v| ("PERAGO_WORKER_TASK_CONCURRENCY", v))
        });
        for item in overrides {
            let Some((task, n)) = item.split_once('=') else {
                return Err(format!("{name}: expected TASK=N, got {item:?}"));
            };
            config
                .task_concurrency
                .insert(task.trim().to_owned(), positive(&name, n)?);
        }
        config.tasks = list(&self.tasks, "--task", || {
            env("PERAGO_WORKER_TASKS").map(|v| ("PERAGO_WORKER_TASKS", v))
        })
        .1;
        for (flag, var, field) in [
            (
                &self.poll_interval,
                "PERAGO_WORKER_POLL_INTERVAL",
                &mut config.poll_interval,
            ),
            (
                &self.poll_timeout,
                "PERAGO_WORKER_POLL_TIMEOUT",
                &mut config.poll_timeout,
            ),
            (
                &self.request_timeout,
                "PERAGO_WORKER_REQUEST_TIMEOUT",
                &mut config.request_timeout,
            ),
            (
                &self.update_retry_horizon,
                "PERAGO_WORKER_UPDATE_RETRY_HORIZON",
                &mut config.update_horizon,
            ),
            (
                &self.shutdown_grace,
                "PERAGO_WORKER_SHUTDOWN_GRACE",
                &mut config.shutdown_grace,
            ),
        ] {
            if let Some((name, value)) = setting(flag, var) {
                *field = duration(&name, &value)?;
            }
        }
        if let Some((name, value)) = setting(&self.max_poll_bytes, "PERAGO_WORKER_MAX_POLL_BYTES") {
            config.max_poll_bytes =
                perago_schema::input::parse_size(&value).map_err(|e| format!("{name}: {e}"))?;
        }
        let metrics = match &self.metrics_listen {
            Some(value) => Some(("--metrics-listen", value.clone())),
            None => env(METRICS_LISTEN_ENV).map(|v| (METRICS_LISTEN_ENV, v)),
        };
        if let Some((name, value)) = metrics {
            config.metrics_listen = Some(listen_address(name, &value)?);
        }
        Ok(config)
    }

    /// Whether a task the worker serves is a workspace task.
    fn serves_workspace_tasks(&self, registry: &Registry, config: &WorkerConfig) -> bool {
        registry.iter().any(|t| {
            t.workspace().is_some()
                && (config.tasks.is_empty() || config.tasks.iter().any(|n| n == t.name))
        })
    }
}

/// The variable of `--metrics-listen`, for the worker and `perago gateway` alike.
pub const METRICS_LISTEN_ENV: &str = "PERAGO_METRICS_LISTEN";

/// An address to listen on: `IP:PORT` (`0.0.0.0:9464`, `[::1]:9464`) or `HOST:PORT`
/// (`localhost:9464`, resolved now). `Err` names the flag or variable.
pub fn listen_address(name: &str, value: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let value = value.trim();
    let expected = || {
        format!(
            "{name}: expected an address to listen on such as 127.0.0.1:9464, 0.0.0.0:9464 or              localhost:9464, got {value:?}"
        )
    };
    if let Ok(addr) = value.parse() {
        return Ok(addr);
    }
    // A host name needs a port, and the port a number: say so before the resolver would.
    match value.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {}
        _ => return Err(expected()),
    }
    value
        .to_socket_addrs()
        .map_err(|e| format!("{} ({e})", expected()))?
        .next()
        .ok_or_else(expected)
}

/// `PERAGO_WORKER_POLL_TIMEOUT` → `poll-timeout`.
fn flag_name(var: &str) -> String {
    var.trim_start_matches("PERAGO_WORKER_")
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// The flag's values, else the variable's comma-separated items; with the name to blame.
fn list(
    flag: &[String],
    flag_name: &str,
    env: impl FnOnce() -> Option<(&'static str, String)>,
) -> (String, Vec<String>) {
    if !flag.is_empty() {
        return (flag_name.to_owned(), flag.to_vec());
    }
    match env() {
        Some((var, value)) => (
            var.to_owned(),
            value
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        None => (flag_name.to_owned(), Vec::new()),
    }
}

fn positive(name: &str, value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{name}: expected a positive integer, got {value:?}"
        )),
    }
}

fn duration(name: &str, value: &str) -> Result<Duration, String> {
    humantime::parse_duration(value.trim()).map_err(|e| {
        format!("{name}: expected a duration such as 100ms or 5s, got {value:?} ({e})")
    })
}

/// Runs the worker until SIGINT or SIGTERM; `Err` is a usage or configuration error.
pub fn run(registry: &Registry, args: &WorkerArgs) -> Result<u8, CommandError> {
    let lookup = |var: &str| std::env::var(var).ok();
    let mut config = args.config(lookup)?;
    if args.serves_workspace_tasks(registry, &config) {
        config.store = Some(args.store.choose(lookup)?.open()?);
    }
    let log = match &args.log {
        Some(path) => Worker::log_to(open_log(path)?),
        None => match std::env::var("PERAGO_WORKER_LOG") {
            Ok(path) if !path.trim().is_empty() => Worker::log_to(
                open_log(path.trim().as_ref()).map_err(|e| format!("PERAGO_WORKER_LOG {e}"))?,
            ),
            _ => Worker::stderr_log(),
        },
    };
    let worker = Worker::new(registry, config, log).map_err(|e| e.to_string())?;
    signals::install(worker.shutdown_handle())?;
    let summary = worker.run();
    Ok(if summary.lost > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

#[cfg(unix)]
mod signals {
    use crate::worker::ShutdownHandle;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    /// The first SIGINT or SIGTERM shuts the worker down gracefully; a second one logs the
    /// tasks in flight (left `IN_PROGRESS` on the server) and exits at once with 128 + the
    /// signal's number.
    pub(super) fn install(handle: ShutdownHandle) -> Result<(), String> {
        let mut signals = Signals::new([SIGINT, SIGTERM])
            .map_err(|e| format!("cannot handle SIGINT and SIGTERM: {e}"))?;
        std::thread::Builder::new()
            .name("perago-signals".to_owned())
            .spawn(move || {
                let mut seen = false;
                for signal in signals.forever() {
                    let name = if signal == SIGINT {
                        "SIGINT"
                    } else {
                        "SIGTERM"
                    };
                    if seen {
                        handle.leave_in_flight(&format!("a second {name} ended the worker"));
                        std::process::exit(128 + signal);
                    }
                    seen = true;
                    handle.shutdown_because(name);
                }
            })
            .map_err(|e| format!("cannot start the signal thread: {e}"))?;
        Ok(())
    }
}

#[cfg(not(unix))]
mod signals {
    use crate::worker::ShutdownHandle;

    /// No signal handling off Unix: the process ends the worker.
    pub(super) fn install(_handle: ShutdownHandle) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(args: &WorkerArgs, env: &[(&str, &str)]) -> Result<WorkerConfig, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        args.config(|var| env.get(var).cloned())
    }

    #[test]
    fn flags_win_over_the_environment() {
        let env = [
            ("CONDUCTOR_SERVER_URL", "http://env:8080/api"),
            ("CONDUCTOR_AUTH_TOKEN", "tok"),
            ("PERAGO_WORKER_ID", "env-id"),
            ("PERAGO_WORKER_CONCURRENCY", "4"),
            ("PERAGO_WORKER_TASK_CONCURRENCY", "a=2, b=3"),
            ("PERAGO_WORKER_TASKS", "a,b"),
            ("PERAGO_WORKER_POLL_TIMEOUT", "2s"),
            ("PERAGO_WORKER_SHUTDOWN_GRACE", "1m"),
            ("PERAGO_WORKER_DOMAIN", "blue"),
            ("PERAGO_FAILURE_REASON_MAX_LENGTH", "100"),
        ];
        let from_env = config(&WorkerArgs::default(), &env).unwrap();
        assert_eq!(from_env.server_url, "http://env:8080/api");
        assert_eq!(from_env.auth_token.as_ref().unwrap().expose(), "tok");
        assert_eq!(from_env.worker_id, "env-id");
        assert_eq!(from_env.concurrency, 4);
        assert_eq!(from_env.concurrency_of("a"), 2);
        assert_eq!(from_env.concurrency_of("b"), 3);
        assert_eq!(from_env.tasks, ["a", "b"]);
        assert_eq!(from_env.poll_timeout, Duration::from_secs(2));
        assert_eq!(from_env.shutdown_grace, Duration::from_secs(60));
        assert_eq!(from_env.domain.as_deref(), Some("blue"));
        assert_eq!(from_env.runtime.reason_max_length, 100);

        let args = WorkerArgs {
            conductor_url: Some("http://flag:1".into()),
            concurrency: Some(8),
            task_concurrency: vec!["a=1".into()],
            tasks: vec!["a".into()],
            worker_id: Some("flag-id".into()),
            poll_timeout: Some("500ms".into()),
            ..WorkerArgs::default()
        };
        let from_flags = config(&args, &env).unwrap();
        assert_eq!(from_flags.server_url, "http://flag:1");
        assert_eq!(from_flags.worker_id, "flag-id");
        assert_eq!(from_flags.concurrency, 8);
        assert_eq!(from_flags.concurrency_of("a"), 1);
        assert_eq!(from_flags.concurrency_of("b"), 8);
        assert_eq!(from_flags.tasks, ["a"]);
        assert_eq!(from_flags.poll_timeout, Duration::from_millis(500));
    }

    #[test]
    fn bad_settings_name_their_source() {
        let server = [("CONDUCTOR_SERVER_URL", "http://h")];
        let err = |args: &WorkerArgs, env: &[(&str, &str)]| config(args, env).unwrap_err();
        assert_eq!(
            err(&WorkerArgs::default(), &[]),
            "no Conductor server: give --conductor-url URL or set CONDUCTOR_SERVER_URL (e.g. \
             http://localhost:8080)"
        );
        assert_eq!(
            err(
                &WorkerArgs::default(),
                &[server[0], ("PERAGO_WORKER_CONCURRENCY", "0")]
            ),
            "PERAGO_WORKER_CONCURRENCY: expected a positive integer, got \"0\""
        );
        let args = WorkerArgs {
            poll_interval: Some("fast".into()),
            ..WorkerArgs::default()
        };
        assert!(
            err(&args, &server).starts_with(
                "--poll-interval: expected a duration such as 100ms or 5s, got \"fast\""
            ),
            "{}",
            err(&args, &server)
        );
        let args = WorkerArgs {
            task_concurrency: vec!["a:1".into()],
            ..WorkerArgs::default()
        };
        assert_eq!(
            err(&args, &server),
            "--task-concurrency: expected TASK=N, got \"a:1\""
        );
        for bad in ["9464", "localhost", ":9464", "127.0.0.1:99999", "a b:1"] {
            let args = WorkerArgs {
                metrics_listen: Some(bad.into()),
                ..WorkerArgs::default()
            };
            assert!(
                err(&args, &server).starts_with(
                    "--metrics-listen: expected an address to listen on such as 127.0.0.1:9464"
                ),
                "{bad}: {}",
                err(&args, &server)
            );
        }
        assert!(
            err(
                &WorkerArgs::default(),
                &[server[0], ("PERAGO_METRICS_LISTEN", "nowhere")]
            )
            .starts_with("PERAGO_METRICS_LISTEN: expected an address")
        );
    }

    #[test]
    fn metrics_are_off_unless_asked_for() {
        let server = [("CONDUCTOR_SERVER_URL", "http://h")];
        assert_eq!(
            config(&WorkerArgs::default(), &server)
                .unwrap()
                .metrics_listen,
            None
        );
        let on = config(
            &WorkerArgs::default(),
            &[server[0], ("PERAGO_METRICS_LISTEN", "0.0.0.0:9464")],
        )
        .unwrap();
        assert_eq!(on.metrics_listen, Some("0.0.0.0:9464".parse().unwrap()));
        let args = WorkerArgs {
            metrics_listen: Some("127.0.0.1:0".into()),
            ..WorkerArgs::default()
        };
        let flag = config(
            &args,
            &[server[0], ("PERAGO_METRICS_LISTEN", "0.0.0.0:9464")],
        );
        assert_eq!(
            flag.unwrap().metrics_listen,
            Some("127.0.0.1:0".parse().unwrap())
        );
        let named = WorkerArgs {
            metrics_listen: Some("localhost:9464".into()),
            ..WorkerArgs::default()
        };
        assert!(
            config(&named, &server)
                .unwrap()
                .metrics_listen
                .unwrap()
                .ip()
                .is_loopback()
        );
    }
}
