//! `perago gateway`: the completion gateway (see `perago_gateway`), and `perago gateway audit
//! verify`. Flags are parsed here; everything else is the library's.

use clap::{Args, Subcommand};
use perago_gateway::log::EventLog;
use perago_gateway::{BearerToken, Gateway, GatewayConfig, TaskTypeSlots, config, ledger};
use perago_worker::cli::worker::{METRICS_LISTEN_ENV, listen_address};
use perago_worker::cli::{CommandError, server_url};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Serve agents: they claim tasks of the given types over HTTP and submit worker-completion/v1
/// completions or refusals, which the gateway enforces, records and reports to Conductor.
///
/// Agents authenticate with the token in PERAGO_GATEWAY_TOKEN (required). Runs until SIGINT or
/// SIGTERM. Exit status: 0 after a graceful stop, 2 on a configuration error.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct GatewayArgs {
    #[command(subcommand)]
    command: Option<GatewayCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum GatewayCommand {
    /// The gateway's audit trail.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Recompute the hash chain of the audit trail: exit 0 when intact (the head hash is
    /// printed: keep it elsewhere to anchor the trail), 1 naming every edited, removed or
    /// reordered event, 2 when the database cannot be read.
    Verify {
        /// The gateway's database.
        #[arg(long, value_name = "FILE", default_value = config::DEFAULT_DB)]
        db: PathBuf,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The Conductor server [env: CONDUCTOR_SERVER_URL]; CONDUCTOR_AUTH_TOKEN is sent as
    /// X-Authorization when set.
    #[arg(long, value_name = "URL")]
    conductor_url: Option<String>,
    /// A task type to serve and the claims agents may hold at once (default 1); repeatable.
    #[arg(long = "task-type", value_name = "NAME[=SLOTS]")]
    task_types: Vec<String>,
    /// Where to listen.
    #[arg(long, value_name = "ADDR", default_value = config::DEFAULT_LISTEN)]
    listen: std::net::SocketAddr,
    /// The ledger: an SQLite database, created when missing.
    #[arg(long, value_name = "FILE", default_value = config::DEFAULT_DB)]
    db: PathBuf,
    /// `full`: every commit is on disk before it is answered (survives a machine crash);
    /// `normal`: in the write-ahead log (survives the gateway being killed, not a machine
    /// crash), several times faster on slow disks.
    #[arg(long, value_name = "full|normal", default_value = "full")]
    durability: String,
    /// A claim's lease, when shorter than the task's responseTimeoutSeconds (the default): an
    /// agent that does not heartbeat within it loses the task, failed back to Conductor.
    #[arg(long, value_name = "DURATION")]
    lease: Option<String>,
    /// The largest request body (more is 413).
    #[arg(long, value_name = "SIZE", default_value = "1MiB")]
    max_body_bytes: String,
    /// How long a client may take to send a request's head, and its body (408).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    request_timeout: String,
    /// How long a claim waits for a task (Conductor's long poll, at most 5s).
    #[arg(long, value_name = "DURATION", default_value = "500ms")]
    poll_timeout: String,
    /// This gateway's worker id at Conductor (default: <hostname>-<pid>).
    #[arg(long, value_name = "ID")]
    worker_id: Option<String>,
    /// Append the JSON Lines log to FILE instead of standard error.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Serve Prometheus metrics (GET /metrics) and the probes GET /healthz and GET /readyz
    /// at ADDR, e.g. 0.0.0.0:9464 (port 0: any free port, logged as metrics_listening);
    /// off unless given [env: PERAGO_METRICS_LISTEN]
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<String>,
}

/// Runs `perago gateway ...`.
pub fn run(args: &GatewayArgs) -> Result<ExitCode, CommandError> {
    match &args.command {
        Some(GatewayCommand::Audit {
            command: AuditCommand::Verify { db },
        }) => verify(db),
        None => serve(&args.run),
    }
}

fn duration(flag: &str, value: &str) -> Result<Duration, String> {
    humantime::parse_duration(value.trim()).map_err(|e| {
        format!("{flag}: expected a duration such as 500ms or 30s, got {value:?} ({e})")
    })
}

fn serve(args: &RunArgs) -> Result<ExitCode, CommandError> {
    let lookup = |var: &str| std::env::var(var).ok();
    let url = server_url(args.conductor_url.as_deref(), lookup)?;
    let token = BearerToken::from_lookup(lookup)?;
    let task_types = args
        .task_types
        .iter()
        .map(|t| TaskTypeSlots::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut config = GatewayConfig::new(&url, task_types, token);
    config.conductor_token =
        lookup(perago_conductor::AUTH_TOKEN_ENV).filter(|t| !t.trim().is_empty());
    config.listen = args.listen;
    config.db = args.db.clone();
    config.durability = ledger::Durability::parse(&args.durability)?;
    config.lease = args
        .lease
        .as_deref()
        .map(|l| duration("--lease", l))
        .transpose()?;
    let max_body = perago_schema::input::parse_size(&args.max_body_bytes)
        .map_err(|e| format!("--max-body-bytes: {e}"))?;
    config.max_body_bytes = usize::try_from(max_body).unwrap_or(usize::MAX);
    config.request_timeout = duration("--request-timeout", &args.request_timeout)?;
    config.poll_timeout = duration("--poll-timeout", &args.poll_timeout)?
        .min(perago_conductor::tasks::MAX_POLL_TIMEOUT);
    if let Some(id) = &args.worker_id {
        config.worker_id = id.clone();
    }
    let metrics = match &args.metrics_listen {
        Some(value) => Some(("--metrics-listen", value.clone())),
        None => lookup(METRICS_LISTEN_ENV)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (METRICS_LISTEN_ENV, v)),
    };
    if let Some((name, value)) = metrics {
        config.metrics_listen = Some(listen_address(name, &value)?);
    }
    config.reason_max_length = perago::runtime::RuntimeConfig::from_env()
        .map_err(|e| e.to_string())?
        .reason_max_length;
    let log = match &args.log {
        Some(path) => EventLog::to(Box::new(perago_worker::cli::open_log(path)?)),
        None => EventLog::stderr(),
    };
    let gateway = Gateway::start(config, log).map_err(|e| e.to_string())?;
    gateway.run_until_signal();
    Ok(ExitCode::SUCCESS)
}

fn verify(db: &std::path::Path) -> Result<ExitCode, CommandError> {
    if !db.is_file() {
        return Err(CommandError::Usage(format!(
            "{}: no such database (give the gateway's --db)",
            db.display()
        )));
    }
    let conn = ledger::open_existing(db).map_err(|e| e.to_string())?;
    let found = ledger::audit::verify(&conn).map_err(|e| format!("{}: {e}", db.display()))?;
    let mut out = std::io::stdout().lock();
    let written = if found.is_intact() {
        match &found.head {
            Some((seq, hash)) => writeln!(
                out,
                "{}: audit trail intact: {} events, head {seq} {hash}",
                db.display(),
                found.events
            ),
            None => writeln!(out, "{}: audit trail intact: no events", db.display()),
        }
    } else {
        let mut w = writeln!(
            out,
            "{}: audit trail broken: {} problem{} in {} events",
            db.display(),
            found.problems.len(),
            if found.problems.len() == 1 { "" } else { "s" },
            found.events
        );
        for problem in &found.problems {
            w = w.and_then(|()| writeln!(out, "{problem}"));
        }
        w
    };
    written.map_err(perago_worker::cli::output_error)?;
    Ok(if found.is_intact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
