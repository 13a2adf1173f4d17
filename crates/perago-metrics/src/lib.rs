//! What perago's long-running programs (a task binary's `worker`, `perago gateway`) serve on
//! `--metrics-listen ADDR`, for Prometheus and for Kubernetes probes:
//!
//! | route | answer |
//! |---|---|
//! | `GET /metrics` | the program's metrics: Prometheus text format 0.0.4, or OpenMetrics 1.0.0 when the `Accept` header prefers it ([`exposition`]) |
//! | `GET /healthz` | 200 while the program's loops are alive; 503 when one died or is stuck, and during shutdown ([`Probes::health`]) |
//! | `GET /readyz` | 200 when the last call to Conductor was answered within the window (and the program's own checks pass); else 503 with a JSON body saying why, and during shutdown ([`Probes::readiness`]) |
//!
//! Nothing else is served (404; 405 for a method other than `GET` or `HEAD`). The metrics
//! themselves are the program's: each registers them with a
//! [`prometheus_client::registry::Registry`] and records them in its own loops. The listener
//! is the program's too: the worker, which is threads and blocking I/O, uses the bounded
//! thread-per-connection [`listener`] here; the gateway serves the same [`answer`]s from its
//! tokio runtime.
//!
//! Labels are low-cardinality by rule: a task type, an outcome, a status, a route template;
//! never a task id, an agent id, a token or a secret.

pub mod exposition;
pub mod listener;
pub mod probes;

pub use probes::{Loop, Probes, Reachability, Verdict};
pub use prometheus_client;

use prometheus_client::registry::Registry;

/// What the listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/metrics`.
    Metrics,
    /// `/healthz`: liveness.
    Healthz,
    /// `/readyz`: readiness.
    Readyz,
}

impl Route {
    /// The route of a request, or the answer to a request for anything else: 404 for another
    /// path, 405 for a method other than `GET` or `HEAD`. `target` may carry a query string,
    /// which is ignored.
    pub fn of(method: &str, target: &str) -> Result<Route, Answer> {
        let path = target.split_once('?').map_or(target, |(path, _)| path);
        let route = match path {
            "/metrics" => Route::Metrics,
            "/healthz" => Route::Healthz,
            "/readyz" => Route::Readyz,
            _ => {
                return Err(Answer::text(
                    404,
                    "not found: this listener serves GET /metrics, /healthz and /readyz only\n",
                ));
            }
        };
        if method != "GET" && method != "HEAD" {
            return Err(Answer::text(405, "method not allowed: use GET\n"));
        }
        Ok(route)
    }

    /// The route's path.
    pub fn path(self) -> &'static str {
        match self {
            Route::Metrics => "/metrics",
            Route::Healthz => "/healthz",
            Route::Readyz => "/readyz",
        }
    }
}

/// An answer: status, `Content-Type` and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Answer {
    /// A plain-text answer.
    pub fn text(status: u16, body: impl Into<String>) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }

    /// A probe's verdict as JSON: 200 `{"status": "ok"}`, or 503 with the reasons.
    pub fn verdict(verdict: &Verdict) -> Answer {
        Answer {
            status: if verdict.is_ok() { 200 } else { 503 },
            content_type: "application/json",
            body: verdict.to_json(),
        }
    }
}

/// The answer to `route`: the metrics in `registry` in the format `accept` prefers, or a
/// probe's verdict. `ready_problems` are the program's own readiness problems beyond
/// Conductor's (the gateway's ledger), found before the call.
pub fn answer(
    route: Route,
    accept: Option<&str>,
    registry: &Registry,
    probes: &Probes,
    ready_problems: Vec<String>,
) -> Answer {
    match route {
        Route::Metrics => {
            let (content_type, body) = exposition::encode(registry, accept);
            Answer {
                status: 200,
                content_type,
                body,
            }
        }
        Route::Healthz => Answer::verdict(&probes.health()),
        Route::Readyz => Answer::verdict(&probes.readiness(ready_problems)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_routes_are_served() {
        assert_eq!(Route::of("GET", "/metrics"), Ok(Route::Metrics));
        assert_eq!(Route::of("HEAD", "/healthz?verbose"), Ok(Route::Healthz));
        assert_eq!(Route::of("GET", "/readyz"), Ok(Route::Readyz));
        assert_eq!(Route::of("GET", "/").unwrap_err().status, 404);
        assert_eq!(Route::of("GET", "/metrics/").unwrap_err().status, 404);
        assert_eq!(Route::of("GET", "/v1/claims").unwrap_err().status, 404);
        assert_eq!(Route::of("POST", "/metrics").unwrap_err().status, 405);
    }
}
