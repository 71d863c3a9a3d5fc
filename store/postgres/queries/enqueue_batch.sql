-- EnqueueBatch inserts many jobs without a coalesce key in one statement:
-- one row per job in job_queue and in job (with the pin), from parallel
-- arrays, so a batch costs one round trip and one parse however large it
-- is. Jobs without a coalesce key never conflict, so every row is
-- inserted; a repeated id fails the whole statement (and its transaction).
-- The wake-up is sent by the caller once per tag (notify.sql) in the same
-- transaction.
--
-- A job keeps only its schemas' hashes. The texts come once per distinct
-- hash (@schema_hashes, @schema_bodies), and pin_schemas writes them to
-- job_schema:
-- - A row an enqueue pinned within @schema_touch_ms (an hour) is left alone:
--   the common case writes nothing, takes no lock and parses no JSON.
-- - Otherwise (a new schema, or one unused for an hour) the upsert inserts
--   it or moves its used_at forward, under the row's lock. A sweep deleting
--   the row at that moment either waits for this transaction and then
--   finds the row fresh, or commits first, and the upsert inserts the row
--   again (ON CONFLICT rechecks the index, not this statement's snapshot).
-- - used_at is the latest of the jobs' created_at and the database clock,
--   so every job pinning a row was created before used_at + @schema_touch_ms:
--   sweep_schemas.sql relies on it.
--
-- queued_events writes each job's job.queued event (DESIGN §9) from the
-- rows inserted, in id order (the order of a batch of fresh UUIDv7s): one
-- outbox row per workspace and event_batch_max() events (migration 0021).
WITH rows AS (
    SELECT *
    FROM unnest(@ids::uuid[], @workspaces::text[], @trigger_kinds::text[], @trigger_refs::text[],
                @created_bys::text[], @nows::timestamptz[], @scheduled_fors::timestamptz[], @inputs::text[],
                @git_source_ids::text[], @commit_shas::text[], @app_keys::text[], @action_keys::text[],
                @entrypoints::text[], @runtimes::text[], @input_schema_hashes::text[], @output_schema_hashes::text[],
                @timeout_mss::bigint[], @tags::text[], @priorities::integer[], @max_attemptss::integer[],
                @backoff_mss::bigint[], @backoff_factors::double precision[],
                @limit_memories::bigint[], @limit_pidss::integer[], @limit_cpus::double precision[],
                @envs::text[], @warms::text[])
        AS r(id, workspace, trigger_kind, trigger_ref, created_by, now, scheduled_for, input,
             git_source_id, commit_sha, app_key, action_key, entrypoint, runtime, input_schema_hash, output_schema_hash,
             timeout_ms, tag, priority, max_attempts, backoff_ms, backoff_factor,
             limit_memory, limit_pids, limit_cpu, env, warm)
), queued AS (
    INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for)
    SELECT id, workspace, app_key, action_key, tag, priority, coalesce(scheduled_for, now, now())
    FROM rows
    RETURNING job_id, scheduled_for, generation
), pinned AS (
    INSERT INTO job (id, workspace, trigger_kind, trigger_ref, created_by, created_at, input,
                     git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
                     input_schema_hash, output_schema_hash, timeout_ms, tag, priority,
                     max_attempts, backoff_ms, backoff_factor, coalesce_key,
                     limit_memory, limit_pids, limit_cpu, env, warm)
    SELECT id, workspace, trigger_kind, trigger_ref, created_by, coalesce(now, now()), input::jsonb,
           git_source_id, commit_sha, app_key, action_key, entrypoint, runtime,
           input_schema_hash, output_schema_hash, timeout_ms, tag, priority,
           max_attempts, backoff_ms, backoff_factor, NULL,
           limit_memory, limit_pids, limit_cpu, env, warm
    FROM rows
    RETURNING *
), queued_events AS (
    INSERT INTO event_outbox (id, workspace, time, job_states, times, span)
    SELECT event_id(b.times[k * event_batch_max() + 1]), b.workspace, b.times[k * event_batch_max() + 1],
           b.states[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           b.times[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           least(b.n - k * event_batch_max(), event_batch_max())
    FROM (
        SELECT p.workspace AS workspace,
               array_agg(job_event_state_of(ROW(p.*)::job, 'queued', p.priority, q.scheduled_for, NULL, NULL, NULL,
                                            1, 0, q.generation, NULL, NULL, NULL, NULL, NULL)
                         ORDER BY p.id) AS states,
               array_agg(p.created_at ORDER BY p.id) AS times, count(*) AS n
        FROM pinned p
        JOIN queued q ON q.job_id = p.id
        WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = p.workspace) -- recorded while the workspace has a sink
        GROUP BY p.workspace
    ) AS b
    CROSS JOIN LATERAL generate_series(0, (b.n - 1) / event_batch_max()) AS k
    ORDER BY b.workspace, k
), schema_use AS (
    SELECT u.hash, greatest(max(coalesce(r.now, now())), now()) AS used_at
    FROM rows r
    CROSS JOIN LATERAL (VALUES (r.input_schema_hash), (r.output_schema_hash)) AS u(hash)
    WHERE u.hash IS NOT NULL
    GROUP BY u.hash
), pin_schemas AS (
    INSERT INTO job_schema (hash, used_at, body)
    SELECT s.hash, u.used_at, s.body::jsonb
    FROM unnest(@schema_hashes::text[], @schema_bodies::text[]) AS s(hash, body)
    JOIN schema_use u ON u.hash = s.hash
    WHERE NOT EXISTS (SELECT 1 FROM job_schema x WHERE x.hash = s.hash
                      AND x.used_at >= u.used_at - @schema_touch_ms::bigint * interval '1 millisecond')
    ON CONFLICT (hash) DO UPDATE SET used_at = greatest(job_schema.used_at, excluded.used_at)
)
SELECT count(*) FROM queued
