//! The gateway's metrics and probes, on when [`GatewayConfig::metrics_listen`] is set, served
//! from the gateway's own runtime beside (never through) the agents' API.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `perago_gateway_claims_total` | counter | `task_type`, `outcome` (`claimed`, `empty`, `no_slot`, `conductor_unavailable`, `error`) |
//! | `perago_gateway_submissions_total` | counter | `task_type`, `outcome` (`completion`, `refusal`, `legacy_prose`, `contract_violation`, `empty_result_summary`, `conflict`) |
//! | `perago_gateway_slots_in_use` | gauge | `task_type` |
//! | `perago_gateway_outbox_pending` | gauge | |
//! | `perago_gateway_delivery_seconds` | histogram | |
//! | `perago_gateway_http_requests_total` | counter | `route` (the route's template, e.g. `/v1/tasks/:task_id/complete`; `unmatched` for any other path), `status` |
//! | `perago_gateway_ledger_commit_seconds` | histogram | |
//!
//! Task types are those served (a claim for another type is counted only by its HTTP answer)
//! or those in the ledger; no label holds a task id, an agent id or the token. The two gauges
//! are read when scraped: the slots from memory, the outbox from the ledger on a connection of
//! the metrics' own, so a scrape waits on no lock the API holds.
//!
//! [`GatewayConfig::metrics_listen`]: crate::GatewayConfig::metrics_listen

use crate::config::GatewayConfig;
use crate::ledger::outbox;
use crate::slots::Slots;
use crate::writer::Writer;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use perago_conductor::Error;
use perago_metrics::prometheus_client::metrics::counter::Counter;
use perago_metrics::prometheus_client::metrics::family::Family;
use perago_metrics::prometheus_client::metrics::gauge::Gauge;
use perago_metrics::prometheus_client::metrics::histogram::Histogram;
use perago_metrics::prometheus_client::registry::Registry;
use perago_metrics::{Answer, Loop, Probes, Route};
use rusqlite::Connection;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// Delivery times, commit to Conductor's 2xx, in seconds: from a loopback round trip to an
/// hour-long outage.
const DELIVERY_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 300.0, 900.0,
    3600.0,
];

/// Ledger transaction times, `BEGIN` to `COMMIT` (one fsync with `--durability full`).
const COMMIT_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// Connections the metrics listener serves at once; more are closed unanswered.
const MAX_CONNECTIONS: usize = 16;

type Labels = [(&'static str, String); 2];
type TypeLabel = [(&'static str, String); 1];

/// How a claim ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    Claimed,
    Empty,
    NoSlot,
    ConductorUnavailable,
    Error,
}

impl Claim {
    fn as_str(self) -> &'static str {
        match self {
            Claim::Claimed => "claimed",
            Claim::Empty => "empty",
            Claim::NoSlot => "no_slot",
            Claim::ConductorUnavailable => "conductor_unavailable",
            Claim::Error => "error",
        }
    }
}

/// The gateway's metrics and probes.
#[derive(Debug)]
pub struct GatewayMetrics {
    registry: Registry,
    claims: Family<Labels, Counter>,
    submissions: Family<Labels, Counter>,
    slots_in_use: Family<TypeLabel, Gauge>,
    outbox_pending: Gauge,
    delivery: Histogram,
    http_requests: Family<Labels, Counter>,
    commit: Histogram,
    pub(crate) probes: Arc<Probes>,
    /// A step (a Conductor call, a ledger transaction) is stuck past this.
    pub(crate) stuck_after: Duration,
    /// The metrics' own read connection to the ledger, for the outbox gauge.
    ledger: Mutex<Option<Connection>>,
}

impl GatewayMetrics {
    /// The metrics of a gateway with `config`; every series of a served task type starts at 0.
    pub(crate) fn new(config: &GatewayConfig) -> GatewayMetrics {
        let mut registry = Registry::default();
        let claims = Family::<Labels, Counter>::default();
        registry.register(
            "perago_gateway_claims",
            "Claims of served task types, by outcome: claimed, empty (nothing waited), no_slot \
             (429), conductor_unavailable (503), error",
            claims.clone(),
        );
        let submissions = Family::<Labels, Counter>::default();
        registry.register(
            "perago_gateway_submissions",
            "Completions submitted, by outcome: completion, refusal, legacy_prose, \
             contract_violation, empty_result_summary, conflict (409: the task had ended)",
            submissions.clone(),
        );
        let slots_in_use = Family::<TypeLabel, Gauge>::default();
        registry.register(
            "perago_gateway_slots_in_use",
            "Slots held: claims recorded plus claims polling Conductor",
            slots_in_use.clone(),
        );
        let outbox_pending = Gauge::default();
        registry.register(
            "perago_gateway_outbox_pending",
            "Conductor updates committed and not yet delivered",
            outbox_pending.clone(),
        );
        let delivery = Histogram::new(DELIVERY_BUCKETS);
        registry.register(
            "perago_gateway_delivery_seconds",
            "Time from an update's commit to Conductor's 2xx",
            delivery.clone(),
        );
        let http_requests = Family::<Labels, Counter>::default();
        registry.register(
            "perago_gateway_http_requests",
            "Requests to the agents' API, by route template and status",
            http_requests.clone(),
        );
        let commit = Histogram::new(COMMIT_BUCKETS);
        registry.register(
            "perago_gateway_ledger_commit_seconds",
            "Time of one ledger transaction, BEGIN to COMMIT (a group commit of the \
             transitions that arrived together)",
            commit.clone(),
        );
        for t in &config.task_types {
            for claim in [
                Claim::Claimed,
                Claim::Empty,
                Claim::NoSlot,
                Claim::ConductorUnavailable,
                Claim::Error,
            ] {
                let _ = claims.get_or_create_owned(&labels(&t.name, claim.as_str()));
            }
            for outcome in [
                "completion",
                "refusal",
                "legacy_prose",
                "contract_violation",
                "empty_result_summary",
                "conflict",
            ] {
                let _ = submissions.get_or_create_owned(&labels(&t.name, outcome));
            }
            let _ = slots_in_use.get_or_create_owned(&[("task_type", t.name.clone())]);
        }
        let call = config.poll_timeout + config.conductor_timeout;
        GatewayMetrics {
            registry,
            claims,
            submissions,
            slots_in_use,
            outbox_pending,
            delivery,
            http_requests,
            commit,
            probes: Probes::new(call),
            stuck_after: call * 2,
            ledger: Mutex::new(None),
        }
    }

    /// Gives the metrics a read connection of their own to the ledger.
    pub(crate) fn read_ledger(&self, conn: Connection) {
        *self.ledger.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn);
    }

    pub(crate) fn claim(&self, task_type: &str, outcome: Claim) {
        self.claims
            .get_or_create(&labels(task_type, outcome.as_str()))
            .inc();
    }

    /// A submission of a task of `task_type` ended with `outcome` (the transition's
    /// `completion`, `refusal`, `legacy_prose`, `empty`, `violation`, or `conflict`).
    pub(crate) fn submission(&self, task_type: &str, outcome: &str) {
        let outcome = match outcome {
            "empty" => "empty_result_summary",
            "violation" => "contract_violation",
            other => other,
        };
        self.submissions
            .get_or_create(&labels(task_type, outcome))
            .inc();
    }

    pub(crate) fn http_request(&self, route: &str, status: u16) {
        self.http_requests
            .get_or_create(&[("route", route.to_owned()), ("status", status.to_string())])
            .inc();
    }

    pub(crate) fn delivered(&self, seconds: f64) {
        self.delivery.observe(seconds.max(0.0));
    }

    pub(crate) fn committed(&self, took: Duration) {
        self.commit.observe(took.as_secs_f64());
    }

    /// Records a call to Conductor for readiness: it failed with `error`, or not.
    pub(crate) fn called(&self, error: Option<&Error>) {
        self.probes.conductor().record(answered(error));
    }

    /// A watched loop.
    pub(crate) fn watch(&self, name: impl Into<String>) -> Arc<Loop> {
        self.probes.watch(name, self.stuck_after)
    }

    /// Sets the gauges read at scrape time.
    fn refresh(&self, slots: &Slots) {
        for (task_type, held) in slots.in_use() {
            self.slots_in_use
                .get_or_create(&[("task_type", task_type)])
                .set(i64::try_from(held).unwrap_or(i64::MAX));
        }
        let ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(Ok(pending)) = ledger.as_ref().map(outbox::pending_updates) {
            self.outbox_pending
                .set(i64::try_from(pending).unwrap_or(i64::MAX));
        }
    }
}

fn labels(task_type: &str, outcome: &str) -> Labels {
    [
        ("task_type", task_type.to_owned()),
        ("outcome", outcome.to_owned()),
    ]
}

/// Whether Conductor answered a call: any answer but a 5xx or a 429; `Err` says why not.
pub(crate) fn answered(error: Option<&Error>) -> Result<(), String> {
    match error {
        None => Ok(()),
        Some(e) if e.status().is_some_and(|s| s < 500 && s != 429) => Ok(()),
        Some(e) => Err(e.to_string()),
    }
}

/// What the metrics listener needs of the gateway.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) metrics: Arc<GatewayMetrics>,
    pub(crate) slots: Arc<Slots>,
    pub(crate) writer: Writer,
    /// Bounds a connection's request head, and the readiness probe's ledger write.
    pub(crate) timeout: Duration,
}

/// Serves `/metrics`, `/healthz` and `/readyz` until `stopped`: at most
/// [`MAX_CONNECTIONS`] at once, a head within the timeout, one request per connection.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    site: Site,
    mut stopped: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            continue; // over the limit: closed unanswered
        };
        let site = site.clone();
        let head_timeout = site.timeout;
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let site = site.clone();
                async move { Ok::<_, std::convert::Infallible>(respond(&site, &request).await) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            let _ = conn.await;
            drop(permit);
        });
    }
}

/// The answer to one request.
async fn respond(site: &Site, request: &Request<Incoming>) -> Response<String> {
    let method = request.method().as_str();
    let accept = request
        .headers()
        .get(hyper::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let metrics = &site.metrics;
    let answer = match Route::of(method, target) {
        Err(answer) => answer,
        Ok(Route::Metrics) => {
            let (metrics, slots) = (Arc::clone(metrics), Arc::clone(&site.slots));
            // The ledger read is blocking: off the runtime's threads.
            let _ = tokio::task::spawn_blocking(move || metrics.refresh(&slots)).await;
            perago_metrics::answer(
                Route::Metrics,
                accept,
                &site.metrics.registry,
                &site.metrics.probes,
                Vec::new(),
            )
        }
        Ok(route @ Route::Readyz) if !metrics.probes.is_shutting_down() => {
            let problems = match ledger_accepts_writes(site).await {
                Ok(()) => Vec::new(),
                Err(why) => vec![why],
            };
            perago_metrics::answer(route, accept, &metrics.registry, &metrics.probes, problems)
        }
        Ok(route) => perago_metrics::answer(
            route,
            accept,
            &metrics.registry,
            &metrics.probes,
            Vec::new(),
        ),
    };
    let head_only = method == "HEAD";
    let status = answer.status;
    let Answer {
        content_type, body, ..
    } = answer;
    let mut response = Response::new(if head_only { String::new() } else { body });
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    response
}

/// Readiness of the ledger: an empty transaction commits within the timeout.
async fn ledger_accepts_writes(site: &Site) -> Result<(), String> {
    match tokio::time::timeout(site.timeout, site.writer.write(|_| Ok(()))).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the ledger does not accept writes: {e}")),
        Err(_) => Err(format!(
            "the ledger did not commit an empty transaction within {}",
            humantime::format_duration(site.timeout)
        )),
    }
}
