//! Injected faults: error statuses, canned raw answers, dropped connections,
//! slow bodies and delays, aimed at some requests only so failure tests can
//! hit exactly the calls they are about.
//!
//! The bookkeeping is shared by both servers; what a fault is aimed at is
//! theirs: the Conductor server uses a [`Route`], the lakeFS server a
//! [`crate::lakefs::Target`]. Callers pass the request's test as a closure.

use crate::{RawReply, Route};
use std::time::Duration;

/// What a pending fault does to the request it catches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Answer with this status and the server's error body carrying this message.
    Status(u16, String),
    /// Answer with exactly this, without handling the request.
    Reply(RawReply),
    /// Close the connection without answering.
    Drop,
    /// Handle the request as usual, then send the headers at once and the
    /// body spread over this long.
    SlowBody(Duration),
}

#[derive(Debug, Clone)]
struct Pending<M> {
    route: M,
    remaining: usize,
    action: Action,
}

/// Pending faults (first match wins, each used `times` times) and standing
/// delays, each aimed at the requests an `M` matches.
#[derive(Debug)]
pub(crate) struct Faults<M = Route> {
    pending: Vec<Pending<M>>,
    delays: Vec<(M, Duration)>,
}

impl<M> Default for Faults<M> {
    fn default() -> Self {
        Faults {
            pending: Vec::new(),
            delays: Vec::new(),
        }
    }
}

impl<M: PartialEq> Faults<M> {
    pub(crate) fn add(&mut self, route: M, times: usize, action: Action) {
        if times > 0 {
            self.pending.push(Pending {
                route,
                remaining: times,
                action,
            });
        }
    }

    /// Sets (or with zero, removes) the delay for `route`.
    pub(crate) fn set_delay(&mut self, route: M, delay: Duration) {
        self.delays.retain(|(r, _)| *r != route);
        if !delay.is_zero() {
            self.delays.push((route, delay));
        }
    }

    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.delays.clear();
    }

    /// The longest delay of the routes `matches` accepts.
    pub(crate) fn delay_for(&self, matches: impl Fn(&M) -> bool) -> Duration {
        self.delays
            .iter()
            .filter(|(route, _)| matches(route))
            .map(|(_, d)| *d)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// Consumes one use of the first pending fault whose route `matches` accepts.
    pub(crate) fn take(&mut self, matches: impl Fn(&M) -> bool) -> Option<Action> {
        let index = self.pending.iter().position(|p| matches(&p.route))?;
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
        let boom = Action::Status(500, "boom".into());
        faults.add(Route::UpdateTask, 2, boom.clone());
        faults.add(Route::Any, 1, Action::Drop);
        let update = segs("/api/tasks");
        let health = segs("/health");
        let take = |faults: &mut Faults, method: &str, segments: &[String]| {
            faults.take(|r: &Route| r.matches(method, segments))
        };
        assert_eq!(take(&mut faults, "GET", &health), Some(Action::Drop));
        assert_eq!(take(&mut faults, "POST", &update), Some(boom.clone()));
        assert_eq!(take(&mut faults, "POST", &update), Some(boom));
        assert_eq!(take(&mut faults, "POST", &update), None);
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
