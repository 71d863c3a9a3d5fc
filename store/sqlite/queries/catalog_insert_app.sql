-- ApplySync: one app of the new commit.
INSERT INTO app (workspace, app_key, git_source_id, commit_sha, entrypoint, runtime,
                 timeout_ms, tag, max_attempts, backoff_ms, backoff_factor,
                 limit_memory, limit_pids, limit_cpu, env, warm, updated_at)
VALUES (:workspace, :app_key, :source_id, :commit_sha, :entrypoint, :runtime,
        :timeout_ms, :tag, :max_attempts, :backoff_ms, :backoff_factor,
        :limit_memory, :limit_pids, :limit_cpu, :env, :warm, :now)
