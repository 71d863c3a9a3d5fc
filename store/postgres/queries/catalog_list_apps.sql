-- ListApps / GetApp: apps of a workspace, one when @app_key is not ''.
SELECT workspace, app_key, git_source_id, commit_sha, entrypoint, runtime,
       timeout_ms, tag, max_attempts, backoff_ms, backoff_factor,
       limit_memory, limit_pids, limit_cpu, env, warm, updated_at
FROM app
WHERE workspace = @workspace AND (@app_key::text = '' OR app_key = @app_key)
ORDER BY app_key COLLATE "C"
