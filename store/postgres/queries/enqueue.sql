-- Enqueue inserts one job in one statement: its live job_queue row and its
-- immutable job row (with the pin). The job row is inserted only when the
-- queue row was: a waiting job that already holds the same coalesce key
-- makes ON CONFLICT skip both, and the caller folds the request into it
-- instead (enqueue_coalesce.sql). A NULL coalesce key never conflicts.
-- The pg_notify runs in the same transaction, so workers are woken only
-- when the job is committed; @notify is false inside EnqueueBatch, which
-- sends one notification per tag at the end. pg_notify returns void, which
-- casts to '': the filter keeps every row, and CASE runs pg_notify only
-- when asked.
--
-- The job keeps its schemas' hashes, and schemas stores their texts in
-- job_schema as pin_schemas does in enqueue_batch.sql (whose comment says
-- why it is written this way). It runs only when the job is inserted.
--
-- With @at_commit the job is inserted only while its app is still at the
-- pin's source and commit (spine.EnqueueParams.AtCommit): no row then
-- means a stale pin, since such a job has no coalesce key.
--
-- queued_event writes the job's job.queued event (DESIGN §9) from the rows
-- inserted, only when the job is: a folded request writes none.
WITH queued AS (
    INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for, coalesce_key)
    SELECT @id, @workspace, @app_key, @action_key, @tag, @priority,
           coalesce(@scheduled_for::timestamptz, @now::timestamptz, now()), @coalesce_key
    WHERE NOT @at_commit::boolean
       OR EXISTS (SELECT 1 FROM app a WHERE a.workspace = @workspace AND a.app_key = @app_key
                  AND a.git_source_id = @git_source_id AND a.commit_sha = @commit_sha)
    ON CONFLICT (workspace, app_key, action_key, coalesce_key) WHERE coalesce_key IS NOT NULL DO NOTHING
    RETURNING job_id, tag, generation, scheduled_for
), pinned AS (
    INSERT INTO job (id, workspace, trigger_kind, trigger_ref, created_by, created_at, input,
                     git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
                     input_schema_hash, output_schema_hash, timeout_ms, tag, priority,
                     max_attempts, backoff_ms, backoff_factor, coalesce_key,
                     limit_memory, limit_pids, limit_cpu, env, warm)
    SELECT queued.job_id, @workspace::text, @trigger_kind::text, @trigger_ref::text, @created_by::text,
           coalesce(@now::timestamptz, now()), @input::jsonb,
           @git_source_id::text, @commit_sha::text, @app_key::text, @action_key::text, @entrypoint::text, @runtime::text,
           @input_schema_hash::text, @output_schema_hash::text, @timeout_ms::bigint, queued.tag, @priority::integer,
           @max_attempts::integer, @backoff_ms::bigint, @backoff_factor::double precision, @coalesce_key::text,
           @limit_memory::bigint, @limit_pids::integer, @limit_cpu::double precision, @env::text, @warm::text
    FROM queued
    RETURNING *
), queued_event AS (
    INSERT INTO event_outbox (id, workspace, type, subject, time, job_state)
    SELECT event_id(p.created_at), p.workspace, 'job.queued', p.id::text, p.created_at,
           job_event_state_of(ROW(p.*)::job, 'queued', p.priority, q.scheduled_for, NULL, NULL, NULL,
                          1, 0, q.generation, NULL, NULL, NULL, NULL, NULL)
    FROM pinned p
    JOIN queued q ON q.job_id = p.id
    WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = p.workspace) -- recorded while the workspace has a sink
), schemas AS (
    INSERT INTO job_schema (hash, used_at, body)
    SELECT DISTINCT ON (s.hash) s.hash, greatest(coalesce(@now::timestamptz, now()), now()), s.body::jsonb
    FROM queued
    CROSS JOIN (VALUES (@input_schema_hash::text, @input_schema::text),
                       (@output_schema_hash::text, @output_schema::text)) AS s(hash, body)
    WHERE s.hash IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM job_schema x WHERE x.hash = s.hash
                      AND x.used_at >= greatest(coalesce(@now::timestamptz, now()), now()) - @schema_touch_ms::bigint * interval '1 millisecond')
    ON CONFLICT (hash) DO UPDATE SET used_at = greatest(job_schema.used_at, excluded.used_at)
)
SELECT job_id, generation
FROM queued
WHERE (CASE WHEN @notify::boolean THEN pg_notify(@channel::text, tag)::text ELSE '' END) = ''
