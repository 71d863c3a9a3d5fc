-- The queue spine (DESIGN §2). job is immutable (only a waiting coalesced
-- job's input changes); job_queue holds live state and is kept small:
-- a finished job leaves it in the same transaction that writes
-- job_completed.

CREATE TABLE job (
    id             uuid PRIMARY KEY,
    workspace      text NOT NULL CHECK (workspace <> ''),
    trigger_kind   text NOT NULL CHECK (trigger_kind IN ('api', 'cli', 'manual', 'webhook', 'schedule', 'seed', 'child')),
    trigger_ref    text NOT NULL DEFAULT '',
    created_by     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    input          jsonb NOT NULL,
    git_source_id  text NOT NULL DEFAULT '',
    commit_sha     text NOT NULL DEFAULT '',
    app_key        text NOT NULL CHECK (app_key <> ''),
    action_key     text NOT NULL CHECK (action_key <> ''),
    entrypoint     text NOT NULL DEFAULT '',
    runtime        text NOT NULL DEFAULT '',
    input_schema   jsonb,
    output_schema  jsonb,
    timeout_ms     bigint NOT NULL DEFAULT 0 CHECK (timeout_ms >= 0),
    tag            text NOT NULL CHECK (tag <> ''),
    priority       integer NOT NULL DEFAULT 0,
    max_attempts   integer NOT NULL CHECK (max_attempts >= 1),
    backoff_ms     bigint NOT NULL CHECK (backoff_ms > 0),
    backoff_factor double precision NOT NULL CHECK (backoff_factor >= 1),
    coalesce_key   text
);

CREATE TABLE job_queue (
    job_id          uuid PRIMARY KEY,
    workspace       text NOT NULL,
    app_key         text NOT NULL,
    action_key      text NOT NULL,
    tag             text NOT NULL,
    priority        integer NOT NULL DEFAULT 0,
    scheduled_for   timestamptz NOT NULL,
    running         boolean NOT NULL DEFAULT false,
    started_at      timestamptz,
    worker          text,
    claim_token     uuid,
    attempt         integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    restarts        integer NOT NULL DEFAULT 0 CHECK (restarts >= 0),
    last_error      jsonb,
    canceled_by     text,
    canceled_reason text,
    -- Set only while a coalesced job waits for its first claim; the claim
    -- clears it so one follow-up may wait while this one runs.
    coalesce_key    text,
    generation      bigint NOT NULL DEFAULT 1 CHECK (generation >= 1),
    -- A running row has its owner; a waiting row has none.
    CONSTRAINT job_queue_running_owned CHECK (
        (running AND worker IS NOT NULL AND claim_token IS NOT NULL AND started_at IS NOT NULL)
        OR (NOT running AND worker IS NULL AND claim_token IS NULL AND started_at IS NULL)),
    -- Cancel finishes a waiting job at once: only a running job carries the mark.
    CONSTRAINT job_queue_cancel_mark_running CHECK (running OR canceled_by IS NULL),
    CONSTRAINT job_queue_coalesce_waiting CHECK (NOT running OR coalesce_key IS NULL)
);

-- The claim index leads with tag and covers only waiting rows, so jobs on a
-- tag nobody serves never slow another tag's claim.
CREATE INDEX job_queue_claim ON job_queue (tag, priority DESC, scheduled_for, job_id) WHERE NOT running;
-- One waiting job per coalesce key.
CREATE UNIQUE INDEX job_queue_coalesce ON job_queue (workspace, app_key, action_key, coalesce_key)
    WHERE coalesce_key IS NOT NULL;

CREATE TABLE job_runtime (
    job_id            uuid PRIMARY KEY,
    ping              timestamptz,
    memory_peak_bytes bigint,
    cpu_ms            bigint
);
CREATE INDEX job_runtime_ping ON job_runtime (ping);

CREATE TABLE job_completed (
    job_id          uuid PRIMARY KEY,
    workspace       text NOT NULL,
    tag             text NOT NULL,
    status          text NOT NULL CHECK (status IN ('success', 'failure', 'canceled')),
    result          jsonb,
    error           jsonb,
    started_at      timestamptz,
    completed_at    timestamptz NOT NULL,
    duration_ms     bigint CHECK (duration_ms >= 0),
    worker          text,
    attempt         integer NOT NULL CHECK (attempt >= 1),
    restarts        integer NOT NULL CHECK (restarts >= 0),
    canceled_by     text,
    canceled_reason text,
    CONSTRAINT job_completed_failure_has_error CHECK (status <> 'failure' OR error IS NOT NULL),
    CONSTRAINT job_completed_canceled_has_by CHECK (status <> 'canceled' OR canceled_by IS NOT NULL)
);
CREATE INDEX job_completed_completed_at ON job_completed (completed_at);
CREATE INDEX job_completed_failed ON job_completed (workspace, tag, completed_at) WHERE status = 'failure';

CREATE TABLE job_logs (
    job_id     uuid NOT NULL,
    seq        bigint NOT NULL CHECK (seq >= 1),
    data       text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (job_id, seq)
);

CREATE TABLE job_audit (
    id        bigserial PRIMARY KEY,
    job_id    uuid NOT NULL,
    workspace text NOT NULL,
    action    text NOT NULL CHECK (action IN ('cancel', 'reopen')),
    actor     text NOT NULL,
    reason    text NOT NULL DEFAULT '',
    at        timestamptz NOT NULL
);
CREATE INDEX job_audit_job ON job_audit (job_id, id);

CREATE TABLE spine_setting (
    key   text PRIMARY KEY,
    value bigint NOT NULL
);
INSERT INTO spine_setting (key, value) VALUES ('zombie_timeout_ms', 60000);

-- Queue health per workspace and tag (DESIGN §2): the figures the API, the
-- console and /metrics show.
CREATE VIEW queue_health AS
WITH live AS (
    SELECT q.workspace, q.tag,
           count(*) FILTER (WHERE NOT q.running AND q.scheduled_for <= now()) AS waiting,
           count(*) FILTER (WHERE NOT q.running AND q.scheduled_for > now())  AS scheduled,
           count(*) FILTER (WHERE q.running)                                  AS running,
           count(*) FILTER (WHERE q.running AND (r.ping IS NULL OR r.ping < now() -
               (SELECT value FROM spine_setting WHERE key = 'zombie_timeout_ms') * interval '1 millisecond'))
                                                                             AS expired_heartbeats,
           min(q.scheduled_for) FILTER (WHERE NOT q.running AND q.scheduled_for <= now()) AS oldest_waiting,
           max(q.attempt)  AS max_attempt,
           max(q.restarts) AS max_restarts
    FROM job_queue q
    LEFT JOIN job_runtime r ON r.job_id = q.job_id
    GROUP BY q.workspace, q.tag
), failed AS (
    SELECT workspace, tag, count(*) AS failed_24h
    FROM job_completed
    WHERE status = 'failure' AND completed_at > now() - interval '24 hours'
    GROUP BY workspace, tag
)
SELECT coalesce(l.workspace, f.workspace)  AS workspace,
       coalesce(l.tag, f.tag)              AS tag,
       coalesce(l.waiting, 0)              AS waiting,
       coalesce(l.scheduled, 0)            AS scheduled,
       coalesce(l.running, 0)              AS running,
       coalesce(f.failed_24h, 0)           AS failed_24h,
       coalesce(l.expired_heartbeats, 0)   AS expired_heartbeats,
       coalesce(extract(epoch FROM now() - l.oldest_waiting), 0)::double precision AS oldest_waiting_seconds,
       coalesce(l.max_attempt, 0)          AS max_attempt,
       coalesce(l.max_restarts, 0)         AS max_restarts
FROM live l
FULL JOIN failed f ON f.workspace = l.workspace AND f.tag = l.tag;
