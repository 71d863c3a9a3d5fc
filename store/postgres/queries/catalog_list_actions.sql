-- ListApps / GetApp: the actions of those apps.
SELECT app_key, action_key, input_schema, output_schema,
       timeout_ms, tag, max_attempts, backoff_ms, backoff_factor,
       limit_memory, limit_pids, limit_cpu, env, warm
FROM action
WHERE workspace = @workspace AND (@app_key::text = '' OR app_key = @app_key)
ORDER BY app_key COLLATE "C", action_key COLLATE "C"
