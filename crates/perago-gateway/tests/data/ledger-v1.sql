-- The ledger's schema as version 1 of the gateway wrote it (PRAGMA user_version = 1):
-- the fixture of the test that brings a version 1 ledger to the current version.
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    task_type TEXT NOT NULL,
    workflow_instance_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('claimed', 'done', 'refused', 'failed')),
    input_data TEXT NOT NULL,
    lease_ms INTEGER NOT NULL,
    lease_deadline_ms INTEGER NOT NULL,
    claimed_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    result_summary TEXT,
    terminal_reason TEXT,
    failure TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_lease ON tasks (status, lease_deadline_ms);
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
    recorded_at_ms INTEGER NOT NULL
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
    body TEXT NOT NULL,
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
PRAGMA user_version = 1;
