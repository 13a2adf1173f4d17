//! The one writer of the ledger: a thread that owns the read-write connection and runs every
//! transition, so writes never contend for SQLite's lock.
//!
//! Transitions that arrive together are committed together (group commit): one
//! `BEGIN IMMEDIATE`, each transition in its own savepoint (one that fails is rolled back
//! alone), one `COMMIT` and so one `fsync` for all of them. Each caller is answered only after
//! the commit, so an answer is never ahead of the disk; a failed commit answers every
//! transition of the batch with the error, and nothing of it was written.

use perago_metrics::Loop;
use rusqlite::Connection;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The most transitions committed at once.
const MAX_BATCH: usize = 256;

/// A transition failed and nothing of it was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// SQLite refused it, or the commit.
    #[error("ledger write failed: {0}")]
    Sqlite(String),
    /// The transition never ran: the writer has stopped (the gateway is shutting down), or
    /// SQLite could not open a transaction for it.
    #[error(
        "the ledger writer could not run the transition (stopped, or no transaction could be opened)"
    )]
    NotRun,
}

/// The answer to a transition, sent once its batch committed (or failed).
type Answer = Box<dyn FnOnce(Result<(), WriteError>) + Send>;
/// A transition: runs inside the batch's transaction; `Ok` keeps its writes.
type Job = Box<dyn FnOnce(&Connection) -> (bool, Answer) + Send>;

/// What the writer thread receives.
enum Message {
    /// A transition.
    Job(Job),
    /// Stop after the transitions received before this.
    Stop,
}

/// A handle on the writer thread; cheap to clone.
#[derive(Debug, Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Message>,
}

impl Writer {
    /// Starts the writer on `conn` (from [`crate::ledger::open`]); `after_commit` runs after every
    /// batch that committed, with the time its transaction took (it wakes the delivery
    /// thread, and feeds the commit histogram). `watched`, when given, is marked busy for
    /// each transaction and ended with the thread.
    pub fn start(
        conn: Connection,
        after_commit: impl Fn(Duration) + Send + 'static,
        watched: Option<Arc<Loop>>,
    ) -> (Writer, std::thread::JoinHandle<()>) {
        let (jobs, receiver) = mpsc::channel::<Message>();
        let thread = std::thread::Builder::new()
            .name("perago-gateway-writer".into())
            .spawn(move || {
                let _alive = watched.as_ref().map(Loop::guard);
                run(&conn, &receiver, &after_commit, watched.as_deref());
            })
            .expect("the writer thread starts");
        (Writer { jobs }, thread)
    }

    /// Runs `transition` in a transaction and waits (asynchronously) for its commit.
    pub async fn write<T: Send + 'static>(
        &self,
        transition: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, WriteError> {
        match self.submit(transition) {
            Ok(answer) => answer.await.unwrap_or(Err(WriteError::NotRun)),
            Err(e) => Err(e),
        }
    }

    /// [`write`](Self::write) for a thread outside the runtime (the delivery thread).
    pub fn write_blocking<T: Send + 'static>(
        &self,
        transition: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, WriteError> {
        match self.submit(transition) {
            Ok(answer) => answer.blocking_recv().unwrap_or(Err(WriteError::NotRun)),
            Err(e) => Err(e),
        }
    }

    fn submit<T: Send + 'static>(
        &self,
        transition: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<oneshot::Receiver<Result<T, WriteError>>, WriteError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| match transition(conn) {
            Ok(value) => (
                true,
                Box::new(move |committed: Result<(), WriteError>| {
                    let _ = tx.send(committed.map(|()| value));
                }),
            ),
            Err(e) => {
                let error = WriteError::Sqlite(e.to_string());
                (
                    false,
                    Box::new(move |_| {
                        let _ = tx.send(Err(error));
                    }),
                )
            }
        });
        self.jobs
            .send(Message::Job(job))
            .map_err(|_| WriteError::NotRun)?;
        Ok(rx)
    }

    /// Stops the writer once the transitions already submitted are done; later ones are
    /// answered [`WriteError::NotRun`].
    pub fn stop(&self) {
        let _ = self.jobs.send(Message::Stop);
    }
}

/// The writer's loop: until told to stop, or every [`Writer`] is dropped.
fn run(
    conn: &Connection,
    jobs: &mpsc::Receiver<Message>,
    after_commit: &dyn Fn(Duration),
    watched: Option<&Loop>,
) {
    let mut stopping = false;
    while !stopping {
        let Ok(Message::Job(first)) = jobs.recv() else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(Message::Job(job)) => batch.push(job),
                Ok(Message::Stop) => {
                    stopping = true;
                    break;
                }
                Err(_) => break,
            }
        }
        let _busy = watched.map(Loop::busy);
        let began = Instant::now();
        if run_cached(conn, "BEGIN IMMEDIATE").is_err() {
            // Dropping a job unrun answers it `NotRun`.
            continue;
        }
        let mut answers = Vec::with_capacity(batch.len());
        for job in batch {
            if run_cached(conn, "SAVEPOINT transition").is_err() {
                continue;
            }
            let (keep, answer) = job(conn);
            let end = if keep {
                run_cached(conn, "RELEASE transition")
            } else {
                run_cached(conn, "ROLLBACK TO transition")
                    .and_then(|()| run_cached(conn, "RELEASE transition"))
            };
            match end {
                Ok(()) => answers.push(answer),
                Err(e) => answer(Err(WriteError::Sqlite(e.to_string()))),
            }
        }
        let committed = run_cached(conn, "COMMIT").map_err(|e| WriteError::Sqlite(e.to_string()));
        let took = began.elapsed();
        if committed.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        for answer in answers {
            answer(committed.clone());
        }
        if committed.is_ok() {
            after_commit(took);
        }
    }
}

/// Runs one statement prepared once per connection: the writer brackets every transition
/// with a savepoint, and parsing that text anew each time cost more than the statements of a
/// small transition.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}
