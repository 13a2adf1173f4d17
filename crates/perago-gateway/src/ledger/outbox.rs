//! The outbox: what must reach Conductor, written in the transaction of the change it reports
//! and sent after commit by [`crate::delivery`].
//!
//! An `update` row is the `POST /api/tasks` body that ends a task; it is retried until
//! Conductor takes it (or refuses it with a 4xx, which is recorded as `rejected`). A `log` row
//! is an audit event for the task's log (`POST /api/tasks/{id}/log`), best effort: after
//! [`LOG_ATTEMPTS`] failures it is `dropped`. A row is marked `delivered` only after Conductor
//! answered 2xx, so a crash between the answer and the mark sends it once more on restart;
//! Conductor answers an update of a task that is already terminal with 200 and ignores it
//! (`docs/src/reference/conductor.md` §4.3), so the task ends once.

use rusqlite::{Connection, params};

/// A row of the outbox, as the delivery thread reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    /// Its id (delivery order).
    pub id: i64,
    /// The task.
    pub task_id: String,
    /// `update` or `log`.
    pub kind: Kind,
    /// The body to send.
    pub body: String,
    /// Failed attempts so far.
    pub attempts: i64,
    /// When it was queued (epoch ms): the commit of the change it reports.
    pub created_at_ms: i64,
}

/// What a row sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `POST /api/tasks`: the update that ends the task.
    Update,
    /// `POST /api/tasks/{id}/log`: an audit event, best effort.
    Log,
}

impl Kind {
    /// The outbox's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Update => "update",
            Kind::Log => "log",
        }
    }
}

/// How many failed attempts a log row gets before it is dropped.
pub const LOG_ATTEMPTS: i64 = 5;

/// Queues a row (inside the caller's transaction).
pub fn push(
    conn: &Connection,
    task_id: &str,
    kind: Kind,
    body: &str,
    at_ms: i64,
) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO outbox (task_id, kind, created_at_ms, next_attempt_ms)
         VALUES (?1, ?2, ?3, ?3)",
    )?
    .execute(params![task_id, kind.as_str(), at_ms])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached("INSERT INTO outbox_bodies (id, body) VALUES (?1, ?2)")?
        .execute(params![id, body])?;
    Ok(id)
}

/// Which rows a delivery thread sends: those whose id is `lane` modulo `lanes`, so each row
/// has exactly one sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    /// This thread's lane, below `lanes`.
    pub lane: u32,
    /// How many threads deliver.
    pub lanes: u32,
}

/// The pending rows of `lane` due at `now_ms`, updates first, each kind in order.
///
/// Every delivery pass runs this, so it must cost little: it walks `outbox_due` (pending
/// rows by kind, `update` before `log`, then id) and stops at `limit`, with no sort; and the
/// limit is part of the text, because a bound `LIMIT` makes SQLite prepare the statement again
/// at every run.
pub fn due(
    conn: &Connection,
    lane: Lane,
    now_ms: i64,
    limit: usize,
) -> rusqlite::Result<Vec<OutboxRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, task_id, kind, body, attempts, created_at_ms
         FROM outbox INDEXED BY outbox_due JOIN outbox_bodies USING (id)
         WHERE state = 'pending' AND next_attempt_ms <= ?1 AND id % ?2 = ?3
         ORDER BY kind DESC, id LIMIT {limit}"
    ))?;
    let rows = stmt.query_map(params![now_ms, lane.lanes, lane.lane], |r| {
        let kind: String = r.get(2)?;
        Ok(OutboxRow {
            id: r.get(0)?,
            task_id: r.get(1)?,
            kind: if kind == "log" {
                Kind::Log
            } else {
                Kind::Update
            },
            body: r.get(3)?,
            attempts: r.get(4)?,
            created_at_ms: r.get(5)?,
        })
    })?;
    rows.collect()
}

/// When the next pending row of `lane` is due (epoch ms), if any.
pub fn next_due(conn: &Connection, lane: Lane) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT min(next_attempt_ms) FROM outbox WHERE state = 'pending' AND id % ?1 = ?2",
    )?
    .query_row(params![lane.lanes, lane.lane], |r| r.get(0))
}

/// How an attempt at a row ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Conductor answered 2xx.
    Delivered,
    /// Try again at `retry_at_ms`.
    Retry {
        /// When.
        retry_at_ms: i64,
        /// Why it failed.
        error: String,
    },
    /// Conductor refused it (an update), or a log row ran out of attempts: not sent again.
    GivenUp {
        /// Why.
        error: String,
    },
}

/// Records an attempt at row `id` (inside the caller's transaction).
pub fn record(conn: &Connection, id: i64, attempt: &Attempt, now_ms: i64) -> rusqlite::Result<()> {
    match attempt {
        Attempt::Delivered => conn
            .prepare_cached(
                "UPDATE outbox SET state = 'delivered', delivered_at_ms = ?2 WHERE id = ?1",
            )?
            .execute(params![id, now_ms]),
        Attempt::Retry { retry_at_ms, error } => conn
            .prepare_cached(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_ms = ?2, last_error = ?3
                 WHERE id = ?1",
            )?
            .execute(params![id, retry_at_ms, error]),
        Attempt::GivenUp { error } => conn
            .prepare_cached(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2,
                   state = CASE kind WHEN 'update' THEN 'rejected' ELSE 'dropped' END
                 WHERE id = ?1",
            )?
            .execute(params![id, error]),
    }
    .map(drop)
}

/// The state of task `task_id`'s update: `pending`, `delivered` or `rejected`, with its
/// attempts and last error; `None` before the task ended.
pub fn update_state(
    conn: &Connection,
    task_id: &str,
) -> rusqlite::Result<Option<(String, i64, Option<String>)>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT state, attempts, last_error
         FROM ledger JOIN outbox ON outbox.id = ledger.update_id WHERE ledger.task_id = ?1",
    )?
    .query_row([task_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    .optional()
}

/// How many updates wait for delivery.
pub fn pending_updates(conn: &Connection) -> rusqlite::Result<u64> {
    conn.prepare_cached("SELECT count(*) FROM outbox WHERE state = 'pending' AND kind = 'update'")?
        .query_row([], |r| r.get::<_, i64>(0))
        .map(|n| u64::try_from(n).unwrap_or(0))
}
