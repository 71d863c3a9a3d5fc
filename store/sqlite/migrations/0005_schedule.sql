-- Cron schedules (DESIGN §1, §4) on SQLite: the same table as
-- store/postgres/migrations/0005_schedule.sql with SQLite's types (TEXT
-- uuids, INTEGER microseconds, INTEGER 0/1 booleans, JSON as checked
-- TEXT), STRICT.
--
-- next_run_at is the tick that is due next. Firing it is one write
-- transaction that moves next_run_at with a compare-and-set on (id,
-- next_run_at) and enqueues the job, so a tick fires once and a crash
-- neither loses nor doubles one. last_job_id is the job of the last fired
-- tick, which no_overlap checks against job_queue.

CREATE TABLE schedule (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL CHECK (workspace <> ''),
    app_key     TEXT NOT NULL CHECK (app_key <> ''),
    action_key  TEXT NOT NULL CHECK (action_key <> ''),
    cron        TEXT NOT NULL CHECK (cron <> ''),
    timezone    TEXT NOT NULL DEFAULT '',
    input       TEXT NOT NULL CHECK (json_valid(input)),
    no_overlap  INTEGER NOT NULL DEFAULT 0 CHECK (no_overlap IN (0, 1)),
    enabled     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    next_run_at INTEGER NOT NULL,
    last_run_at INTEGER,
    last_job_id TEXT,
    created_by  TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
) STRICT;

-- The scheduler's pass: enabled schedules whose tick is due.
CREATE INDEX schedule_due ON schedule (enabled, next_run_at);
-- A workspace's schedules, oldest first.
CREATE INDEX schedule_workspace ON schedule (workspace, created_at, id);
