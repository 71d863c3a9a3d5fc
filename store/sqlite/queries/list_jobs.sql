-- ListJobs reads one page of a workspace's jobs, newest first by
-- (created_at, id), with the columns and joins of get_job.sql so scanJob
-- reads both. The cursor is always bound (the first page passes a position
-- after every job), so it is a range of job_list. Empty
-- filters match all; :statuses is a JSON array of status names.
SELECT j.id, j.workspace, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor, j.coalesce_key,
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm,
       coalesce(q.priority, j.priority),
       CASE WHEN q.job_id IS NULL THEN c.status
            WHEN q.running = 1 THEN 'running'
            ELSE 'queued' END,
       q.scheduled_for,
       coalesce(q.started_at, c.started_at),
       c.completed_at,
       coalesce(q.worker, c.worker),
       coalesce(q.attempt, c.attempt),
       coalesce(q.restarts, c.restarts),
       coalesce(q.generation, j.generation),
       r.ping,
       c.result,
       c.error,
       q.last_error,
       coalesce(q.canceled_by, c.canceled_by),
       coalesce(q.canceled_reason, c.canceled_reason),
       -- superseded_by: the newest job of the same coalesce scope created
       -- after this one (index job_coalesce), NULL when there is none.
       (SELECT n.id FROM job AS n
        WHERE j.coalesce_key IS NOT NULL AND n.coalesce_key = j.coalesce_key
          AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
          AND (n.created_at, n.id) > (j.created_at, j.id)
        ORDER BY n.created_at DESC, n.id DESC LIMIT 1),
       j.secrets
FROM job AS j
LEFT JOIN job_queue AS q ON q.job_id = j.id
LEFT JOIN job_completed AS c ON c.job_id = j.id
LEFT JOIN job_runtime AS r ON r.job_id = j.id
LEFT JOIN job_schema AS si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema AS so ON so.hash = j.output_schema_hash
WHERE j.workspace = :workspace
  AND (j.created_at, j.id) < (:after_at, :after_id)
  AND (:app = '' OR j.app_key = :app)
  AND (:action = '' OR j.action_key = :action)
  AND (:tag = '' OR j.tag = :tag)
  AND (:trigger = '' OR j.trigger_kind = :trigger)
  AND (q.job_id IS NOT NULL OR c.job_id IS NOT NULL)
  AND (:statuses = '[]'
       OR CASE WHEN q.job_id IS NULL THEN c.status
               WHEN q.running = 1 THEN 'running'
               ELSE 'queued' END IN (SELECT value FROM json_each(:statuses)))
ORDER BY j.created_at DESC, j.id DESC
LIMIT :limit
