//! Liveness and readiness, read from atomics the program's loops set as they go: a probe
//! never takes a lock the loops hold, so it never slows task work down, and never waits for
//! one of them.
//!
//! - **Liveness** ([`Probes::health`]): every watched [`Loop`] (a poller, the lease thread,
//!   the gateway's ledger writer and delivery threads) is alive, and none has been in one step
//!   (a Conductor call, a commit) for longer than the limit it was given.
//! - **Readiness** ([`Probes::readiness`]): the last call to Conductor was answered
//!   ([`Reachability`]) within the window, and the program's own checks pass. A program that
//!   is idle (a gateway no agent calls, a worker whose slots are all busy) makes no calls, so
//!   [`Probes::probe_when_idle`] asks Conductor's `GET /health` when nothing else did for half
//!   the window: readiness never depends on traffic that readiness itself turns away.
//! - **Shutdown** ([`Probes::shutting_down`]): both say 503 from the shutdown request on.

use serde_json::json;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A probe's verdict: `ok`, `unavailable` or `shutting_down`, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `ok`, `unavailable` or `shutting_down`.
    pub status: &'static str,
    /// Why it is not `ok`, one sentence each.
    pub reasons: Vec<String>,
}

impl Verdict {
    fn of(reasons: Vec<String>) -> Verdict {
        Verdict {
            status: if reasons.is_empty() {
                "ok"
            } else {
                "unavailable"
            },
            reasons,
        }
    }

    fn shutting_down() -> Verdict {
        Verdict {
            status: "shutting_down",
            reasons: vec!["the process is shutting down".to_owned()],
        }
    }

    /// Whether it is `ok`.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }

    /// `{"status": …}`, with `"reasons": […]` unless it is `ok`.
    pub fn to_json(&self) -> String {
        let value = if self.is_ok() {
            json!({"status": self.status})
        } else {
            json!({"status": self.status, "reasons": self.reasons})
        };
        value.to_string()
    }
}

/// Milliseconds on a process-wide monotonic clock, plus one: 0 means "never".
#[derive(Debug, Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now(self) -> u64 {
        u64::try_from(self.0.elapsed().as_millis())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }
}

/// `1.5s`, `250ms`: an age for a message.
fn ago(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// One loop of the program, watched by [`Probes::health`]: it is dead once
/// [`ended`](Self::ended) (or its [`LoopGuard`] dropped, a panic included) outside shutdown,
/// and stuck while one [`busy`](Self::busy) step has lasted longer than its limit.
#[derive(Debug)]
pub struct Loop {
    name: String,
    stuck_after: Duration,
    clock: Clock,
    alive: AtomicBool,
    busy_since: AtomicU64,
}

impl Loop {
    /// Marks one step (a Conductor call, a commit) under way until the guard drops.
    pub fn busy(&self) -> Busy<'_> {
        self.busy_since.store(self.clock.now(), Ordering::Relaxed);
        Busy(self)
    }

    /// The loop has ended.
    pub fn ended(&self) {
        self.alive.store(false, Ordering::Relaxed);
    }

    /// A guard that marks the loop ended when it drops: hold it in the loop's thread, so that
    /// a thread that returns or panics is seen.
    pub fn guard(self: &Arc<Self>) -> LoopGuard {
        LoopGuard(Arc::clone(self))
    }

    /// Its name, as the probes say it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn problem(&self, now: u64) -> Option<String> {
        if !self.alive.load(Ordering::Relaxed) {
            return Some(format!("{} has stopped", self.name));
        }
        let since = self.busy_since.load(Ordering::Relaxed);
        let busy = now.saturating_sub(since);
        let limit = u64::try_from(self.stuck_after.as_millis()).unwrap_or(u64::MAX);
        (since != 0 && busy > limit).then(|| {
            format!(
                "{} is stuck: one step has run for {}, longer than its limit of {}",
                self.name,
                ago(busy),
                ago(limit)
            )
        })
    }
}

/// A step under way (see [`Loop::busy`]).
#[derive(Debug)]
pub struct Busy<'a>(&'a Loop);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy_since.store(0, Ordering::Relaxed);
    }
}

/// Marks its loop ended when dropped (see [`Loop::guard`]).
#[derive(Debug)]
pub struct LoopGuard(Arc<Loop>);

impl Drop for LoopGuard {
    fn drop(&mut self) {
        self.0.ended();
    }
}

/// Whether Conductor answered lately: every call the program makes is recorded as
/// [`answered`](Self::answered) (any answer but a 5xx or a 429: Conductor is there and
/// working) or [`unanswered`](Self::unanswered) (no connection, a timeout, a 5xx, a 429).
#[derive(Debug)]
pub struct Reachability {
    clock: Clock,
    window: Duration,
    answered_at: AtomicU64,
    failed_at: AtomicU64,
    /// The outcome of the call recorded last (two calls may end in the same millisecond).
    last_answered: AtomicBool,
    failure: Mutex<String>,
}

impl Reachability {
    /// Conductor answered.
    pub fn answered(&self) {
        self.answered_at.store(self.clock.now(), Ordering::Relaxed);
        self.last_answered.store(true, Ordering::Relaxed);
    }

    /// A call got no usable answer, for the reason given.
    pub fn unanswered(&self, why: impl fmt::Display) {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = why.to_string();
        self.failed_at.store(self.clock.now(), Ordering::Relaxed);
        self.last_answered.store(false, Ordering::Relaxed);
    }

    /// Records `outcome`: `Ok` answered, `Err(why)` not.
    pub fn record(&self, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.answered(),
            Err(why) => self.unanswered(why),
        }
    }

    /// The window: the last answer must be at most this old.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// `Ok` when the last call was answered, within the window.
    pub fn check(&self) -> Result<(), String> {
        let now = self.clock.now();
        let answered = self.answered_at.load(Ordering::Relaxed);
        let failed = self.failed_at.load(Ordering::Relaxed);
        if failed != 0 && !self.last_answered.load(Ordering::Relaxed) {
            let why = self
                .failure
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            return Err(format!(
                "the last call to Conductor, {} ago, failed: {why}",
                ago(now.saturating_sub(failed))
            ));
        }
        if answered == 0 {
            return Err("Conductor has not answered yet".to_owned());
        }
        let age = now.saturating_sub(answered);
        let window = u64::try_from(self.window.as_millis()).unwrap_or(u64::MAX);
        if age > window {
            return Err(format!(
                "Conductor last answered {} ago, longer than the window of {} (poll timeout + \
                 request timeout)",
                ago(age),
                ago(window)
            ));
        }
        Ok(())
    }

    /// How long since the last call of either outcome (`None`: never called).
    fn idle_for(&self) -> Option<Duration> {
        let last = self
            .answered_at
            .load(Ordering::Relaxed)
            .max(self.failed_at.load(Ordering::Relaxed));
        (last != 0).then(|| Duration::from_millis(self.clock.now().saturating_sub(last)))
    }
}

/// A program's probes: its watched loops, Conductor's reachability, and whether it is shutting
/// down. Shared (`Arc`) by the loops that record and the listener that answers.
#[derive(Debug)]
pub struct Probes {
    clock: Clock,
    shutting_down: AtomicBool,
    loops: Mutex<Vec<Arc<Loop>>>,
    conductor: Reachability,
    stopped: Mutex<bool>,
    stop: Condvar,
}

impl Probes {
    /// Probes whose readiness wants Conductor to have answered within `window` (the poll
    /// timeout plus the request timeout).
    pub fn new(window: Duration) -> Arc<Probes> {
        let clock = Clock(Instant::now());
        Arc::new(Probes {
            clock,
            shutting_down: AtomicBool::new(false),
            loops: Mutex::new(Vec::new()),
            conductor: Reachability {
                clock,
                window,
                answered_at: AtomicU64::new(0),
                failed_at: AtomicU64::new(0),
                last_answered: AtomicBool::new(false),
                failure: Mutex::new(String::new()),
            },
            stopped: Mutex::new(false),
            stop: Condvar::new(),
        })
    }

    /// Conductor's reachability, which every call records.
    pub fn conductor(&self) -> &Reachability {
        &self.conductor
    }

    /// Watches a new loop named `name` (`the lease thread`), stuck when one step lasts longer
    /// than `stuck_after`.
    pub fn watch(&self, name: impl Into<String>, stuck_after: Duration) -> Arc<Loop> {
        let watched = Arc::new(Loop {
            name: name.into(),
            stuck_after,
            clock: self.clock,
            alive: AtomicBool::new(true),
            busy_since: AtomicU64::new(0),
        });
        self.loops
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::clone(&watched));
        watched
    }

    /// From now on both probes say 503 `shutting_down`.
    pub fn shutting_down(&self) {
        self.shutting_down.store(true, Ordering::Relaxed);
    }

    /// Whether [`shutting_down`](Self::shutting_down) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }

    /// Liveness: every watched loop alive and none stuck.
    pub fn health(&self) -> Verdict {
        if self.is_shutting_down() {
            return Verdict::shutting_down();
        }
        let now = self.clock.now();
        let problems = self
            .loops
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|l| l.problem(now))
            .collect();
        Verdict::of(problems)
    }

    /// Readiness: Conductor answered the last call within the window, and `problems` (the
    /// program's own, found by the caller) is empty.
    pub fn readiness(&self, mut problems: Vec<String>) -> Verdict {
        if self.is_shutting_down() {
            return Verdict::shutting_down();
        }
        if let Err(why) = self.conductor.check() {
            problems.insert(0, why);
        }
        Verdict::of(problems)
    }

    /// Starts a thread that calls `probe` (Conductor's `GET /health`; `Err(why)` when it got
    /// no usable answer) whenever no call was made for half the window, until
    /// [`stop`](Self::stop).
    pub fn probe_when_idle(
        self: &Arc<Self>,
        mut probe: impl FnMut() -> Result<(), String> + Send + 'static,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        let probes = Arc::clone(self);
        let quiet = self.conductor.window / 2;
        let tick = (self.conductor.window / 4).max(Duration::from_millis(10));
        std::thread::Builder::new()
            .name("perago-readiness".to_owned())
            .spawn(move || {
                loop {
                    if probes.conductor.idle_for().is_none_or(|idle| idle >= quiet) {
                        let outcome = probe();
                        probes.conductor.record(outcome);
                    }
                    let stopped = probes.stopped.lock().unwrap_or_else(|p| p.into_inner());
                    let (stopped, _) = probes
                        .stop
                        .wait_timeout_while(stopped, tick, |s| !*s)
                        .unwrap_or_else(|p| p.into_inner());
                    if *stopped {
                        return;
                    }
                }
            })
    }

    /// Ends the [`probe_when_idle`](Self::probe_when_idle) thread.
    pub fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.stop.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_names_dead_and_stuck_loops() {
        let probes = Probes::new(Duration::from_secs(10));
        let poller = probes.watch("the poller of a", Duration::ZERO);
        let lease = probes.watch("the lease thread", Duration::from_secs(3600));
        assert!(probes.health().is_ok());
        {
            let _guard = lease.guard();
            let _busy = lease.busy();
            assert!(probes.health().is_ok(), "busy within its limit");
        }
        let verdict = probes.health();
        assert_eq!(verdict.reasons, ["the lease thread has stopped"]);
        assert_eq!(
            verdict.to_json(),
            r#"{"status":"unavailable","reasons":["the lease thread has stopped"]}"#
        );
        let busy = poller.busy();
        // Past a zero limit as soon as the clock moves on by a millisecond.
        let deadline = Instant::now() + Duration::from_secs(10);
        while probes.health().reasons.len() < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(
            probes.health().reasons[0].starts_with("the poller of a is stuck: one step has run"),
            "{:?}",
            probes.health()
        );
        drop(busy);
        probes.shutting_down();
        assert_eq!(
            probes.health().to_json(),
            r#"{"status":"shutting_down","reasons":["the process is shutting down"]}"#
        );
        assert_eq!(probes.readiness(Vec::new()).status, "shutting_down");
    }

    #[test]
    fn readiness_follows_the_last_call_to_conductor() {
        let probes = Probes::new(Duration::from_secs(3600));
        assert_eq!(
            probes.readiness(Vec::new()).reasons,
            ["Conductor has not answered yet"]
        );
        probes.conductor().answered();
        assert_eq!(probes.readiness(Vec::new()).to_json(), r#"{"status":"ok"}"#);
        assert_eq!(
            probes
                .readiness(vec!["the ledger refuses writes".into()])
                .reasons,
            ["the ledger refuses writes"]
        );
        probes
            .conductor()
            .record(Err("connection refused".to_owned()));
        let reasons = probes.readiness(Vec::new()).reasons;
        assert!(
            reasons[0].starts_with("the last call to Conductor, "),
            "{reasons:?}"
        );
        assert!(reasons[0].ends_with(" ago, failed: connection refused"));
        probes.conductor().answered();
        assert!(probes.readiness(Vec::new()).is_ok());
    }

    #[test]
    fn an_idle_program_asks_conductor_itself() {
        let probes = Probes::new(Duration::from_millis(40));
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = probes
            .probe_when_idle(move || {
                let _ = tx.send(());
                Ok(())
            })
            .unwrap();
        rx.recv_timeout(Duration::from_secs(60)).expect("a probe");
        rx.recv_timeout(Duration::from_secs(60)).expect("another");
        probes.stop();
        thread.join().unwrap();
        assert!(probes.conductor().answered_at.load(Ordering::Relaxed) > 0);
    }
}
