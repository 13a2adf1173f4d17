//! The server's whole in-memory state behind one lock, and the change
//! notifications that let tests and long polls wait without sleeping.
//!
//! Every mutation bumps a generation counter; [`Shared::with`] notices the bump
//! and wakes both kinds of waiters: blocking ones (a `Condvar`, for
//! [`crate::TestServer::wait_until`]) and async ones (a tokio `Notify`, for
//! long polls). Time-driven changes (response timeouts, delayed re-queues) are
//! applied lazily by [`super::tasks::Tasks::advance`] on every access, and
//! waiters sleep at most until the next such deadline.

use super::tasks::Tasks;
use super::{Options, RecordedRequest, Route};
use crate::faults::Faults;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Everything the server knows.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) options: Options,
    /// Stored TaskDefs by name (see [`super::metadata`]).
    pub(crate) task_defs: BTreeMap<String, Map<String, Value>>,
    /// Stored SchemaDefs by (name, version) (see [`super::schema`]).
    pub(crate) schemas: BTreeMap<(String, i64), Map<String, Value>>,
    /// Stored WorkflowDefs by (name, version) (see [`super::workflows`]).
    pub(crate) workflow_defs: BTreeMap<(String, i64), Map<String, Value>>,
    pub(crate) tasks: Tasks,
    pub(crate) requests: Vec<RecordedRequest>,
    /// How many recorded requests were cleared, so in-flight ones still find
    /// their entry when they set their status.
    pub(crate) requests_cleared: usize,
    pub(crate) faults: Faults<Route>,
    generation: u64,
}

impl State {
    pub(crate) fn new(options: Options) -> State {
        State {
            options,
            task_defs: BTreeMap::new(),
            schemas: BTreeMap::new(),
            workflow_defs: BTreeMap::new(),
            tasks: Tasks::default(),
            requests: Vec::new(),
            requests_cleared: 0,
            faults: Faults::default(),
            generation: 0,
        }
    }

    /// Marks a change, so waiters re-check their conditions.
    pub(crate) fn touch(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// Applies time-driven changes due at `now`.
    fn advance(&mut self, now: Instant) {
        if self.tasks.advance(now) {
            self.touch();
        }
    }
}

/// The state plus its wake-up channels, shared by the HTTP side and the test side.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    pub(crate) notify: tokio::sync::Notify,
}

impl Shared {
    pub(crate) fn new(options: Options) -> Shared {
        Shared {
            state: Mutex::new(State::new(options)),
            changed: Condvar::new(),
            notify: tokio::sync::Notify::new(),
        }
    }

    /// A panic in one test thread must not poison the server for the others.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the up-to-date state and wakes every waiter if it changed.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self.lock();
        let before = state.generation;
        state.advance(Instant::now());
        let result = f(&mut state);
        let changed = state.generation != before;
        drop(state);
        if changed {
            self.wake();
        }
        result
    }

    fn wake(&self) {
        self.changed.notify_all();
        self.notify.notify_waiters();
    }

    /// The current generation, after applying due time-driven changes.
    pub(crate) fn generation(&self) -> u64 {
        self.with(|state| state.generation)
    }

    /// Blocks until the generation differs from `seen` or `deadline` passes;
    /// wakes early at timers so time-driven changes are seen.
    pub(crate) fn wait_change(&self, seen: u64, deadline: Instant) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            let before = state.generation;
            state.advance(now);
            if state.generation != before {
                drop(state);
                self.wake();
                return;
            }
            if state.generation != seen || now >= deadline {
                return;
            }
            let wake_at = state
                .tasks
                .next_timer()
                .map_or(deadline, |t| t.min(deadline));
            let wait = wake_at
                .saturating_duration_since(now)
                .max(Duration::from_millis(1));
            state = self
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}
