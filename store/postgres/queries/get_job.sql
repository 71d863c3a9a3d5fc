-- GetJob reads a job in any state: the immutable job row, and whichever of
-- job_queue (queued or running) or job_completed holds its live state. The
-- pinned schemas are joined from job_schema by their hashes.
SELECT j.id, j.workspace, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor, coalesce(j.coalesce_key, ''),
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm,
       CASE WHEN q.job_id IS NOT NULL THEN CASE WHEN q.running THEN 'running' ELSE 'queued' END
            ELSE c.status END,
       coalesce(q.priority, j.priority), q.scheduled_for,
       coalesce(q.started_at, c.started_at), c.completed_at,
       coalesce(q.worker, c.worker, ''),
       coalesce(q.attempt, c.attempt, 1), coalesce(q.restarts, c.restarts, 0),
       coalesce(q.generation, j.generation), r.ping,
       c.result, c.error, q.last_error,
       coalesce(q.canceled_by, c.canceled_by, ''), coalesce(q.canceled_reason, c.canceled_reason, ''),
       -- superseded_by: the newest job of the same coalesce scope created
       -- after this one (index job_coalesce), NULL when there is none.
       (SELECT n.id FROM job n
        WHERE j.coalesce_key IS NOT NULL AND n.coalesce_key = j.coalesce_key
          AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
          AND (n.created_at, n.id) > (j.created_at, j.id)
        ORDER BY n.created_at DESC, n.id DESC LIMIT 1),
       -- the secrets the job received (name@version), NULL for none yet.
       j.secrets
FROM job j
LEFT JOIN job_queue q ON q.job_id = j.id
LEFT JOIN job_completed c ON c.job_id = j.id
LEFT JOIN job_runtime r ON r.job_id = j.id
LEFT JOIN job_schema si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema so ON so.hash = j.output_schema_hash
WHERE j.id = @job_id AND j.workspace = @workspace
