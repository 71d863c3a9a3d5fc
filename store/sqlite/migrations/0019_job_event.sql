-- The data of a job event (DESIGN §9) on SQLite: the job in its API shape
-- (server.JobView, GET /api/w/{ws}/jobs/{id}) without its input, as
-- store/postgres/migrations/0019_job_event.sql builds it, read as
-- get_job.sql reads the job. Every statement that writes a job event
-- inserts from this view after its change, in the same transaction
-- (queries/events_jobs.sql). The times and the timeout are written by the
-- driver's windforce_time and windforce_duration (store/sqlite/events.go)
-- exactly as Go's encoding/json and time.Duration.String write them.
-- TestJobEventDataIsTheAPIView holds the two shapes equal.
CREATE VIEW job_event AS
SELECT j.id, j.workspace,
       CASE WHEN q.job_id IS NULL THEN c.status WHEN q.running = 1 THEN 'running' ELSE 'queued' END AS status,
       j.created_at, coalesce(q.started_at, c.started_at) AS started_at, c.completed_at,
       json_patch(json_object(
           'id', j.id, 'workspace', j.workspace,
           'status', CASE WHEN q.job_id IS NULL THEN c.status WHEN q.running = 1 THEN 'running' ELSE 'queued' END,
           'app', j.app_key, 'action', j.action_key, 'commit_sha', j.commit_sha,
           'git_source_id', j.git_source_id, 'entrypoint', j.entrypoint, 'runtime', j.runtime,
           'tag', j.tag, 'priority', coalesce(q.priority, j.priority), 'trigger_kind', j.trigger_kind,
           'trigger_ref', j.trigger_ref, 'created_by', j.created_by,
           'attempt', coalesce(q.attempt, c.attempt, 1), 'restarts', coalesce(q.restarts, c.restarts, 0),
           'worker', coalesce(q.worker, c.worker, ''),
           'coalesce_key', coalesce(j.coalesce_key, ''), 'timeout', windforce_duration(j.timeout_ms),
           'created_at', windforce_time(j.created_at), 'scheduled_for', windforce_time(q.scheduled_for),
           'started_at', windforce_time(coalesce(q.started_at, c.started_at)),
           'completed_at', windforce_time(c.completed_at),
           'result', json(c.result), 'error', json(c.error), 'last_error', json(q.last_error),
           'canceled_by', coalesce(q.canceled_by, c.canceled_by, ''),
           'canceled_reason', coalesce(q.canceled_reason, c.canceled_reason, ''),
           'generation', coalesce(q.generation, j.generation),
           'secrets', json(coalesce(j.secrets, '[]')),
           'superseded_by',
           (SELECT n.id FROM job AS n
            WHERE j.coalesce_key IS NOT NULL AND n.coalesce_key = j.coalesce_key
              AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
              AND (n.created_at, n.id) > (j.created_at, j.id)
            ORDER BY n.created_at DESC, n.id DESC LIMIT 1)),
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
                           'idle', windforce_duration(json_extract(j.warm, '$.idle_ms'))) END)) AS data
FROM job AS j
LEFT JOIN job_queue AS q ON q.job_id = j.id
LEFT JOIN job_completed AS c ON c.job_id = j.id;
