-- The data of a job event (DESIGN §9): the job in its API shape
-- (server.JobView, GET /api/w/{ws}/jobs/{id}) without its input, built
-- here once for every statement that writes a job event: the tuned
-- single statements (enqueue, claim, complete, batch completion) call
-- job_event_data on the rows their CTEs touch, which the statement's own
-- snapshot cannot read back; the others insert from the job_event view
-- after their change (events_jobs.sql). TestJobEventDataIsTheAPIView
-- holds the two shapes equal.

-- event_time is t as Go's encoding/json writes a time.Time in UTC
-- (RFC 3339 with the fraction's trailing zeros dropped).
CREATE FUNCTION event_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\.?0+$', '') || 'Z'
$$;

-- go_duration is ms milliseconds as Go's time.Duration.String writes it
-- ("0s", "250ms", "1.5s", "2m0s", "1h0m0s"): the API's timeout.
CREATE FUNCTION go_duration(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN ms = 0 THEN '0s'
        WHEN ms < 1000 THEN ms || 'ms'
        ELSE CASE WHEN ms >= 3600000 THEN (ms / 3600000) || 'h' ELSE '' END
          || CASE WHEN ms >= 60000 THEN ((ms / 60000) % 60) || 'm' ELSE '' END
          || ((ms / 1000) % 60)
          || CASE WHEN ms % 1000 = 0 THEN '' ELSE '.' || rtrim(lpad((ms % 1000)::text, 3, '0'), '0') END
          || 's'
    END
$$;

-- job_event_type is the event of a job that finished with status.
CREATE FUNCTION job_event_type(status text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE status WHEN 'success' THEN 'job.succeeded' WHEN 'failure' THEN 'job.failed'
                       WHEN 'canceled' THEN 'job.canceled' END
$$;

-- job_event_data is the job j with its live state (the rest of the
-- arguments, as get_job.sql reads them) in the API shape without input.
-- superseded_by is read as get_job.sql reads it (index job_coalesce).
CREATE FUNCTION job_event_data(j job, status text, priority integer, scheduled_for timestamptz,
                               started_at timestamptz, completed_at timestamptz, worker text,
                               attempt integer, restarts integer, generation bigint,
                               result jsonb, error jsonb, last_error jsonb,
                               canceled_by text, canceled_reason text)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_object(
        'id', j.id, 'workspace', j.workspace, 'status', status,
        'app', j.app_key, 'action', j.action_key, 'commit_sha', j.commit_sha,
        'git_source_id', j.git_source_id, 'entrypoint', j.entrypoint, 'runtime', j.runtime,
        'tag', j.tag, 'priority', priority, 'trigger_kind', j.trigger_kind,
        'trigger_ref', j.trigger_ref, 'created_by', j.created_by,
        'attempt', attempt, 'restarts', restarts, 'worker', coalesce(worker, ''),
        'coalesce_key', coalesce(j.coalesce_key, ''), 'timeout', go_duration(j.timeout_ms),
        'created_at', event_time(j.created_at), 'scheduled_for', event_time(scheduled_for),
        'started_at', event_time(started_at), 'completed_at', event_time(completed_at),
        'result', result, 'error', error, 'last_error', last_error,
        'canceled_by', coalesce(canceled_by, ''), 'canceled_reason', coalesce(canceled_reason, ''),
        'generation', generation, 'secrets', coalesce(to_jsonb(j.secrets), '[]'::jsonb),
        'superseded_by', CASE WHEN j.coalesce_key IS NULL THEN NULL ELSE
            (SELECT n.id FROM job n
             WHERE n.coalesce_key = j.coalesce_key
               AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
               AND (n.created_at, n.id) > (j.created_at, j.id)
             ORDER BY n.created_at DESC, n.id DESC LIMIT 1) END)
    -- limits, env and warm are left out when the pin sets none (omitempty).
    || jsonb_strip_nulls(jsonb_build_object(
        'limits', CASE WHEN coalesce(j.limit_memory, j.limit_pids, j.limit_cpu) IS NOT NULL THEN
            jsonb_build_object('memory', j.limit_memory, 'pids', j.limit_pids, 'cpu', j.limit_cpu) END,
        'env', (SELECT jsonb_object_agg(e->>'name', CASE WHEN coalesce(e->>'secret', '') <> ''
                                                         THEN jsonb_build_object('secret', e->>'secret')
                                                         ELSE to_jsonb(coalesce(e->>'value', '')) END)
                FROM jsonb_array_elements(j.env::jsonb) AS e),
        'warm', CASE WHEN j.warm IS NOT NULL THEN
            jsonb_build_object('max_jobs', (j.warm::jsonb->>'max_jobs')::integer,
                               'idle', go_duration((j.warm::jsonb->>'idle_ms')::bigint)) END))
$$;

-- job_event is every job's event data as it is now, with the live state
-- read as get_job.sql reads it.
CREATE VIEW job_event AS
SELECT j.id, j.workspace,
       job_event_data(j,
           CASE WHEN q.job_id IS NOT NULL THEN CASE WHEN q.running THEN 'running' ELSE 'queued' END
                ELSE c.status END,
           coalesce(q.priority, j.priority), q.scheduled_for,
           coalesce(q.started_at, c.started_at), c.completed_at, coalesce(q.worker, c.worker),
           coalesce(q.attempt, c.attempt, 1), coalesce(q.restarts, c.restarts, 0),
           coalesce(q.generation, j.generation), c.result, c.error, q.last_error,
           coalesce(q.canceled_by, c.canceled_by), coalesce(q.canceled_reason, c.canceled_reason)) AS data
FROM job j
LEFT JOIN job_queue q ON q.job_id = j.id
LEFT JOIN job_completed c ON c.job_id = j.id;
