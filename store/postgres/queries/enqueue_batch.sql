-- EnqueueBatch inserts many jobs without a coalesce key in one statement:
-- one row per job in job_queue and in job (with the pin), from parallel
-- arrays, so a batch costs one round trip and one parse however large it
-- is. Jobs without a coalesce key never conflict, so every row is
-- inserted; a repeated id fails the whole statement (and its transaction).
-- The wake-up is sent by the caller once per tag (notify.sql) in the same
-- transaction.
WITH rows AS (
    SELECT *
    FROM unnest(@ids::uuid[], @workspaces::text[], @trigger_kinds::text[], @trigger_refs::text[],
                @created_bys::text[], @nows::timestamptz[], @scheduled_fors::timestamptz[], @inputs::text[],
                @git_source_ids::text[], @commit_shas::text[], @app_keys::text[], @action_keys::text[],
                @entrypoints::text[], @runtimes::text[], @input_schemas::text[], @output_schemas::text[],
                @timeout_mss::bigint[], @tags::text[], @priorities::integer[], @max_attemptss::integer[],
                @backoff_mss::bigint[], @backoff_factors::double precision[],
                @limit_memories::bigint[], @limit_pidss::integer[], @limit_cpus::double precision[])
        AS r(id, workspace, trigger_kind, trigger_ref, created_by, now, scheduled_for, input,
             git_source_id, commit_sha, app_key, action_key, entrypoint, runtime, input_schema, output_schema,
             timeout_ms, tag, priority, max_attempts, backoff_ms, backoff_factor,
             limit_memory, limit_pids, limit_cpu)
), queued AS (
    INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for)
    SELECT id, workspace, app_key, action_key, tag, priority, coalesce(scheduled_for, now, now())
    FROM rows
    RETURNING job_id
), pinned AS (
    INSERT INTO job (id, workspace, trigger_kind, trigger_ref, created_by, created_at, input,
                     git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
                     input_schema, output_schema, timeout_ms, tag, priority,
                     max_attempts, backoff_ms, backoff_factor, coalesce_key,
                     limit_memory, limit_pids, limit_cpu)
    SELECT id, workspace, trigger_kind, trigger_ref, created_by, coalesce(now, now()), input::jsonb,
           git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
           input_schema::jsonb, output_schema::jsonb, timeout_ms, tag, priority,
           max_attempts, backoff_ms, backoff_factor, NULL,
           limit_memory, limit_pids, limit_cpu
    FROM rows
)
SELECT count(*) FROM queued
