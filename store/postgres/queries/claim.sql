-- Claim takes up to @limit waiting jobs on @tags in one statement
-- (invariant 2).
--
-- picked locks the best rows with SKIP LOCKED in a MATERIALIZED CTE: the
-- UPDATE joins that fixed set, so the planner can never re-run the LIMIT
-- subquery and lock or update more rows than asked (see PITFALLS). Each tag
-- is read by its own ordered scan of job_queue_claim (tag = t.tag, not
-- tag = ANY(...)), so a deep queue is never sorted whole; the outer ORDER BY
-- and LIMIT merge the tags.
--
-- claimed sets the owner and a fresh claim token, and clears coalesce_key so
-- one follow-up may wait while this job runs. It finds each picked row by
-- job_id alone: picked checked NOT running under the lock it still holds.
-- With NOT running here too, the plan cached on a fresh, never-analyzed
-- queue probed job_queue_claim (whose predicate that matches, and whose
-- last column is job_id) instead of the primary key: a read of the whole
-- index per picked job. (Not the ctid picked saw: a row updated after the
-- statement's snapshot is reached only through its update chain.)
--
-- pinged writes the first ping in the same statement, so a worker that
-- dies before its first heartbeat is still reaped.
--
-- offered leaves or renews the worker's offer (migration 0022) when the
-- claim found fewer jobs than asked and the worker asked for one
-- (@offer_ms > 0): until it expires, an enqueue may dispatch a job of
-- @tags to the worker (enqueue.sql). A full claim leaves the offer as it
-- was, to lapse: under load there is no write for it.
--
-- started writes each claimed job's job.started event (DESIGN §9), its
-- state (migration 0020) from the rows claimed returns (this statement cannot read its
-- own update back), in the order the claim gives the jobs: one outbox row
-- per workspace and event_batch_max() events (migration 0021).
WITH picked AS MATERIALIZED (
    SELECT c.job_id
    FROM unnest(@tags::text[]) AS t(tag)
    CROSS JOIN LATERAL (
        SELECT job_id, priority, scheduled_for
        FROM job_queue
        WHERE tag = t.tag AND NOT running
          AND scheduled_for <= coalesce(@now::timestamptz, now())
        ORDER BY priority DESC, scheduled_for, job_id
        LIMIT @limit
        FOR UPDATE SKIP LOCKED
    ) AS c
    ORDER BY c.priority DESC, c.scheduled_for, c.job_id
    LIMIT @limit
), claimed AS (
    UPDATE job_queue q
    SET running = true,
        started_at = coalesce(@now::timestamptz, now()),
        worker = @worker,
        claim_token = gen_random_uuid(),
        coalesce_key = NULL
    FROM picked
    WHERE q.job_id = picked.job_id
    RETURNING q.job_id, q.priority, q.scheduled_for, q.started_at, q.claim_token,
              q.attempt, q.restarts, q.generation, q.worker, q.last_error
), pinged AS (
    INSERT INTO job_runtime (job_id, ping)
    SELECT job_id, started_at FROM claimed
    ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
), offered AS (
    INSERT INTO worker_offer (worker, tags, capacity, expires_at)
    SELECT @worker, @tags, @capacity,
           coalesce(@now::timestamptz, now()) + @offer_ms::bigint * interval '1 millisecond'
    WHERE @offer_ms::bigint > 0 AND (SELECT count(*) FROM claimed) < @limit
    ON CONFLICT (worker) DO UPDATE
    SET tags = excluded.tags, capacity = excluded.capacity, expires_at = excluded.expires_at
), started AS (
    INSERT INTO event_outbox (id, workspace, time, job_states, times, span)
    SELECT event_id(b.times[k * event_batch_max() + 1]), b.workspace, b.times[k * event_batch_max() + 1],
           b.states[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           b.times[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           least(b.n - k * event_batch_max(), event_batch_max())
    FROM (
        SELECT j.workspace AS workspace,
               array_agg(job_event_state_of(j, 'running', c.priority, c.scheduled_for, c.started_at, NULL, c.worker,
                                            c.attempt, c.restarts, c.generation, NULL, NULL, c.last_error, NULL, NULL)
                         ORDER BY c.priority DESC, c.scheduled_for, c.job_id) AS states,
               array_agg(c.started_at ORDER BY c.priority DESC, c.scheduled_for, c.job_id) AS times, count(*) AS n
        FROM claimed c
        JOIN job j ON j.id = c.job_id
        WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = j.workspace) -- recorded while the workspace has a sink
        GROUP BY j.workspace
    ) AS b
    CROSS JOIN LATERAL generate_series(0, (b.n - 1) / event_batch_max()) AS k
    ORDER BY b.workspace, k
)
SELECT c.job_id, j.workspace, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor,
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm,
       c.priority, c.claim_token, c.attempt, c.restarts, c.started_at, c.generation
FROM claimed c
JOIN job j ON j.id = c.job_id
LEFT JOIN job_schema si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema so ON so.hash = j.output_schema_hash
ORDER BY c.priority DESC, c.scheduled_for, c.job_id
