-- ApplySync: one action of the new commit; NULL overrides mean the app's value.
INSERT INTO action (workspace, app_key, action_key, input_schema, output_schema,
                    timeout_ms, tag, max_attempts, backoff_ms, backoff_factor,
                    limit_memory, limit_pids, limit_cpu, env, warm)
VALUES (@workspace, @app_key, @action_key, @input_schema::jsonb, @output_schema::jsonb,
        @timeout_ms, @tag, @max_attempts, @backoff_ms, @backoff_factor,
        @limit_memory, @limit_pids, @limit_cpu, @env, @warm)
