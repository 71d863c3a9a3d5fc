-- EnqueueAction: the app and the action a job will pin, read in the
-- enqueue transaction. No row: unknown app; NULL action_key: unknown action.
SELECT a.workspace, a.app_key, a.git_source_id, a.commit_sha, a.entrypoint, a.runtime,
       a.timeout_ms, a.tag, a.max_attempts, a.backoff_ms, a.backoff_factor,
       a.limit_memory, a.limit_pids, a.limit_cpu, a.env, a.warm, a.updated_at,
       x.action_key, x.input_schema, x.output_schema,
       x.timeout_ms, x.tag, x.max_attempts, x.backoff_ms, x.backoff_factor,
       x.limit_memory, x.limit_pids, x.limit_cpu, x.env, x.warm
FROM app a
LEFT JOIN action x ON x.workspace = a.workspace AND x.app_key = a.app_key AND x.action_key = :action_key
WHERE a.workspace = :workspace AND a.app_key = :app_key
