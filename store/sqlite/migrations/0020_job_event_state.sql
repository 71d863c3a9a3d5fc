-- A job event stores the job's live state, not its JSON, on SQLite as on
-- Postgres (store/postgres/migrations/0020_job_event_state.sql says why):
-- building the JSON of migration 0019's job_event view, with three Go
-- functions per event, was more than a third of the one writer's time.
-- The writes (events_jobs.sql) now store, in the job_* columns, what of
-- the job may still change after the event; the data is built when it is
-- read, from those and the job row, by the event view (events_after,
-- events_recent, delivery_claim_pick): the same members as before
-- (TestEventsOfEveryTransition holds it equal to the API view). A job
-- event's data column holds '{}' and is not read (SQLite cannot drop its
-- NOT NULL without rebuilding the table). Events written before this
-- migration, and the source events, keep their data and no job_id.
--
-- A job swept by retention while one of its events is still in the
-- outbox leaves that event with only the members its row holds.
ALTER TABLE event_outbox ADD COLUMN job_id TEXT;
ALTER TABLE event_outbox ADD COLUMN job_status TEXT;
ALTER TABLE event_outbox ADD COLUMN job_priority INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_scheduled_for INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_started_at INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_completed_at INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_worker TEXT;
ALTER TABLE event_outbox ADD COLUMN job_attempt INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_restarts INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_generation INTEGER;
ALTER TABLE event_outbox ADD COLUMN job_result TEXT;
ALTER TABLE event_outbox ADD COLUMN job_error TEXT;
ALTER TABLE event_outbox ADD COLUMN job_last_error TEXT;
ALTER TABLE event_outbox ADD COLUMN job_canceled_by TEXT;
ALTER TABLE event_outbox ADD COLUMN job_canceled_reason TEXT;
ALTER TABLE event_outbox ADD COLUMN job_secrets TEXT;
ALTER TABLE event_outbox ADD COLUMN job_superseded_by TEXT;

-- job_event is every job's event state as it is now, read as get_job.sql
-- reads the job (events_jobs.sql inserts from it after each change).
DROP VIEW job_event;
CREATE VIEW job_event AS
SELECT j.id, j.workspace,
       CASE WHEN q.job_id IS NULL THEN c.status WHEN q.running = 1 THEN 'running' ELSE 'queued' END AS status,
       coalesce(q.priority, j.priority) AS priority, q.scheduled_for,
       coalesce(q.started_at, c.started_at) AS started_at, c.completed_at,
       coalesce(q.worker, c.worker, '') AS worker,
       coalesce(q.attempt, c.attempt, 1) AS attempt, coalesce(q.restarts, c.restarts, 0) AS restarts,
       coalesce(q.generation, j.generation) AS generation, c.result, c.error, q.last_error,
       coalesce(q.canceled_by, c.canceled_by, '') AS canceled_by,
       coalesce(q.canceled_reason, c.canceled_reason, '') AS canceled_reason,
       j.secrets, j.created_at,
       CASE WHEN j.coalesce_key IS NOT NULL THEN
           (SELECT n.id FROM job AS n
            WHERE n.coalesce_key = j.coalesce_key
              AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
              AND (n.created_at, n.id) > (j.created_at, j.id)
            ORDER BY n.created_at DESC, n.id DESC LIMIT 1) END AS superseded_by
FROM job AS j
LEFT JOIN job_queue AS q ON q.job_id = j.id
LEFT JOIN job_completed AS c ON c.job_id = j.id;

-- event_view is every event with its data: a job event's built from its
-- job_* columns and its job row in the API shape (server.JobView, GET
-- /api/w/{ws}/jobs/{id}) without its input, the others' as stored. The
-- times and the timeout are written by the driver's windforce_time and
-- windforce_duration (store/sqlite/events.go) as Go writes them.
CREATE VIEW event_view AS
SELECT o.seq, o.id, o.workspace, o.type, o.subject, o.time,
       CASE WHEN o.job_id IS NULL THEN o.data ELSE json_patch(json_object(
           'id', o.job_id, 'workspace', o.workspace, 'status', o.job_status,
           'app', j.app_key, 'action', j.action_key, 'commit_sha', j.commit_sha,
           'git_source_id', j.git_source_id, 'entrypoint', j.entrypoint, 'runtime', j.runtime,
           'tag', j.tag, 'priority', o.job_priority, 'trigger_kind', j.trigger_kind,
           'trigger_ref', j.trigger_ref, 'created_by', j.created_by,
           'attempt', o.job_attempt, 'restarts', o.job_restarts, 'worker', o.job_worker,
           'coalesce_key', coalesce(j.coalesce_key, ''), 'timeout', windforce_duration(j.timeout_ms),
           'created_at', windforce_time(j.created_at), 'scheduled_for', windforce_time(o.job_scheduled_for),
           'started_at', windforce_time(o.job_started_at), 'completed_at', windforce_time(o.job_completed_at),
           'result', json(o.job_result), 'error', json(o.job_error), 'last_error', json(o.job_last_error),
           'canceled_by', o.job_canceled_by, 'canceled_reason', o.job_canceled_reason,
           'generation', o.job_generation, 'secrets', json(coalesce(o.job_secrets, '[]')),
           'superseded_by', o.job_superseded_by),
         -- limits, env and warm are left out when the pin sets none
         -- (omitempty): a merge patch drops its null members.
         json_object(
           'limits', CASE WHEN coalesce(j.limit_memory, j.limit_pids, j.limit_cpu) IS NOT NULL THEN
               json_patch('{}', json_object('memory', j.limit_memory, 'pids', j.limit_pids, 'cpu', j.limit_cpu)) END,
           -- json(): a subquery's value loses its JSON subtype.
           'env', CASE WHEN json_array_length(j.env) > 0 THEN json((SELECT json_group_object(json_extract(e.value, '$.name'),
                              json(CASE WHEN coalesce(json_extract(e.value, '$.secret'), '') <> ''
                                        THEN json_object('secret', json_extract(e.value, '$.secret'))
                                        ELSE json_quote(coalesce(json_extract(e.value, '$.value'), '')) END))
                   FROM json_each(j.env) AS e)) END,
           'warm', CASE WHEN j.warm IS NOT NULL THEN
               json_object('max_jobs', json_extract(j.warm, '$.max_jobs'),
                           'idle', windforce_duration(json_extract(j.warm, '$.idle_ms'))) END)) END AS data
FROM event_outbox AS o
LEFT JOIN job AS j ON j.id = o.job_id;
