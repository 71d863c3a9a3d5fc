-- The pinned execution metadata of freshly claimed jobs, with the schemas
-- joined back from job_schema by hash, and what of the job row their
-- job.started events hold (secrets, superseded_by: as the job_event view
-- reads them, migration 0020).
SELECT j.id, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor,
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm, j.secrets,
       CASE WHEN j.coalesce_key IS NOT NULL THEN
           (SELECT n.id FROM job AS n
            WHERE n.coalesce_key = j.coalesce_key
              AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
              AND (n.created_at, n.id) > (j.created_at, j.id)
            ORDER BY n.created_at DESC, n.id DESC LIMIT 1) END
FROM job AS j
LEFT JOIN job_schema AS si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema AS so ON so.hash = j.output_schema_hash
WHERE j.id IN (SELECT value FROM json_each(:ids))
