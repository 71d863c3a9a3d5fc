-- The queue spine (DESIGN §2) on SQLite: a faithful translation of
-- store/postgres/migrations/0001_spine.sql. Same tables, columns, checks,
-- partial indexes and view; only the types differ:
--   uuid        -> TEXT, the canonical 36-character form
--   boolean     -> INTEGER 0/1, checked
--   timestamptz -> INTEGER microseconds since the Unix epoch (UTC)
--   jsonb       -> TEXT, checked with json_valid
-- Tables are STRICT so a value of the wrong type (a Go time.Time bound by
-- mistake, a float where an integer belongs) is refused, not stored.
--
-- job is immutable (only a waiting coalesced job's input changes);
-- job_queue holds live state and is kept small: a finished job leaves it in
-- the same transaction that writes job_completed.

CREATE TABLE job (
    id             TEXT PRIMARY KEY,
    workspace      TEXT NOT NULL CHECK (workspace <> ''),
    trigger_kind   TEXT NOT NULL CHECK (trigger_kind IN ('api', 'cli', 'manual', 'webhook', 'schedule', 'seed', 'child')),
    trigger_ref    TEXT NOT NULL DEFAULT '',
    created_by     TEXT NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    input          TEXT NOT NULL CHECK (json_valid(input)),
    git_source_id  TEXT NOT NULL DEFAULT '',
    commit_sha     TEXT NOT NULL DEFAULT '',
    app_key        TEXT NOT NULL CHECK (app_key <> ''),
    action_key     TEXT NOT NULL CHECK (action_key <> ''),
    entrypoint     TEXT NOT NULL DEFAULT '',
    runtime        TEXT NOT NULL DEFAULT '',
    input_schema   TEXT CHECK (input_schema IS NULL OR json_valid(input_schema)),
    output_schema  TEXT CHECK (output_schema IS NULL OR json_valid(output_schema)),
    timeout_ms     INTEGER NOT NULL DEFAULT 0 CHECK (timeout_ms >= 0),
    tag            TEXT NOT NULL CHECK (tag <> ''),
    priority       INTEGER NOT NULL DEFAULT 0,
    max_attempts   INTEGER NOT NULL CHECK (max_attempts >= 1),
    backoff_ms     INTEGER NOT NULL CHECK (backoff_ms > 0),
    backoff_factor REAL NOT NULL CHECK (backoff_factor >= 1),
    coalesce_key   TEXT
) STRICT;

CREATE TABLE job_queue (
    job_id          TEXT PRIMARY KEY,
    workspace       TEXT NOT NULL,
    app_key         TEXT NOT NULL,
    action_key      TEXT NOT NULL,
    tag             TEXT NOT NULL,
    priority        INTEGER NOT NULL DEFAULT 0,
    scheduled_for   INTEGER NOT NULL,
    running         INTEGER NOT NULL DEFAULT 0 CHECK (running IN (0, 1)),
    started_at      INTEGER,
    worker          TEXT,
    claim_token     TEXT,
    attempt         INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    restarts        INTEGER NOT NULL DEFAULT 0 CHECK (restarts >= 0),
    last_error      TEXT CHECK (last_error IS NULL OR json_valid(last_error)),
    canceled_by     TEXT,
    canceled_reason TEXT,
    -- Set only while a coalesced job waits for its first claim; the claim
    -- clears it so one follow-up may wait while this one runs.
    coalesce_key    TEXT,
    generation      INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1),
    -- A running row has its owner; a waiting row has none.
    CONSTRAINT job_queue_running_owned CHECK (
        (running = 1 AND worker IS NOT NULL AND claim_token IS NOT NULL AND started_at IS NOT NULL)
        OR (running = 0 AND worker IS NULL AND claim_token IS NULL AND started_at IS NULL)),
    -- Cancel finishes a waiting job at once: only a running job carries the mark.
    CONSTRAINT job_queue_cancel_mark_running CHECK (running = 1 OR canceled_by IS NULL),
    CONSTRAINT job_queue_coalesce_waiting CHECK (running = 0 OR coalesce_key IS NULL)
) STRICT;

-- The claim index leads with tag and covers only waiting rows, so jobs on a
-- tag nobody serves never slow another tag's claim. Queries must say
-- "running = 0" literally for SQLite to use this partial index.
CREATE INDEX job_queue_claim ON job_queue (tag, priority DESC, scheduled_for, job_id) WHERE running = 0;
-- One waiting job per coalesce key.
CREATE UNIQUE INDEX job_queue_coalesce ON job_queue (workspace, app_key, action_key, coalesce_key)
    WHERE coalesce_key IS NOT NULL;

CREATE TABLE job_runtime (
    job_id            TEXT PRIMARY KEY,
    ping              INTEGER,
    memory_peak_bytes INTEGER,
    cpu_ms            INTEGER
) STRICT;
CREATE INDEX job_runtime_ping ON job_runtime (ping);

CREATE TABLE job_completed (
    job_id          TEXT PRIMARY KEY,
    workspace       TEXT NOT NULL,
    tag             TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('success', 'failure', 'canceled')),
    result          TEXT CHECK (result IS NULL OR json_valid(result)),
    error           TEXT CHECK (error IS NULL OR json_valid(error)),
    started_at      INTEGER,
    completed_at    INTEGER NOT NULL,
    duration_ms     INTEGER CHECK (duration_ms >= 0),
    worker          TEXT,
    attempt         INTEGER NOT NULL CHECK (attempt >= 1),
    restarts        INTEGER NOT NULL CHECK (restarts >= 0),
    canceled_by     TEXT,
    canceled_reason TEXT,
    CONSTRAINT job_completed_failure_has_error CHECK (status <> 'failure' OR error IS NOT NULL),
    CONSTRAINT job_completed_canceled_has_by CHECK (status <> 'canceled' OR canceled_by IS NOT NULL)
) STRICT;
CREATE INDEX job_completed_completed_at ON job_completed (completed_at);
CREATE INDEX job_completed_failed ON job_completed (workspace, tag, completed_at) WHERE status = 'failure';

CREATE TABLE job_logs (
    job_id     TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (job_id, seq)
) STRICT;

CREATE TABLE job_audit (
    -- INTEGER PRIMARY KEY is the rowid: increasing, like bigserial.
    id        INTEGER PRIMARY KEY,
    job_id    TEXT NOT NULL,
    workspace TEXT NOT NULL,
    action    TEXT NOT NULL CHECK (action IN ('cancel', 'reopen')),
    actor     TEXT NOT NULL,
    reason    TEXT NOT NULL DEFAULT '',
    at        INTEGER NOT NULL
) STRICT;
CREATE INDEX job_audit_job ON job_audit (job_id, id);

CREATE TABLE spine_setting (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
INSERT INTO spine_setting (key, value) VALUES ('zombie_timeout_ms', 60000);

-- Queue health per workspace and tag (DESIGN §2): the figures the API, the
-- console and /metrics show. Same columns as on Postgres; "now" is the
-- database clock in microseconds, the unit of every timestamp here.
CREATE VIEW queue_health AS
WITH clock AS (
    SELECT CAST(unixepoch('subsec') * 1000000 AS INTEGER) AS now_us,
           (SELECT value FROM spine_setting WHERE key = 'zombie_timeout_ms') * 1000 AS zombie_us
), live AS (
    SELECT q.workspace, q.tag,
           count(*) FILTER (WHERE q.running = 0 AND q.scheduled_for <= c.now_us) AS waiting,
           count(*) FILTER (WHERE q.running = 0 AND q.scheduled_for > c.now_us)  AS scheduled,
           count(*) FILTER (WHERE q.running = 1)                                 AS running,
           count(*) FILTER (WHERE q.running = 1 AND (r.ping IS NULL OR r.ping < c.now_us - c.zombie_us))
                                                                                AS expired_heartbeats,
           min(q.scheduled_for) FILTER (WHERE q.running = 0 AND q.scheduled_for <= c.now_us) AS oldest_waiting,
           max(q.attempt)  AS max_attempt,
           max(q.restarts) AS max_restarts
    FROM job_queue q
    CROSS JOIN clock c
    LEFT JOIN job_runtime r ON r.job_id = q.job_id
    GROUP BY q.workspace, q.tag
), failed AS (
    SELECT workspace, tag, count(*) AS failed_24h
    FROM job_completed
    WHERE status = 'failure' AND completed_at > (SELECT now_us FROM clock) - 86400000000
    GROUP BY workspace, tag
)
SELECT coalesce(l.workspace, f.workspace)  AS workspace,
       coalesce(l.tag, f.tag)              AS tag,
       coalesce(l.waiting, 0)              AS waiting,
       coalesce(l.scheduled, 0)            AS scheduled,
       coalesce(l.running, 0)              AS running,
       coalesce(f.failed_24h, 0)           AS failed_24h,
       coalesce(l.expired_heartbeats, 0)   AS expired_heartbeats,
       coalesce(((SELECT now_us FROM clock) - l.oldest_waiting) / 1000000.0, 0.0) AS oldest_waiting_seconds,
       coalesce(l.max_attempt, 0)          AS max_attempt,
       coalesce(l.max_restarts, 0)         AS max_restarts
FROM live l
FULL JOIN failed f ON f.workspace = l.workspace AND f.tag = l.tag;
