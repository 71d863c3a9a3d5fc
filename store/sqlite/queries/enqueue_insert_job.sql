-- Insert the immutable job row with its pin (invariant 1); the schemas
-- are job_schema's hashes (schema_insert.sql).
INSERT INTO job (
    id, workspace, trigger_kind, trigger_ref, created_by, created_at, input,
    git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
    input_schema_hash, output_schema_hash, timeout_ms, tag, priority,
    max_attempts, backoff_ms, backoff_factor, coalesce_key,
    limit_memory, limit_pids, limit_cpu, env, warm)
VALUES (
    :id, :workspace, :trigger_kind, :trigger_ref, :created_by, :created_at, :input,
    :git_source_id, :commit_sha, :app_key, :action_key, :entrypoint, :runtime,
    :input_schema_hash, :output_schema_hash, :timeout_ms, :tag, :priority,
    :max_attempts, :backoff_ms, :backoff_factor, :coalesce_key,
    :limit_memory, :limit_pids, :limit_cpu, :env, :warm)
