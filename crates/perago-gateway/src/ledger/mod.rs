//! The ledger: the gateway's source of truth, an embedded SQLite database in WAL mode.
//!
//! Tables: `tasks` (one row per claimed task: who holds it, its lease, its status),
//! `task_inputs` (its `inputData`, written once), `ledger` (one entry per task that ended:
//! `contract_version`, `contract_validation`, `contract_error_path` and the canonical payload
//! for a validated payload, and its update's outbox row; `UNIQUE` on the task, so no task ends
//! twice), `followups` (the ids of `docs/src/reference/completion-contract.md` §8, created
//! once), `audit` and `audit_head` (the hash chain, [`audit`]) and `outbox` with
//! `outbox_bodies` (what Conductor must be told, [`outbox`]).
//!
//! The functions here each make one transition inside the caller's transaction
//! ([`crate::writer`] runs them): [`claim`], [`heartbeat`], [`finish`] and [`expire`] write
//! the task's new state, its ledger entry, its audit events and its outbox rows together; a
//! claim's slot is free as soon as its status is not `claimed` (see [`claimed_counts`]), so
//! the slot is released in the same transaction.

pub mod audit;
pub mod outbox;

use crate::transition::{Decision, TaskStatus};
use audit::AuditEntry;
use perago_completion::FollowUpSpec;
use perago_conductor::tasks::{TaskExecLog, TaskResult};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many prepared statements a connection keeps: more than the writer uses (rusqlite keeps
/// 16 by default, fewer than the writer's statements, so they would be parsed again in turn).
const STATEMENT_CACHE: usize = 64;

/// The schema's version (`PRAGMA user_version`). 2: inputs and outbox bodies in tables of
/// their own, and a ledger entry names its update's outbox row (`FROM_VERSION_1`).
pub const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    task_type TEXT NOT NULL,
    workflow_instance_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('claimed', 'done', 'refused', 'failed')),
    lease_ms INTEGER NOT NULL,
    lease_deadline_ms INTEGER NOT NULL,
    claimed_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    result_summary TEXT,
    terminal_reason TEXT,
    failure TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_lease ON tasks (status, lease_deadline_ms);
-- A task's input, written once at its claim. In the task's row, which every transition
-- changes, it was written again by each (SQLite writes a changed row whole, its overflow
-- pages included): with 32 KB inputs a completion wrote some ten pages more. Likewise for
-- an outbox row's body (`outbox_bodies`), which its delivery would write again.
CREATE TABLE IF NOT EXISTS task_inputs (
    task_id TEXT PRIMARY KEY REFERENCES tasks (task_id),
    input_data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger (
    entry_id INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL UNIQUE REFERENCES tasks (task_id),
    outcome TEXT NOT NULL,
    contract_version TEXT,
    contract_validation TEXT,
    contract_error_path TEXT,
    canonical TEXT,
    violations TEXT,
    conductor_status TEXT NOT NULL,
    conductor_reason TEXT,
    recorded_at_ms INTEGER NOT NULL,
    -- The outbox row of the update that reports this entry to Conductor: how a task's
    -- update is found without an index of the outbox by task.
    update_id INTEGER REFERENCES outbox (id)
);
CREATE TABLE IF NOT EXISTS followups (
    id TEXT PRIMARY KEY,
    parent_task_id TEXT NOT NULL REFERENCES tasks (task_id),
    split_index INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    origin TEXT NOT NULL,
    contract_version TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS followups_by_parent ON followups (parent_task_id, split_index);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    details TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_task ON audit (task_id, seq);
CREATE TABLE IF NOT EXISTS audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('update', 'log')),
    created_at_ms INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'delivered', 'rejected', 'dropped')),
    delivered_at_ms INTEGER,
    last_error TEXT
);
-- The order delivery reads pending rows in (`outbox::due`): updates first ('update' sorts
-- after 'log'), then by id. It replaced `outbox_pending (state, next_attempt_ms)`, whose order
-- every pass had to sort: one index, so a row's state change rewrites no more pages than before.
DROP INDEX IF EXISTS outbox_pending;
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (state, kind DESC, id);
-- A row's body, apart from the row its delivery changes (as `task_inputs`, written once).
CREATE TABLE IF NOT EXISTS outbox_bodies (
    id INTEGER PRIMARY KEY REFERENCES outbox (id),
    body TEXT NOT NULL
);
";

/// Brings a version 1 ledger to version 2, after [`SCHEMA`] created the new tables: the
/// inputs and bodies move out of their rows (each `DROP COLUMN` rewrites its table once), and
/// each ledger entry gets its update's outbox row (found through an index made for the
/// purpose, then dropped).
const FROM_VERSION_1: &str = "
INSERT INTO task_inputs (task_id, input_data) SELECT task_id, input_data FROM tasks;
ALTER TABLE tasks DROP COLUMN input_data;
INSERT INTO outbox_bodies (id, body) SELECT id, body FROM outbox;
ALTER TABLE outbox DROP COLUMN body;
ALTER TABLE ledger ADD COLUMN update_id INTEGER REFERENCES outbox (id);
CREATE INDEX outbox_updates_by_task ON outbox (task_id) WHERE kind = 'update';
UPDATE ledger SET update_id =
    (SELECT id FROM outbox WHERE outbox.task_id = ledger.task_id AND kind = 'update');
DROP INDEX outbox_updates_by_task;
";

/// What can go wrong with the database.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// SQLite refused an operation.
    #[error("ledger {path}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// SQLite would not put the database in WAL mode (e.g. an in-memory path).
    #[error(
        "ledger {path}: journal mode is {mode}, not WAL (the ledger needs a file on a local disk)"
    )]
    NotWal {
        /// The database file.
        path: String,
        /// The mode SQLite kept.
        mode: String,
    },
    /// The file was written by a newer gateway.
    #[error(
        "ledger {path}: schema version {found} is newer than this gateway's ({SCHEMA_VERSION})"
    )]
    NewerSchema {
        /// The database file.
        path: String,
        /// Its version.
        found: i64,
    },
}

/// How durable a commit is before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous = FULL`: every commit is on disk (`fsync`) before it is answered, so it
    /// survives a crash of the machine, not only of the gateway. The default.
    #[default]
    Full,
    /// `synchronous = NORMAL`: a commit is in the write-ahead log (the operating system's
    /// cache) when answered: it survives the gateway being killed, but the last commits may be
    /// lost if the machine itself fails before the log is synced (at checkpoints).
    Normal,
}

impl Durability {
    /// Reads `full` or `normal` (the `--durability` flag).
    pub fn parse(text: &str) -> Result<Durability, String> {
        match text.trim() {
            "full" => Ok(Durability::Full),
            "normal" => Ok(Durability::Normal),
            other => Err(format!(
                "--durability: expected full or normal, got {other:?}"
            )),
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }
}

/// A ledger opened for writing.
#[derive(Debug)]
pub struct Opened {
    /// The read-write connection.
    pub conn: Connection,
    /// The schema version the file had when it was older than [`SCHEMA_VERSION`] and was
    /// brought up to it (a new file is not counted).
    pub upgraded_from: Option<i64>,
}

/// Opens (creating when missing) the database at `path` for reading and writing, in WAL mode,
/// commits as durable as `durability` says, at [`SCHEMA_VERSION`].
pub fn open(path: &Path, durability: Durability) -> Result<Opened, LedgerError> {
    let shown = path.display().to_string();
    let wrap = |source| LedgerError::Sqlite {
        path: shown.clone(),
        source,
    };
    let conn = Connection::open(path).map_err(wrap)?;
    configure(&conn).map_err(wrap)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(wrap)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(LedgerError::NotWal { path: shown, mode });
    }
    conn.pragma_update(None, "synchronous", durability.pragma())
        .map_err(wrap)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(wrap)?;
    // One transaction, the version read inside it: a ledger is at one version or the next,
    // never between, and a second process opening the file meanwhile waits for the first to
    // finish, then finds it current. (On an error the connection is dropped, which rolls the
    // transaction back.)
    conn.execute_batch("BEGIN IMMEDIATE").map_err(wrap)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(wrap)?;
    if version > SCHEMA_VERSION {
        return Err(LedgerError::NewerSchema {
            path: shown,
            found: version,
        });
    }
    let migrate = if version == 1 { FROM_VERSION_1 } else { "" };
    conn.execute_batch(&format!(
        "{SCHEMA} {migrate} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    ))
    .map_err(wrap)?;
    Ok(Opened {
        conn,
        upgraded_from: (version > 0 && version < SCHEMA_VERSION).then_some(version),
    })
}

/// Opens an existing database for reading beside the writer (WAL lets readers run while it
/// writes): a missing file is an error, never created. (`audit verify`, `GET /v1/tasks/{id}`,
/// the delivery thread.)
pub fn open_existing(path: &Path) -> Result<Connection, LedgerError> {
    let shown = path.display().to_string();
    let wrap = |source| LedgerError::Sqlite {
        path: shown.clone(),
        source,
    };
    // Read-write without create: a read-only connection cannot open a WAL database whose
    // shared-memory file is gone (after a clean shutdown).
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(wrap)?;
    configure(&conn).map_err(wrap)?;
    Ok(conn)
}

/// What every connection to the ledger sets: wait up to 10 s for another's lock instead of
/// failing, and keep SQLite's temporary files in memory. Otherwise a transition that changes
/// more than 64 KiB of existing pages (a delivery pass recording its 128 rows) spills its
/// savepoint's journal to a file in `/var/tmp`, `/tmp` or the working directory: written and
/// never read once the savepoint is released, and a failed transition where none of them is
/// writable (a container's read-only root filesystem). The ledger writes only its own files.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "temp_store", "MEMORY")
}

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Epoch milliseconds as RFC 3339 (UTC, milliseconds).
pub fn rfc3339(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

/// A task just polled for an agent.
#[derive(Debug, Clone)]
pub struct NewClaim<'a> {
    /// `taskId`.
    pub task_id: &'a str,
    /// The task type.
    pub task_type: &'a str,
    /// `workflowInstanceId`.
    pub workflow_instance_id: &'a str,
    /// The agent.
    pub agent_id: &'a str,
    /// `inputData` as Conductor sent it.
    pub input_data: &'a str,
    /// The claim's lease.
    pub lease_ms: i64,
}

/// Records a claim: the task (`claimed`, its lease from now), the `task.claimed` event and its
/// log line for Conductor. `Ok(false)`: the task is in the ledger already (Conductor handed
/// out a task this gateway holds or has ended), nothing written.
pub fn claim(conn: &Connection, claim: &NewClaim<'_>, now: i64) -> rusqlite::Result<bool> {
    let inserted = conn
        .prepare_cached(
            "INSERT INTO tasks (task_id, task_type, workflow_instance_id, agent_id, status,
               lease_ms, lease_deadline_ms, claimed_at_ms, updated_at_ms)
             VALUES (?1, ?2, ?3, ?4, 'claimed', ?5, ?6, ?7, ?7)
             ON CONFLICT (task_id) DO NOTHING",
        )?
        .execute(params![
            claim.task_id,
            claim.task_type,
            claim.workflow_instance_id,
            claim.agent_id,
            claim.lease_ms,
            now.saturating_add(claim.lease_ms),
            now
        ])?;
    if inserted == 0 {
        return Ok(false);
    }
    conn.prepare_cached("INSERT INTO task_inputs (task_id, input_data) VALUES (?1, ?2)")?
        .execute(params![claim.task_id, claim.input_data])?;
    let event = audit::append(
        conn,
        claim.task_id,
        "task.claimed",
        &json!({
            "agent_id": claim.agent_id,
            "task_type": claim.task_type,
            "workflow_instance_id": claim.workflow_instance_id,
            "lease_ms": claim.lease_ms,
        }),
        now,
    )?;
    outbox::push(
        conn,
        claim.task_id,
        outbox::Kind::Log,
        &event.log_line(),
        now,
    )?;
    Ok(true)
}

/// Who holds a task and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The task type.
    pub task_type: String,
    /// `workflowInstanceId`.
    pub workflow_instance_id: String,
    /// The agent that claimed it.
    pub agent_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// The claim's lease.
    pub lease_ms: i64,
    /// When the lease lapses.
    pub lease_deadline_ms: i64,
}

/// The holder of `task_id`, if the ledger has the task.
pub fn holder(conn: &Connection, task_id: &str) -> rusqlite::Result<Option<Holder>> {
    conn.prepare_cached(
        "SELECT task_type, workflow_instance_id, agent_id, status, lease_ms, lease_deadline_ms
         FROM tasks WHERE task_id = ?1",
    )?
    .query_row([task_id], |r| {
        let status: String = r.get(3)?;
        Ok(Holder {
            task_type: r.get(0)?,
            workflow_instance_id: r.get(1)?,
            agent_id: r.get(2)?,
            status: TaskStatus::from_name(&status).unwrap_or(TaskStatus::Failed),
            lease_ms: r.get(4)?,
            lease_deadline_ms: r.get(5)?,
        })
    })
    .optional()
}

/// Why a transition asked for by an agent did not happen; nothing was written.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// No such task in the ledger (404).
    NotFound,
    /// Another agent holds it (403).
    NotYours {
        /// The holder.
        holder: String,
    },
    /// It has ended (409): the ledger's answer.
    Terminal(Box<Ended>),
}

/// A task that has ended, as a re-delivery is answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ended {
    /// The task.
    pub task_id: String,
    /// `done`, `refused` or `failed`.
    pub status: String,
    /// Its terminal reason, if any.
    pub terminal_reason: Option<String>,
    /// Its ledger entry.
    pub ledger_entry: Option<LedgerEntry>,
}

impl Ended {
    /// The 409's `detail`.
    pub fn detail(&self) -> String {
        let reason = self
            .terminal_reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        format!(
            "task {} is already {}{reason}: a re-delivery changes nothing; this is the ledger's \
             record",
            self.task_id, self.status
        )
    }
}

/// Checks that `agent_id` may act on `task_id` now. A claim whose lease lapsed is ended here
/// first (as the sweeper would), so an agent never completes past its lease.
fn check_holder(
    conn: &Connection,
    task_id: &str,
    agent_id: &str,
    now: i64,
    reason_max_length: usize,
    worker_id: &str,
) -> rusqlite::Result<Result<Holder, Refused>> {
    let Some(holder) = holder(conn, task_id)? else {
        return Ok(Err(Refused::NotFound));
    };
    if holder.agent_id != agent_id {
        return Ok(Err(Refused::NotYours {
            holder: holder.agent_id,
        }));
    }
    if holder.status == TaskStatus::Claimed && holder.lease_deadline_ms <= now {
        expire(conn, task_id, now, reason_max_length, worker_id)?;
    }
    if holder.status.is_terminal() || holder.lease_deadline_ms <= now {
        return Ok(Err(Refused::Terminal(Box::new(ended(conn, task_id)?))));
    }
    Ok(Ok(holder))
}

/// The ledger's record of an ended task.
fn ended(conn: &Connection, task_id: &str) -> rusqlite::Result<Ended> {
    let (status, terminal_reason): (String, Option<String>) = conn
        .prepare_cached("SELECT status, terminal_reason FROM tasks WHERE task_id = ?1")?
        .query_row([task_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(Ended {
        task_id: task_id.to_owned(),
        status,
        terminal_reason,
        ledger_entry: ledger_entry(conn, task_id)?,
    })
}

/// Extends the lease of `agent_id`'s claim on `task_id`: the new deadline and the holder.
pub fn heartbeat(
    conn: &Connection,
    task_id: &str,
    agent_id: &str,
    now: i64,
    reason_max_length: usize,
    worker_id: &str,
) -> rusqlite::Result<Result<(Holder, i64), Refused>> {
    let holder = match check_holder(conn, task_id, agent_id, now, reason_max_length, worker_id)? {
        Ok(holder) => holder,
        Err(refused) => return Ok(Err(refused)),
    };
    let deadline = now.saturating_add(holder.lease_ms);
    conn.prepare_cached(
        "UPDATE tasks SET lease_deadline_ms = ?2, updated_at_ms = ?3 WHERE task_id = ?1",
    )?
    .execute(params![task_id, deadline, now])?;
    Ok(Ok((holder, deadline)))
}

/// What [`finish`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The holder as it was.
    pub holder: Holder,
    /// The audit events written.
    pub events: Vec<AuditEntry>,
    /// The ledger entry written.
    pub entry: LedgerEntry,
}

/// Ends `agent_id`'s claim on `task_id` as `decision` says: one transaction of the task's new
/// status, its ledger entry, its follow-ups (ids that exist are skipped), its audit events
/// and the Conductor update in the outbox (carrying the events as its `logs`).
pub fn finish(
    conn: &Connection,
    task_id: &str,
    agent_id: &str,
    decision: &Decision,
    now: i64,
    reason_max_length: usize,
    worker_id: &str,
) -> rusqlite::Result<Result<Finished, Refused>> {
    let holder = match check_holder(conn, task_id, agent_id, now, reason_max_length, worker_id)? {
        Ok(holder) => holder,
        Err(refused) => return Ok(Err(refused)),
    };
    let (entry, events) = end(conn, task_id, &holder, decision, now, worker_id)?;
    Ok(Ok(Finished {
        holder,
        events,
        entry,
    }))
}

/// Ends the claim on `task_id` if it is still `claimed` and its lease has lapsed; the task's
/// type when it did.
pub fn expire(
    conn: &Connection,
    task_id: &str,
    now: i64,
    reason_max_length: usize,
    worker_id: &str,
) -> rusqlite::Result<Option<String>> {
    let Some(holder) = holder(conn, task_id)? else {
        return Ok(None);
    };
    if holder.status != TaskStatus::Claimed || holder.lease_deadline_ms > now {
        return Ok(None);
    }
    let decision = crate::transition::lease_expired(
        &holder.agent_id,
        u64::try_from(holder.lease_ms).unwrap_or(0),
        reason_max_length,
    );
    end(conn, task_id, &holder, &decision, now, worker_id)?;
    Ok(Some(holder.task_type))
}

/// The claims whose lease lapsed by `now`.
pub fn lapsed(conn: &Connection, now: i64) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT task_id FROM tasks WHERE status = 'claimed' AND lease_deadline_ms <= ?1",
    )?;
    let rows = stmt.query_map([now], |r| r.get(0))?;
    rows.collect()
}

/// The claims held per task type: the slots in use.
pub fn claimed_counts(conn: &Connection) -> rusqlite::Result<BTreeMap<String, usize>> {
    let mut stmt =
        conn.prepare("SELECT task_type, count(*) FROM tasks WHERE status = 'claimed' GROUP BY 1")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    rows.map(|r| r.map(|(t, n)| (t, usize::try_from(n).unwrap_or(0))))
        .collect()
}

/// The transition itself: status, follow-ups, audit events, outbox, and the ledger entry,
/// which names its update's outbox row.
fn end(
    conn: &Connection,
    task_id: &str,
    holder: &Holder,
    decision: &Decision,
    now: i64,
    worker_id: &str,
) -> rusqlite::Result<(LedgerEntry, Vec<AuditEntry>)> {
    conn.prepare_cached(
        "UPDATE tasks SET status = ?2, result_summary = ?3, terminal_reason = ?4, failure = ?5,
           updated_at_ms = ?6
         WHERE task_id = ?1 AND status = 'claimed'",
    )?
    .execute(params![
        task_id,
        decision.status.as_str(),
        decision.result_summary,
        decision.terminal_reason,
        decision.failure,
        now
    ])?;
    let record = decision.record.as_ref();
    for f in &decision.followups {
        conn.prepare_cached(
            "INSERT INTO followups (id, parent_task_id, split_index, title, description, origin,
               contract_version, created_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (id) DO NOTHING",
        )?
        .execute(params![
            f.id,
            f.parent_task_id,
            i64::try_from(f.split_index).unwrap_or(i64::MAX),
            f.title,
            f.description,
            f.origin,
            f.contract_version,
            now
        ])?;
    }
    let mut events = Vec::new();
    if let Some(record) = record {
        let details = serde_json::to_value(record.audit_event()).unwrap_or(Value::Null);
        events.push(audit::append(
            conn,
            task_id,
            perago_completion::AuditEvent::EVENT_TYPE,
            &details,
            now,
        )?);
    }
    let mut details = json!({
        "agent_id": holder.agent_id,
        "outcome": decision.outcome,
        "conductor_status": decision.conductor.status.as_str(),
    });
    if let Some(reason) = &decision.terminal_reason {
        details["terminal_reason"] = json!(reason);
    }
    if !decision.followups.is_empty() {
        details["followups"] = json!(decision.followups.iter().map(|f| &f.id).collect::<Vec<_>>());
    }
    events.push(audit::append(
        conn,
        task_id,
        &format!("task.{}", decision.status),
        &details,
        now,
    )?);
    let update = TaskResult {
        workflow_instance_id: holder.workflow_instance_id.clone(),
        task_id: task_id.to_owned(),
        status: decision.conductor.status,
        output_data: decision.conductor.output.clone(),
        reason_for_incompletion: decision.conductor.reason.clone(),
        callback_after_seconds: None,
        worker_id: Some(format!("{worker_id}/{}", holder.agent_id)),
        logs: events
            .iter()
            .map(|e| TaskExecLog {
                log: e.log_line(),
                task_id: task_id.to_owned(),
                created_time: now,
            })
            .collect(),
        extend_lease: false,
    };
    let body = serde_json::to_string(&update).unwrap_or_default();
    let update_id = outbox::push(conn, task_id, outbox::Kind::Update, &body, now)?;
    let entry = LedgerEntry::of(decision, now);
    let text = |v: &Option<Value>| v.as_ref().map(Value::to_string);
    conn.prepare_cached(
        "INSERT INTO ledger (task_id, outcome, contract_version, contract_validation,
           contract_error_path, canonical, violations, conductor_status, conductor_reason,
           recorded_at_ms, update_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        task_id,
        entry.outcome,
        entry.contract_version,
        entry.contract_validation,
        entry.contract_error_path,
        text(&entry.canonical),
        text(&entry.violations),
        entry.conductor_status,
        entry.conductor_reason,
        now,
        update_id
    ])?;
    Ok((entry, events))
}

/// A task's ledger entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LedgerEntry {
    /// `completion`, `refusal`, `legacy_prose`, `empty`, `violation` or `lease_expired`.
    pub outcome: String,
    /// `worker-completion/v1`, for a validated payload.
    pub contract_version: Option<String>,
    /// `valid`, `violation` or `refused:<kind>`, for a validated payload.
    pub contract_validation: Option<String>,
    /// The primary violation's path.
    pub contract_error_path: Option<String>,
    /// The canonical payload, for a valid one.
    pub canonical: Option<Value>,
    /// Every violation, for a violation.
    pub violations: Option<Value>,
    /// What Conductor is told: `COMPLETED` or `FAILED`.
    pub conductor_status: String,
    /// The reason Conductor is given.
    pub conductor_reason: Option<String>,
    /// When (RFC 3339).
    pub recorded_at: String,
}

impl LedgerEntry {
    /// The entry `decision` writes at `now`.
    pub fn of(decision: &Decision, now: i64) -> LedgerEntry {
        let record = decision.record.as_ref();
        LedgerEntry {
            outcome: decision.outcome.to_owned(),
            contract_version: record.map(|r| r.contract_version.clone()),
            contract_validation: record.map(|r| r.contract_validation.to_string()),
            contract_error_path: record.and_then(|r| r.contract_error_path.clone()),
            canonical: record
                .and_then(|r| r.canonical.as_ref())
                .map(|c| c.to_canonical()),
            violations: (!decision.violations.is_empty()).then(|| {
                Value::Array(
                    decision
                        .violations
                        .iter()
                        .map(|v| {
                            json!({"path": v.path.as_str(), "code": v.code, "message": v.message})
                        })
                        .collect(),
                )
            }),
            conductor_status: decision.conductor.status.as_str().to_owned(),
            conductor_reason: decision.conductor.reason.clone(),
            recorded_at: rfc3339(now),
        }
    }
}

/// The ledger entry of `task_id`, if it ended.
pub fn ledger_entry(conn: &Connection, task_id: &str) -> rusqlite::Result<Option<LedgerEntry>> {
    conn.prepare_cached(
        "SELECT outcome, contract_version, contract_validation, contract_error_path, canonical,
           violations, conductor_status, conductor_reason, recorded_at_ms
         FROM ledger WHERE task_id = ?1",
    )?
    .query_row([task_id], |r| {
        let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        Ok(LedgerEntry {
            outcome: r.get(0)?,
            contract_version: r.get(1)?,
            contract_validation: r.get(2)?,
            contract_error_path: r.get(3)?,
            canonical: json(r.get(4)?),
            violations: json(r.get(5)?),
            conductor_status: r.get(6)?,
            conductor_reason: r.get(7)?,
            recorded_at: rfc3339(r.get(8)?),
        })
    })
    .optional()
}

/// A task's whole record: what `GET /v1/tasks/{id}` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    /// `taskId`.
    pub task_id: String,
    /// The task type.
    pub task_type: String,
    /// `workflowInstanceId`.
    pub workflow_instance_id: String,
    /// The agent that claimed it.
    pub agent_id: String,
    /// `claimed`, `done`, `refused` or `failed`.
    pub status: String,
    /// The summary, refusal detail or prose.
    pub result_summary: Option<String>,
    /// `refused:<kind>`, `contract_violation` or `lease_expired`.
    pub terminal_reason: Option<String>,
    /// Why it failed, in words.
    pub failure: Option<String>,
    /// When the claim's lease lapses (a claimed task) or lapsed.
    pub lease_deadline: String,
    /// When it was claimed.
    pub claimed_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// `inputData` as Conductor sent it.
    pub input_data: Value,
    /// Its ledger entries (at most one: the one that ended it).
    pub ledger: Vec<LedgerEntry>,
    /// The follow-ups it derived.
    pub followups: Vec<FollowUpSpec>,
    /// Its audit events.
    pub audit: Vec<AuditEntry>,
    /// Its Conductor update: `{state: pending | delivered | rejected, attempts, last_error}`.
    pub conductor_update: Option<Value>,
}

/// The record of `task_id`, if the ledger has the task.
pub fn record(conn: &Connection, task_id: &str) -> rusqlite::Result<Option<TaskRecord>> {
    let row = conn
        .prepare_cached(
            "SELECT task_type, workflow_instance_id, agent_id, status, result_summary,
               terminal_reason, failure, lease_deadline_ms, claimed_at_ms, updated_at_ms,
               input_data
             FROM tasks JOIN task_inputs USING (task_id) WHERE task_id = ?1",
        )?
        .query_row([task_id], |r| {
            let input: String = r.get(10)?;
            Ok(TaskRecord {
                task_id: task_id.to_owned(),
                task_type: r.get(0)?,
                workflow_instance_id: r.get(1)?,
                agent_id: r.get(2)?,
                status: r.get(3)?,
                result_summary: r.get(4)?,
                terminal_reason: r.get(5)?,
                failure: r.get(6)?,
                lease_deadline: rfc3339(r.get(7)?),
                claimed_at: rfc3339(r.get(8)?),
                updated_at: rfc3339(r.get(9)?),
                input_data: serde_json::from_str(&input).unwrap_or(Value::String(input)),
                ledger: Vec::new(),
                followups: Vec::new(),
                audit: Vec::new(),
                conductor_update: None,
            })
        })
        .optional()?;
    let Some(mut record) = row else {
        return Ok(None);
    };
    record.ledger = ledger_entry(conn, task_id)?.into_iter().collect();
    record.followups = followups(conn, task_id)?;
    record.audit = audit::of_task(conn, task_id)?;
    record.conductor_update = outbox::update_state(conn, task_id)?.map(|(state, attempts, error)| {
        json!({"state": state, "attempts": attempts, "last_error": error})
    });
    Ok(Some(record))
}

/// The follow-ups derived from `task_id`, in split order.
pub fn followups(conn: &Connection, task_id: &str) -> rusqlite::Result<Vec<FollowUpSpec>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, split_index, title, description, origin, contract_version FROM followups
         WHERE parent_task_id = ?1 ORDER BY split_index",
    )?;
    let rows = stmt.query_map([task_id], |r| {
        Ok(FollowUpSpec {
            id: r.get(0)?,
            parent_task_id: task_id.to_owned(),
            split_index: usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
            title: r.get(2)?,
            description: r.get(3)?,
            origin: r.get(4)?,
            contract_version: r.get(5)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::outbox::Lane;
    use super::*;

    /// The files this process has open that were deleted, as SQLite's temporary files are.
    #[cfg(target_os = "linux")]
    fn deleted_open_files() -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .map(|target| target.display().to_string())
            .filter(|target| target.ends_with("(deleted)"))
            .collect()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_savepoint_writes_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("ledger.db"), Durability::Normal)
            .unwrap()
            .conn;
        // 64 rows of 4 KB: about 64 pages that exist before the savepoint, so changing them
        // all journals some 256 KiB, four times SQLite's spill threshold.
        let body = "x".repeat(4000);
        for i in 0..64 {
            outbox::push(&conn, &format!("task-{i}"), outbox::Kind::Log, &body, 0).unwrap();
        }
        let before = deleted_open_files();
        conn.execute_batch("BEGIN IMMEDIATE; SAVEPOINT transition;")
            .unwrap();
        conn.execute("UPDATE outbox_bodies SET body = upper(body)", [])
            .unwrap();
        let during = deleted_open_files();
        conn.execute_batch("ROLLBACK").unwrap();
        let opened: Vec<_> = during.iter().filter(|f| !before.contains(f)).collect();
        assert!(opened.is_empty(), "temporary files opened: {opened:?}");
    }

    fn version(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    }

    const INPUT: &str = r#"{"params":{"title":"kept"}}"#;

    /// A ledger version 1 left at `path` (its schema as that version created it): a task that
    /// ended, with its follow-up and its delivered update, and a claimed task whose claim's
    /// log line waits.
    fn version_1_ledger(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(include_str!("../../tests/data/ledger-v1.sql"))
            .unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO tasks (task_id, task_type, workflow_instance_id, agent_id, status,
               input_data, lease_ms, lease_deadline_ms, claimed_at_ms, updated_at_ms)
             VALUES ('t0', 'agent_task', 'w0', 'agent-0', 'refused', '{INPUT}', 1000, 2000,
               1000, 1500),
               ('t1', 'agent_task', 'w1', 'agent-1', 'claimed', '{INPUT}', 1000, 2000, 1000,
               1000);
             INSERT INTO ledger (task_id, outcome, conductor_status, recorded_at_ms)
             VALUES ('t0', 'refusal', 'COMPLETED', 1500);
             INSERT INTO followups (id, parent_task_id, split_index, title, description,
               origin, contract_version, created_at_ms)
             VALUES ('f0', 't0', 0, 'part', 'the rest', 'scope_exceeded',
               'worker-completion/v1', 1500);
             INSERT INTO outbox (task_id, kind, body, created_at_ms, next_attempt_ms, state)
             VALUES ('t0', 'log', 'log-0', 1000, 1000, 'delivered'),
               ('t1', 'log', 'log-1', 1000, 1000, 'pending'),
               ('t0', 'update', 'update-0', 1500, 1500, 'delivered');"
        ))
        .unwrap();
        for task in ["t0", "t1"] {
            audit::append(&conn, task, "task.claimed", &json!({}), 1000).unwrap();
        }
    }

    /// A version 1 ledger, opened: it is at the current version, nothing is lost, the audit
    /// trail is intact, and the tasks go on.
    #[test]
    fn a_version_1_ledger_is_brought_to_the_current_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.db");
        version_1_ledger(&path);
        let all = Lane { lane: 0, lanes: 1 };
        for upgraded_from in [Some(1), None] {
            // Opened twice: the second time finds it current and changes nothing.
            let opened = open(&path, Durability::Normal).unwrap();
            assert_eq!(opened.upgraded_from, upgraded_from);
            let conn = opened.conn;
            assert_eq!(version(&conn), SCHEMA_VERSION);
            assert!(conn.prepare("SELECT input_data FROM tasks").is_err());
            assert!(conn.prepare("SELECT body FROM outbox").is_err());
            let ended = record(&conn, "t0").unwrap().expect("the task is kept");
            assert_eq!(ended.input_data, json!({"params": {"title": "kept"}}));
            assert_eq!(ended.ledger.len(), 1);
            assert_eq!(ended.followups.len(), 1);
            assert_eq!(
                ended.conductor_update,
                Some(json!({"state": "delivered", "attempts": 0, "last_error": null}))
            );
            let claimed = record(&conn, "t1").unwrap().expect("the task is kept");
            assert_eq!(
                (claimed.status.as_str(), claimed.audit.len()),
                ("claimed", 1)
            );
            assert_eq!(claimed.conductor_update, None);
            let due = outbox::due(&conn, all, 1000, 10).unwrap();
            let due: Vec<_> = due
                .iter()
                .map(|r| (r.task_id.as_str(), r.body.as_str()))
                .collect();
            assert_eq!(due, [("t1", "log-1")]);
            assert!(audit::verify(&conn).unwrap().is_intact());
        }
        let conn = open(&path, Durability::Normal).unwrap().conn;
        let expired = expire(&conn, "t1", 2000, 200, "gateway").unwrap();
        assert_eq!(expired.as_deref(), Some("agent_task"));
        let ended = record(&conn, "t1").unwrap().unwrap();
        assert_eq!(ended.status, "failed");
        assert_eq!(ended.conductor_update.unwrap()["state"], "pending");
        let due = outbox::due(&conn, all, 2000, 10).unwrap();
        let due: Vec<_> = due.iter().map(|r| (r.task_id.as_str(), r.kind)).collect();
        assert_eq!(
            due,
            [("t1", outbox::Kind::Update), ("t1", outbox::Kind::Log)]
        );
        let claim = NewClaim {
            task_id: "t2",
            task_type: "agent_task",
            workflow_instance_id: "w2",
            agent_id: "agent-2",
            input_data: INPUT,
            lease_ms: 1000,
        };
        assert!(super::claim(&conn, &claim, 3000).unwrap());
        assert_eq!(
            record(&conn, "t2").unwrap().unwrap().input_data["params"]["title"],
            "kept"
        );
        assert!(audit::verify(&conn).unwrap().is_intact());
    }

    /// Gateways started together on one version 1 ledger (which the docs advise against):
    /// one upgrades it, the others wait for it and find it current.
    #[test]
    fn a_ledger_opened_by_several_at_once_is_upgraded_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.db");
        version_1_ledger(&path);
        let start = std::sync::Barrier::new(4);
        let upgraded: Vec<Option<i64>> = std::thread::scope(|scope| {
            let opens: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        open(&path, Durability::Normal).map(|o| o.upgraded_from)
                    })
                })
                .collect();
            opens
                .into_iter()
                .map(|t| t.join().unwrap().unwrap())
                .collect()
        });
        assert_eq!(
            upgraded.iter().filter(|u| u.is_some()).count(),
            1,
            "{upgraded:?}"
        );
        let conn = open(&path, Durability::Normal).unwrap().conn;
        assert_eq!(
            record(&conn, "t1").unwrap().unwrap().input_data["params"]["title"],
            "kept"
        );
    }

    #[test]
    fn a_ledger_of_a_newer_version_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(conn);
        let error = open(&path, Durability::Normal).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "ledger {}: schema version {} is newer than this gateway's ({SCHEMA_VERSION})",
                path.display(),
                SCHEMA_VERSION + 1
            )
        );
        let conn = Connection::open(&path).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION + 1);
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0);
    }
}
