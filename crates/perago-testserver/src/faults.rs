//! Injected faults: error statuses, canned raw answers, dropped connections,
//! slow bodies and delays, aimed at a [`Route`] so failure tests can hit
//! exactly the calls they are about.

use crate::{RawReply, Route};
use std::time::Duration;

/// What a pending fault does to the request it catches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Answer with this status and a Conductor error body.
    Status(u16),
    /// Answer with exactly this, without handling the request.
    Reply(RawReply),
    /// Close the connection without answering.
    Drop,
    /// Handle the request as usual, then send the headers at once and the
    /// body spread over this long.
    SlowBody(Duration),
}

#[derive(Debug, Clone)]
struct Pending {
    route: Route,
    remaining: usize,
    action: Action,
}

/// Pending faults (first match wins, each used `times` times) and standing delays.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    pending: Vec<Pending>,
    delays: Vec<(Route, Duration)>,
}

impl Faults {
    pub(crate) fn add(&mut self, route: Route, times: usize, action: Action) {
        if times > 0 {
            self.pending.push(Pending {
                route,
                remaining: times,
                action,
            });
        }
    }

    /// Sets (or with zero, removes) the delay for `route`.
    pub(crate) fn set_delay(&mut self, route: Route, delay: Duration) {
        self.delays.retain(|(r, _)| *r != route);
        if !delay.is_zero() {
            self.delays.push((route, delay));
        }
    }

    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.delays.clear();
    }

    /// The longest delay of the routes `request` matches.
    pub(crate) fn delay_for(&self, method: &str, segments: &[String]) -> Duration {
        self.delays
            .iter()
            .filter(|(route, _)| route.matches(method, segments))
            .map(|(_, d)| *d)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// Consumes one use of the first pending fault matching the request.
    pub(crate) fn take(&mut self, method: &str, segments: &[String]) -> Option<Action> {
        let index = self
            .pending
            .iter()
            .position(|p| p.route.matches(method, segments))?;
        let pending = &mut self.pending[index];
        pending.remaining -= 1;
        if pending.remaining == 0 {
            Some(self.pending.remove(index).action)
        } else {
            Some(pending.action.clone())
        }
    }
}

impl Route {
    /// Whether a request (method, decoded path segments) belongs to this route.
    pub(crate) fn matches(self, method: &str, segments: &[String]) -> bool {
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        match self {
            Route::Any => true,
            Route::Metadata => s.starts_with(&["api", "metadata"]),
            Route::RegisterTaskDefs => method == "POST" && s == ["api", "metadata", "taskdefs"],
            Route::UpdateTaskDef => method == "PUT" && s == ["api", "metadata", "taskdefs"],
            Route::ListTaskDefs => method == "GET" && s == ["api", "metadata", "taskdefs"],
            Route::GetTaskDef => {
                method == "GET" && s.len() == 4 && s.starts_with(&["api", "metadata", "taskdefs"])
            }
            Route::DeleteTaskDef => {
                method == "DELETE"
                    && s.len() == 4
                    && s.starts_with(&["api", "metadata", "taskdefs"])
            }
            Route::Schema => s.starts_with(&["api", "schema"]),
            Route::Poll => method == "GET" && s.starts_with(&["api", "tasks", "poll"]),
            Route::UpdateTask => {
                method == "POST" && (s == ["api", "tasks"] || s == ["api", "tasks", "update-v2"])
            }
            Route::GetTask => {
                method == "GET"
                    && s.len() == 3
                    && s.starts_with(&["api", "tasks"])
                    && s[2] != "poll"
            }
            Route::Health => method == "GET" && (s == ["health"] || s == ["api", "health"]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Vec<String> {
        path.split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn faults_are_used_up_in_order() {
        let mut faults = Faults::default();
        faults.add(Route::UpdateTask, 2, Action::Status(500));
        faults.add(Route::Any, 1, Action::Drop);
        let update = segs("/api/tasks");
        assert_eq!(faults.take("GET", &segs("/health")), Some(Action::Drop));
        assert_eq!(faults.take("POST", &update), Some(Action::Status(500)));
        assert_eq!(faults.take("POST", &update), Some(Action::Status(500)));
        assert_eq!(faults.take("POST", &update), None);
    }

    #[test]
    fn routes_match_their_endpoints_only() {
        assert!(Route::GetTaskDef.matches("GET", &segs("/api/metadata/taskdefs/x")));
        assert!(!Route::GetTaskDef.matches("GET", &segs("/api/metadata/taskdefs")));
        assert!(Route::Poll.matches("GET", &segs("/api/tasks/poll/batch/x")));
        assert!(!Route::GetTask.matches("GET", &segs("/api/tasks/poll/x")));
        assert!(Route::Schema.matches("DELETE", &segs("/api/schema/a/1")));
    }
}
