//! The audit trail: events in a hash chain.
//!
//! Event `n` (from 1, no gaps) stores `prev_hash` (event `n-1`'s hash; 64 zeros for the first)
//! and `hash` = hex SHA-256 of its sequence number, `prev_hash`, task id, event type, time and
//! details, each on its own line behind a version tag. `audit_head` holds the last event's
//! number and hash, written in the same transaction. [`verify`] recomputes the chain: an
//! edited event no longer matches its hash, a removed one leaves a gap (or, at the end, a head
//! that points past the last event), reordered events break the links. Whoever can rewrite the
//! whole file can rewrite the whole chain too: keep the head hash [`verify`] prints somewhere
//! else to anchor it.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `prev_hash` of the first event.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One event of the trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    /// Its place in the chain, from 1.
    pub seq: i64,
    /// The task it is about.
    pub task_id: String,
    /// e.g. `task.claimed`, `task.contract_validation`, `task.done`.
    pub event_type: String,
    /// Epoch milliseconds.
    pub recorded_at_ms: i64,
    /// The event's details.
    pub details: Value,
    /// The previous event's hash.
    pub prev_hash: String,
    /// This event's hash.
    pub hash: String,
}

impl AuditEntry {
    /// The line written to the Conductor task's log.
    pub fn log_line(&self) -> String {
        serde_json::json!({
            "audit_seq": self.seq,
            "event": self.event_type,
            "details": self.details,
            "hash": self.hash,
        })
        .to_string()
    }
}

/// The hash of an event's content.
fn hash(
    seq: i64,
    prev_hash: &str,
    task_id: &str,
    event_type: &str,
    at_ms: i64,
    details: &str,
) -> String {
    let mut h = Sha256::new();
    h.update(format!(
        "perago-audit-v1\n{seq}\n{prev_hash}\n{task_id}\n{event_type}\n{at_ms}\n"
    ));
    h.update(details.as_bytes());
    let digest = h.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

/// Appends an event (inside the caller's transaction) and moves the head.
pub fn append(
    conn: &Connection,
    task_id: &str,
    event_type: &str,
    details: &Value,
    at_ms: i64,
) -> rusqlite::Result<AuditEntry> {
    let (last, prev_hash): (i64, String) = conn
        .prepare_cached("SELECT seq, hash FROM audit_head WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .unwrap_or((0, GENESIS.to_owned()));
    let seq = last + 1;
    let text = details.to_string();
    let hash = hash(seq, &prev_hash, task_id, event_type, at_ms, &text);
    conn.prepare_cached(
        "INSERT INTO audit (seq, task_id, event_type, recorded_at_ms, details, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        seq, task_id, event_type, at_ms, text, prev_hash, hash
    ])?;
    conn.prepare_cached(
        "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?1, ?2)
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
    )?
    .execute(params![seq, hash])?;
    Ok(AuditEntry {
        seq,
        task_id: task_id.to_owned(),
        event_type: event_type.to_owned(),
        recorded_at_ms: at_ms,
        details: details.clone(),
        prev_hash,
        hash,
    })
}

/// The events of `task_id`, in order.
pub fn of_task(conn: &Connection, task_id: &str) -> rusqlite::Result<Vec<AuditEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, task_id, event_type, recorded_at_ms, details, prev_hash, hash
         FROM audit WHERE task_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([task_id], |r| {
        let details: String = r.get(4)?;
        Ok(AuditEntry {
            seq: r.get(0)?,
            task_id: r.get(1)?,
            event_type: r.get(2)?,
            recorded_at_ms: r.get(3)?,
            details: serde_json::from_str(&details).unwrap_or(Value::String(details)),
            prev_hash: r.get(5)?,
            hash: r.get(6)?,
        })
    })?;
    rows.collect()
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Events read.
    pub events: u64,
    /// The head: the last event's number and hash (`None` for an empty trail).
    pub head: Option<(i64, String)>,
    /// Every break in the chain, in order; empty when the trail is intact.
    pub problems: Vec<String>,
}

impl Verification {
    /// Whether the trail is intact.
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Recomputes the whole chain, naming every event that was edited, removed or moved.
pub fn verify(conn: &Connection) -> rusqlite::Result<Verification> {
    let mut stmt = conn.prepare(
        "SELECT seq, task_id, event_type, recorded_at_ms, details, prev_hash, hash
         FROM audit ORDER BY seq",
    )?;
    let mut rows = stmt.query([])?;
    let mut problems = Vec::new();
    let mut expected_seq = 1;
    let mut prev_hash = GENESIS.to_owned();
    let mut events = 0;
    while let Some(r) = rows.next()? {
        events += 1;
        let seq: i64 = r.get(0)?;
        let task_id: String = r.get(1)?;
        let event_type: String = r.get(2)?;
        let at_ms: i64 = r.get(3)?;
        let details: String = r.get(4)?;
        let stored_prev: String = r.get(5)?;
        let stored_hash: String = r.get(6)?;
        if seq != expected_seq {
            problems.push(if seq > expected_seq {
                format!(
                    "events {expected_seq}..{} are missing (removed): the trail jumps from {} to {seq}",
                    seq - 1,
                    expected_seq - 1
                )
            } else {
                format!("event {seq} appears out of order (expected {expected_seq})")
            });
        }
        if stored_prev != prev_hash {
            problems.push(format!(
                "event {seq} ({event_type}, task {task_id}): its prev_hash is not the hash of the \
                 event before it (events removed, reordered or rewritten)"
            ));
        }
        let computed = hash(seq, &stored_prev, &task_id, &event_type, at_ms, &details);
        if computed != stored_hash {
            problems.push(format!(
                "event {seq} ({event_type}, task {task_id}): its content does not match its hash \
                 (edited)"
            ));
        }
        prev_hash = stored_hash;
        expected_seq = seq + 1;
    }
    let head: Option<(i64, String)> = conn
        .query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let last = expected_seq - 1;
    match &head {
        None if events > 0 => problems.push(format!(
            "the head is missing, {events} events remain (the head was removed)"
        )),
        Some((seq, hash)) if *seq != last || *hash != prev_hash => problems.push(format!(
            "the head names event {seq} but the trail ends at event {last} with another hash \
             (events removed from the end, or the head edited)"
        )),
        _ => {}
    }
    Ok(Verification {
        events,
        head,
        problems,
    })
}
