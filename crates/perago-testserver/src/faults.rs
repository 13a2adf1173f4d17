//! Injected faults: error statuses, canned raw answers, dropped connections,
//! slow bodies and delays, aimed at some requests only so failure tests can
//! hit exactly the calls they are about.
//!
//! The bookkeeping is shared by both servers; what a fault is aimed at is
//! theirs: the Conductor server uses a [`Route`](crate::Route), the lakeFS server a
//! [`crate::lakefs::Target`]. Callers pass the request's test as a closure.

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

/// A canned answer for a fault of either server ([`TestServer::reply_next`](crate::TestServer::reply_next),
/// [`LakeFsHandle::reply_next`](crate::lakefs::LakeFsHandle::reply_next)): any status, headers
/// and raw body, sent as is (e.g. `200` with `null`, a `302` with a `Location`).
///
/// The server adds only `Content-Length` (from the body) and `Date`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawReply {
    /// The status code, e.g. 204 or 302.
    pub status: u16,
    /// Header names and values, sent in this order.
    pub headers: Vec<(String, String)>,
    /// The body bytes (need not be JSON, or UTF-8).
    pub body: Vec<u8>,
}

impl RawReply {
    /// `status` with no headers and an empty body.
    pub fn new(status: u16) -> RawReply {
        RawReply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// `status` with `Content-Type: application/json` and `body` (which need
    /// not be valid JSON: that is the point of malformed-body tests).
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> RawReply {
        RawReply::new(status)
            .header("content-type", "application/json")
            .body(body)
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> RawReply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> RawReply {
        self.body = body.into();
        self
    }
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
pub(crate) struct Faults<M> {
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
