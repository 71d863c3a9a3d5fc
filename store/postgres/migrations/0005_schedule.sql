-- Cron schedules (DESIGN §1, §4): an action of an app with a fixed input,
-- fired on every tick of a cron expression in a time zone.
--
-- next_run_at is the tick that is due next. Firing it is one transaction
-- that moves next_run_at with a compare-and-set on (id, next_run_at) and
-- enqueues the job, so of many servers only one fires a tick, and a crash
-- neither loses nor doubles one. last_job_id is the job of the last fired
-- tick, which no_overlap checks against job_queue. No foreign key to the
-- catalog: a schedule outlives its action leaving it (its ticks then
-- advance without a job until a sync brings the action back).

CREATE TABLE schedule (
    id          uuid PRIMARY KEY,
    workspace   text NOT NULL CHECK (workspace <> ''),
    app_key     text NOT NULL CHECK (app_key <> ''),
    action_key  text NOT NULL CHECK (action_key <> ''),
    cron        text NOT NULL CHECK (cron <> ''),
    timezone    text NOT NULL DEFAULT '',
    input       jsonb NOT NULL,
    no_overlap  boolean NOT NULL DEFAULT false,
    enabled     boolean NOT NULL DEFAULT true,
    next_run_at timestamptz NOT NULL,
    last_run_at timestamptz,
    last_job_id uuid,
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL
);

-- The scheduler's pass: enabled schedules whose tick is due.
CREATE INDEX schedule_due ON schedule (enabled, next_run_at);
-- A workspace's schedules, oldest first.
CREATE INDEX schedule_workspace ON schedule (workspace, created_at, id);
