//! Starting and stopping the gateway: the ledger's writer, the delivery thread, the lease
//! sweeper and the HTTP listener, on a tokio runtime of its own.
//!
//! ```no_run
//! use perago_gateway::{BearerToken, Gateway, GatewayConfig, TaskTypeSlots};
//!
//! let token = BearerToken::new("a long random secret").unwrap();
//! let types = vec![TaskTypeSlots::parse("agent_task=4").unwrap()];
//! let gateway = Gateway::start(GatewayConfig::new("http://localhost:8080", types, token),
//!                              perago_gateway::log::EventLog::stderr())?;
//! println!("listening on {}", gateway.local_addr());
//! gateway.stop();
//! # Ok::<(), perago_gateway::GatewayError>(())
//! ```
//!
//! **Restarts.** Everything is in the ledger: claims held when the gateway stopped (or was
//! killed) are held again, with the leases they had: an agent heartbeats and completes as
//! before, and a lease that lapsed meanwhile is ended by the sweeper at start. Updates
//! committed but not yet delivered go out from the outbox. A task that a claim's poll took from
//! Conductor but the gateway did not record (a crash between the two) stays `IN_PROGRESS` at
//! Conductor until its response timeout, and Conductor retries it.
//!
//! **Slow clients.** A request head must arrive within the request timeout or the connection
//! is closed; a body, within the request timeout or the answer is 408.
//!
//! **Stopping.** The probes say 503 from the first moment; the API stops accepting and the
//! requests in flight get up to 5 s to be answered (their transitions commit); the delivery
//! threads end their attempt in progress, the writer commits what it was given; the metrics
//! listener, answering 503 all along, stops last.

use crate::api::{self, App};
use crate::config::GatewayConfig;
use crate::delivery::{self, Wake};
use crate::ledger::outbox::Lane;
use crate::ledger::{self, LedgerError, now_ms};
use crate::log::EventLog;
use crate::metrics::{self as gateway_metrics, GatewayMetrics};
use crate::slots::Slots;
use crate::writer::Writer;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use perago_conductor::{Client, Retry};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How long the requests in flight get to be answered when the gateway stops.
const DRAIN: Duration = Duration::from_secs(5);

/// A gateway that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A setting that cannot work.
    #[error("{0}")]
    Config(String),
    /// The ledger cannot be opened.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The metrics address cannot be listened on.
    #[error("cannot serve metrics: {0}")]
    Metrics(String),
}

/// A running gateway. [`stop`](Self::stop) (or dropping it) stops listening, lets the
/// requests in flight finish and the delivery thread end its attempt; whatever is not yet
/// delivered stays in the outbox for the next start.
#[derive(Debug)]
pub struct Gateway {
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    stop: watch::Sender<bool>,
    wake: Arc<Wake>,
    delivery_threads: Vec<std::thread::JoinHandle<()>>,
    writer_thread: Option<std::thread::JoinHandle<()>>,
    writer: Writer,
    reader: Mutex<rusqlite::Connection>,
    log: EventLog,
    started: Instant,
    /// Ends when every API connection has ended (each holds a sender).
    api_done: Option<mpsc::Receiver<()>>,
    metrics: Option<Arc<GatewayMetrics>>,
    metrics_addr: Option<SocketAddr>,
    metrics_stop: watch::Sender<bool>,
}

impl Gateway {
    /// Opens the ledger, starts the writer, the delivery thread, the lease sweeper and the
    /// listener; returns once the gateway accepts connections.
    pub fn start(config: GatewayConfig, log: EventLog) -> Result<Gateway, GatewayError> {
        config.check().map_err(GatewayError::Config)?;
        // Bound first, so that a port in use stops the start before anything runs.
        let metrics_listener = config
            .metrics_listen
            .map(perago_metrics::listener::bind)
            .transpose()
            .map_err(GatewayError::Metrics)?;
        let metrics = metrics_listener
            .as_ref()
            .map(|_| Arc::new(GatewayMetrics::new(&config)));
        let client = Client::new(&config.conductor_url)
            .map_err(|e| GatewayError::Config(e.to_string()))?
            .with_retry(Retry::NONE)
            .with_timeout(config.conductor_timeout + config.poll_timeout);
        let client = match &config.conductor_token {
            Some(token) => client.with_auth_token(token.as_str()),
            None => client,
        };
        let wake = Arc::new(Wake::default());
        let woken = Arc::clone(&wake);
        let committed = metrics.clone();
        let ledger::Opened {
            conn,
            upgraded_from,
        } = ledger::open(&config.db, config.durability)?;
        if let Some(from) = upgraded_from {
            log.event(
                "ledger_upgraded",
                json!({"db": config.db.display().to_string(), "from_version": from,
                       "to_version": ledger::SCHEMA_VERSION}),
            );
        }
        let (writer, writer_thread) = Writer::start(
            conn,
            move |took| {
                if let Some(m) = &committed {
                    m.committed(took);
                }
                woken.notify();
            },
            metrics.as_ref().map(|m| m.watch("the ledger writer")),
        );
        let reader = ledger::open_existing(&config.db)?;
        let held = ledger::claimed_counts(&reader).map_err(|source| LedgerError::Sqlite {
            path: config.db.display().to_string(),
            source,
        })?;
        let slots = Arc::new(Slots::new(
            config.task_types.iter().map(|t| (t.name.clone(), t.slots)),
            &held,
        ));
        let mut delivery_threads = Vec::new();
        for lane in 0..delivery::LANES {
            delivery_threads.push(delivery::spawn(
                Lane {
                    lane,
                    lanes: delivery::LANES,
                },
                ledger::open_existing(&config.db)?,
                // Its own connection pool: one keep-alive connection per thread.
                client
                    .clone()
                    .with_timeout(config.conductor_timeout + config.poll_timeout),
                writer.clone(),
                Arc::clone(&wake),
                log.clone(),
                metrics.as_ref().map(|m| delivery::Watched {
                    metrics: Arc::clone(m),
                    watched: m.watch(format!("delivery thread {lane}")),
                }),
            ));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("perago-gateway")
            .build()
            .map_err(|e| GatewayError::Config(format!("cannot start the runtime: {e}")))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(config.listen))
            .map_err(|source| GatewayError::Listen {
                addr: config.listen,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| GatewayError::Listen {
                addr: config.listen,
                source,
            })?;
        log.event(
            "gateway_started",
            json!({
                "listen": addr.to_string(),
                "db": config.db.display().to_string(),
                "conductor_url": client.base_url(),
                "worker_id": config.worker_id,
                "task_types": config.task_types.iter().map(|t| json!({"task_type": t.name, "slots": t.slots, "held": held.get(&t.name).copied().unwrap_or(0)})).collect::<Vec<_>>(),
                "lease_ms": config.lease.map(|l| l.as_millis()),
                "max_body_bytes": config.max_body_bytes,
                "request_timeout_ms": config.request_timeout.as_millis(),
                "durability": format!("{:?}", config.durability).to_lowercase(),
            }),
        );
        let (metrics_stop, metrics_stopped) = watch::channel(false);
        let mut metrics_addr = None;
        if let (Some(std_listener), Some(m)) = (metrics_listener, &metrics) {
            let addr = std_listener.local_addr().map_err(|e| {
                GatewayError::Metrics(format!("cannot read the bound address: {e}"))
            })?;
            let tokio_listener = {
                let _inside = runtime.enter();
                std_listener
                    .set_nonblocking(true)
                    .and_then(|()| tokio::net::TcpListener::from_std(std_listener))
                    .map_err(|e| GatewayError::Metrics(format!("cannot listen on {addr}: {e}")))?
            };
            m.read_ledger(ledger::open_existing(&config.db)?);
            let site = gateway_metrics::Site {
                metrics: Arc::clone(m),
                slots: Arc::clone(&slots),
                writer: writer.clone(),
                timeout: config.request_timeout,
            };
            runtime.spawn(gateway_metrics::serve(
                tokio_listener,
                site,
                metrics_stopped,
            ));
            // An idle gateway (no agent calls) still knows whether Conductor answers.
            let probe = client.clone().with_timeout(config.conductor_timeout);
            m.probes
                .probe_when_idle(move || {
                    gateway_metrics::answered(probe.get("/health", &[]).err().as_ref())
                })
                .map_err(|e| GatewayError::Metrics(format!("cannot start the prober: {e}")))?;
            log.event("metrics_listening", json!({"addr": addr.to_string()}));
            metrics_addr = Some(addr);
        }
        let sweeper = metrics.as_ref().map(|m| m.watch("the lease sweeper"));
        let app = Arc::new(App {
            config,
            writer: writer.clone(),
            reader: Mutex::new(reader),
            slots,
            client,
            log: log.clone(),
            metrics: metrics.clone(),
        });
        let (stop, stopped) = watch::channel(false);
        let (api_open, api_done) = mpsc::channel(1);
        runtime.spawn(sweep_leases(Arc::clone(&app), stopped.clone(), sweeper));
        runtime.spawn(serve(listener, Arc::clone(&app), stopped, api_open));
        Ok(Gateway {
            addr,
            runtime: Some(runtime),
            stop,
            wake,
            delivery_threads,
            writer_thread: Some(writer_thread),
            writer,
            reader: Mutex::new(ledger::open_existing(&app.config.db)?),
            log,
            started: Instant::now(),
            api_done: Some(api_done),
            metrics,
            metrics_addr,
            metrics_stop,
        })
    }

    /// Where `/metrics`, `/healthz` and `/readyz` are served, when
    /// [`GatewayConfig::metrics_listen`] is set (the port chosen for port 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<address>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Waits until every committed update reached Conductor (no update is pending in the
    /// outbox), or `timeout` passes; whether it did.
    pub fn wait_delivered(&self, timeout: std::time::Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.wake.passes();
            let pending = {
                let conn = self.reader.lock().unwrap_or_else(|p| p.into_inner());
                crate::ledger::outbox::pending_updates(&conn)
            };
            if pending.is_ok_and(|n| n == 0) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.wake.wait_pass(seen, deadline);
        }
    }

    /// Blocks until SIGINT or SIGTERM, then stops.
    pub fn run_until_signal(self) {
        if let Some(runtime) = &self.runtime {
            runtime.block_on(async {
                #[cfg(unix)]
                {
                    use tokio::signal::unix::{SignalKind, signal};
                    match signal(SignalKind::terminate()) {
                        Ok(mut term) => {
                            tokio::select! {
                                _ = tokio::signal::ctrl_c() => {}
                                _ = term.recv() => {}
                            }
                        }
                        Err(_) => {
                            let _ = tokio::signal::ctrl_c().await;
                        }
                    }
                }
                #[cfg(not(unix))]
                {
                    let _ = tokio::signal::ctrl_c().await;
                }
            });
        }
        self.stop();
    }

    /// Stops: see [`Gateway`].
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if let Some(m) = &self.metrics {
            m.probes.shutting_down();
        }
        let _ = self.stop.send(true);
        // Requests in flight get a moment to be answered, their transitions committed: the
        // writer is still running.
        if let Some(mut done) = self.api_done.take() {
            runtime.block_on(async {
                let _ = tokio::time::timeout(DRAIN, done.recv()).await;
            });
        }
        self.wake.stop();
        // The delivery threads first (they may record a last attempt), then the writer.
        for thread in self.delivery_threads.drain(..) {
            let _ = thread.join();
        }
        self.writer.stop();
        if let Some(thread) = self.writer_thread.take() {
            let _ = thread.join();
        }
        // The probes have said 503 until now. The prober ends after its probe in progress.
        let _ = self.metrics_stop.send(true);
        if let Some(m) = &self.metrics {
            m.probes.stop();
        }
        runtime.shutdown_timeout(DRAIN);
        self.log.event(
            "gateway_stopped",
            json!({"uptime_ms": self.started.elapsed().as_millis()}),
        );
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Accepts connections until told to stop; each is served by hyper with the head timeout.
async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    mut stopped: watch::Receiver<bool>,
    open: mpsc::Sender<()>,
) {
    let router = api::router(Arc::clone(&app));
    let head_timeout = app.config.request_timeout;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let mut conn_stopped = stopped.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let _open = open;
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = conn_stopped.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}

/// Ends the claims whose lease lapsed, every `lease_check_interval`.
async fn sweep_leases(
    app: Arc<App>,
    mut stopped: watch::Receiver<bool>,
    watched: Option<Arc<perago_metrics::Loop>>,
) {
    let _alive = watched.as_ref().map(perago_metrics::Loop::guard);
    let mut tick = tokio::time::interval(app.config.lease_check_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.changed() => return,
        }
        let _busy = watched.as_deref().map(perago_metrics::Loop::busy);
        let now = now_ms();
        let lapsed = {
            let conn = app.reader.lock().unwrap_or_else(|p| p.into_inner());
            ledger::lapsed(&conn, now)
        };
        let lapsed = match lapsed {
            Ok(ids) => ids,
            Err(e) => {
                app.log.event(
                    "internal_error",
                    json!({"error": format!("reading leases: {e}")}),
                );
                continue;
            }
        };
        for task_id in lapsed {
            let (reason_max, worker_id) =
                (app.config.reason_max_length, app.config.worker_id.clone());
            let id = task_id.clone();
            let expired = app
                .writer
                .write(move |conn| ledger::expire(conn, &id, now, reason_max, &worker_id))
                .await;
            match expired {
                Ok(Some(task_type)) => {
                    app.slots.release(&task_type);
                    app.log.event(
                        "lease_expired",
                        json!({"task_id": task_id, "task_type": task_type}),
                    );
                }
                Ok(None) => {}
                Err(e) => app.log.event(
                    "internal_error",
                    json!({"error": format!("ending the lapsed claim {task_id}: {e}")}),
                ),
            }
        }
    }
}
