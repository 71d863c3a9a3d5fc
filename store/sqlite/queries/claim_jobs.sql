-- The pinned execution metadata of freshly claimed jobs.
SELECT id, trigger_kind, trigger_ref, created_by, created_at, input,
       git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
       input_schema, output_schema, timeout_ms, tag,
       max_attempts, backoff_ms, backoff_factor,
       limit_memory, limit_pids, limit_cpu
FROM job
WHERE id IN (SELECT value FROM json_each(:ids))
