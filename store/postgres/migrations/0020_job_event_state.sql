-- A job event stores the job's live state, not its JSON (issue 17: with
-- a sink the spine keeps its speed). Building the data of migration 0019
-- for every transition was nearly all the events' cost: job_event_data
-- had sub-selects, so Postgres could not inline it and ran its body as a
-- query of its own per event (about 0.5 ms), and even inlined the
-- jsonb_build_object of 35 members cost more than the spine's own work.
-- Writing '{}' instead left the spine's throughput as it was, so the
-- writes now store job_state: what of the job may still change after the
-- event (its queue or completion state, secrets, superseded_by), a plain
-- row. The data is built when it is read (events_after, events_recent,
-- delivery_claim: coalesce(data, job_event_json(job, job_state))) from
-- job_state and the job row, whose other columns never change:
-- job_event_json, the same members as before, so the relay
-- and GET /events answer what they did (TestEventsOfEveryTransition holds
-- it equal to the API view). Events written before this migration, and
-- the source events, keep their data and no job_state.
--
-- A job swept by retention (sweep.sql) while one of its events is still
-- in the outbox (a delivery that keeps failing) leaves that event with
-- only the members job_state holds; the others are null.

-- job_event_state is what a job event keeps of its job: everything of
-- the API view that the job row does not hold for good.
CREATE TYPE job_event_state AS (
    job_id uuid, status text, priority integer, scheduled_for timestamptz, started_at timestamptz,
    completed_at timestamptz, worker text, attempt integer, restarts integer, generation bigint,
    result jsonb, error jsonb, last_error jsonb, canceled_by text, canceled_reason text,
    secrets text[], superseded_by uuid
);

ALTER TABLE event_outbox
    ALTER COLUMN data DROP NOT NULL,
    ADD COLUMN job_state job_event_state,
    -- A job event's state has its job_id, so it is never IS NULL.
    ADD CONSTRAINT event_outbox_data_or_state CHECK ((data IS NULL) <> (job_state IS NULL));

-- event_time writes t as before; rtrim does what the regular expression
-- did (the fraction always has its point, so the seconds keep their
-- zeros), cheaper.
CREATE OR REPLACE FUNCTION event_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT rtrim(rtrim(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '0'), '.') || 'Z'
$$;

-- job_superseded_by is the newest job created after job id (created at
-- created_at) with the same coalesce key, as get_job.sql reads it (index
-- job_coalesce); NULL when there is none. PL/pgSQL, so the functions that
-- call it stay free of sub-selects (and inlinable).
CREATE FUNCTION job_superseded_by(id uuid, workspace text, app_key text, action_key text,
                                  coalesce_key text, created_at timestamptz)
RETURNS uuid LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (SELECT n.id FROM job n
            WHERE n.coalesce_key = job_superseded_by.coalesce_key
              AND n.workspace = job_superseded_by.workspace AND n.app_key = job_superseded_by.app_key
              AND n.action_key = job_superseded_by.action_key
              AND (n.created_at, n.id) > (job_superseded_by.created_at, job_superseded_by.id)
            ORDER BY n.created_at DESC, n.id DESC LIMIT 1);
END
$$;

-- job_event_env is a pinned env (the stored JSON array of name with value
-- or secret) in the API's shape: name to value, or to {"secret": name}.
CREATE FUNCTION job_event_env(env text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (SELECT jsonb_object_agg(e->>'name', CASE WHEN coalesce(e->>'secret', '') <> ''
                                                     THEN jsonb_build_object('secret', e->>'secret')
                                                     ELSE to_jsonb(coalesce(e->>'value', '')) END)
            FROM jsonb_array_elements(env::jsonb) AS e);
END
$$;

DROP VIEW job_event;
DROP FUNCTION job_event_data(job, text, integer, timestamptz, timestamptz, timestamptz, text, integer,
                             integer, bigint, jsonb, jsonb, jsonb, text, text);

-- job_event_state_of is the state a job event of job j keeps, from its
-- live state (the rest of the arguments, as get_job.sql reads them). One
-- expression without sub-selects: Postgres inlines it into the statement.
CREATE FUNCTION job_event_state_of(j job, status text, priority integer, scheduled_for timestamptz,
                                   started_at timestamptz, completed_at timestamptz, worker text,
                                   attempt integer, restarts integer, generation bigint,
                                   result jsonb, error jsonb, last_error jsonb,
                                   canceled_by text, canceled_reason text)
RETURNS job_event_state LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ROW(j.id, status, priority, scheduled_for, started_at, completed_at, worker, attempt, restarts,
               generation, result, error, last_error, canceled_by, canceled_reason, j.secrets,
               CASE WHEN j.coalesce_key IS NOT NULL THEN
                   job_superseded_by(j.id, j.workspace, j.app_key, j.action_key, j.coalesce_key, j.created_at) END
           )::job_event_state
$$;

-- job_event_json is the data of a job event: the job j in its API shape
-- (server.JobView, GET /api/w/{ws}/jobs/{id}) without its input, with the
-- state s its event kept. Inlined into the reads.
CREATE FUNCTION job_event_json(j job, s job_event_state) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_object(
        'id', s.job_id, 'workspace', j.workspace, 'status', s.status,
        'app', j.app_key, 'action', j.action_key, 'commit_sha', j.commit_sha,
        'git_source_id', j.git_source_id, 'entrypoint', j.entrypoint, 'runtime', j.runtime,
        'tag', j.tag, 'priority', s.priority, 'trigger_kind', j.trigger_kind,
        'trigger_ref', j.trigger_ref, 'created_by', j.created_by,
        'attempt', s.attempt, 'restarts', s.restarts, 'worker', coalesce(s.worker, ''),
        'coalesce_key', coalesce(j.coalesce_key, ''), 'timeout', go_duration(j.timeout_ms),
        'created_at', event_time(j.created_at), 'scheduled_for', event_time(s.scheduled_for),
        'started_at', event_time(s.started_at), 'completed_at', event_time(s.completed_at),
        'result', s.result, 'error', s.error, 'last_error', s.last_error,
        'canceled_by', coalesce(s.canceled_by, ''), 'canceled_reason', coalesce(s.canceled_reason, ''),
        'generation', s.generation, 'secrets', coalesce(to_jsonb(s.secrets), '[]'::jsonb),
        'superseded_by', s.superseded_by)
    -- limits, env and warm are left out when the pin sets none (omitempty).
    || jsonb_strip_nulls(jsonb_build_object(
        'limits', CASE WHEN coalesce(j.limit_memory, j.limit_pids, j.limit_cpu) IS NOT NULL THEN
            jsonb_build_object('memory', j.limit_memory, 'pids', j.limit_pids, 'cpu', j.limit_cpu) END,
        'env', CASE WHEN j.env IS NOT NULL THEN job_event_env(j.env) END,
        'warm', CASE WHEN j.warm IS NOT NULL THEN
            jsonb_build_object('max_jobs', (j.warm::jsonb->>'max_jobs')::integer,
                               'idle', go_duration((j.warm::jsonb->>'idle_ms')::bigint)) END))
$$;

-- job_event is every job's event state as it is now, with the live state
-- read as get_job.sql reads it (events_jobs.sql).
CREATE VIEW job_event AS
SELECT j.id, j.workspace,
       job_event_state_of(j,
           CASE WHEN q.job_id IS NOT NULL THEN CASE WHEN q.running THEN 'running' ELSE 'queued' END
                ELSE c.status END,
           coalesce(q.priority, j.priority), q.scheduled_for,
           coalesce(q.started_at, c.started_at), c.completed_at, coalesce(q.worker, c.worker),
           coalesce(q.attempt, c.attempt, 1), coalesce(q.restarts, c.restarts, 0),
           coalesce(q.generation, j.generation), c.result, c.error, q.last_error,
           coalesce(q.canceled_by, c.canceled_by), coalesce(q.canceled_reason, c.canceled_reason)) AS state
FROM job j
LEFT JOIN job_queue q ON q.job_id = j.id
LEFT JOIN job_completed c ON c.job_id = j.id;
