-- The pinned execution metadata of freshly claimed jobs, with the schemas
-- joined back from job_schema by hash.
SELECT j.id, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor,
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm
FROM job AS j
LEFT JOIN job_schema AS si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema AS so ON so.hash = j.output_schema_hash
WHERE j.id IN (SELECT value FROM json_each(:ids))
