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
-- offer dispatches the job at enqueue (migration 0022, spine/dispatch.go)
-- when the caller allows it (@dispatch: no coalesce key, not inside a
-- caller's transaction, which would hold the offer's lock), the job is
-- due, no waiting due job of its tag has its priority or a higher one
-- (a dispatch never jumps the queue), and a live offer of its tag comes
-- from a worker whose running jobs are fewer than its capacity. SKIP
-- LOCKED: an offer another enqueue or its worker's claim holds is passed
-- over, and the job waits for a claim as before. queued then inserts the
-- job running, owned by that worker with a fresh claim token, and pinged
-- writes its first ping, as a claim would (invariant 2).
--
-- queued_event writes the job's job.queued event (DESIGN §9) from the rows
-- inserted, only when the job is: a folded request writes none. A
-- dispatched job's job.started follows it in the same outbox row (a batch
-- row of two, migration 0021), in that order.
--
-- The last line wakes the job's tag, or tells its worker of a dispatched
-- job on @dispatch_channel: "job_id claim_token worker", then, when the
-- whole fits a notification's 8,000 bytes, a line with the job as stored
-- (its job row, queue generation and start, schema bodies), from which
-- the worker builds what read_dispatched.sql would return (listen.go).
-- It is built only for a dispatch (CASE runs one branch). A dispatch also
-- turns synchronous_commit back on for this transaction (set_config,
-- local): an enqueue the caller let commit unsynced is flushed before its
-- job runs, as the claim's synced commit would have flushed it.
WITH offer AS MATERIALIZED (
    SELECT o.worker
    FROM worker_offer o
    WHERE @dispatch::boolean
      AND coalesce(@scheduled_for::timestamptz, '-infinity') <= coalesce(@now::timestamptz, now())
      AND o.expires_at > coalesce(@now::timestamptz, now())
      AND @tag::text = ANY (o.tags)
      AND NOT EXISTS (SELECT 1 FROM job_queue w
                      WHERE w.tag = @tag::text AND NOT w.running
                        AND w.scheduled_for <= coalesce(@now::timestamptz, now())
                        AND w.priority >= @priority::integer)
      AND (SELECT count(*) FROM job_queue r WHERE r.worker = o.worker AND r.running) < o.capacity
    ORDER BY o.expires_at DESC
    LIMIT 1
    FOR UPDATE OF o SKIP LOCKED
), queued AS (
    INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for, coalesce_key,
                           running, started_at, worker, claim_token)
    SELECT @id, @workspace, @app_key, @action_key, @tag, @priority,
           coalesce(@scheduled_for::timestamptz, @now::timestamptz, now()), @coalesce_key,
           d.worker IS NOT NULL,
           CASE WHEN d.worker IS NOT NULL THEN coalesce(@now::timestamptz, now()) END,
           d.worker,
           CASE WHEN d.worker IS NOT NULL THEN gen_random_uuid() END
    FROM (SELECT) AS one
    LEFT JOIN offer d ON true
    WHERE NOT @at_commit::boolean
       OR EXISTS (SELECT 1 FROM app a WHERE a.workspace = @workspace AND a.app_key = @app_key
                  AND a.git_source_id = @git_source_id AND a.commit_sha = @commit_sha)
    ON CONFLICT (workspace, app_key, action_key, coalesce_key) WHERE coalesce_key IS NOT NULL DO NOTHING
    RETURNING job_id, tag, generation, scheduled_for, running, started_at, worker, claim_token
), pinged AS (
    INSERT INTO job_runtime (job_id, ping)
    SELECT job_id, started_at FROM queued WHERE running
    ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
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
    INSERT INTO event_outbox (id, workspace, type, subject, time, job_state, job_states, times, span)
    SELECT event_id(p.created_at), p.workspace,
           CASE WHEN NOT q.running THEN 'job.queued' END,
           CASE WHEN NOT q.running THEN p.id::text END,
           p.created_at,
           CASE WHEN NOT q.running THEN e.queued END,
           CASE WHEN q.running THEN ARRAY[e.queued, e.started] END,
           CASE WHEN q.running THEN ARRAY[p.created_at, q.started_at] END,
           CASE WHEN q.running THEN 2 ELSE 1 END
    FROM pinned p
    JOIN queued q ON q.job_id = p.id
    CROSS JOIN LATERAL (
        SELECT job_event_state_of(ROW(p.*)::job, 'queued', p.priority, q.scheduled_for, NULL, NULL, NULL,
                                  1, 0, q.generation, NULL, NULL, NULL, NULL, NULL) AS queued,
               CASE WHEN q.running THEN
                   job_event_state_of(ROW(p.*)::job, 'running', p.priority, q.scheduled_for, q.started_at, NULL,
                                      q.worker, 1, 0, q.generation, NULL, NULL, NULL, NULL, NULL) END AS started
    ) AS e
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
SELECT q.job_id, q.generation
FROM queued q
WHERE (CASE WHEN q.running THEN pg_notify(@dispatch_channel::text, (
                                SELECT CASE WHEN octet_length(m.head || m.job) < 8000 THEN m.head || m.job ELSE m.head END
                                FROM pinned p
                                CROSS JOIN LATERAL (SELECT q.job_id::text || ' ' || q.claim_token::text || ' ' || q.worker AS head,
                                    E'\n' || json_build_object('job', row_to_json(p), 'generation', q.generation, 'started_at', q.started_at,
                                        'input_schema', @input_schema::jsonb, 'output_schema', @output_schema::jsonb)::text AS job) m
                                WHERE p.id = q.job_id))::text
                              || set_config('synchronous_commit', 'on', true) = 'on'
            WHEN @notify::boolean THEN pg_notify(@channel::text, tag)::text = ''
            ELSE true END)
