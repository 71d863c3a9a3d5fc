-- CompleteBatch finishes many owned jobs in one statement, each exactly as
-- complete.sql would (invariant 5), so one round trip and one commit serve
-- the whole batch.
--
-- batch holds one row per request (the caller never repeats a lease), in
-- job_id order. owned walks it in that order and, for each lease, locks the
-- queue row whose claim token still matches and that still runs, so two
-- overlapping batches (or a batch and a heartbeat, which also locks in
-- job_id order) cannot deadlock; a row that waited for its lock is
-- re-checked against the fence before it is taken. A lease that is lost
-- simply finds no row: its job is left alone and the others go on.
--
-- Every row is reached by key, whatever the statistics say. The lookup is
-- a LATERAL subquery with its own FOR UPDATE, which the planner cannot
-- flatten into a join: one primary-key probe per lease. The LIMIT on batch
-- removes nothing; it makes the generic plan expect one lease instead of
-- ten, so the joins after it (finished, runtime_gone) stay nested loops of
-- key probes even when the plan is cached on a queue that looked tiny (a
-- fresh schema, never analyzed: seen in the benchmark as a hash join over a
-- sequential scan of the whole queue for every batch). finished joins on
-- job_id, not on the ctid the lock saw: a row updated after the
-- statement's snapshot (a cancel mark) is reached by following its update
-- chain from the version the snapshot sees; its new ctid is invisible to
-- that snapshot, and the job would silently drop out of the batch.
--
-- tails appends each owned job's last log chunk (an empty tail is none),
-- numbered after its last chunk as append_log.sql does: the lock owned
-- holds serializes it with the job's other appends, and the chunk commits
-- with the completion or not at all.
--
-- finished deletes the locked rows and carries each one's result and time
-- along (so no CTE is joined back to the batch: a batch of thousands stays
-- linear), recorded writes their job_completed rows (canceled when they
-- carry the cancel mark, invariant 6), and runtime_gone removes their
-- runtime rows, all in the same statement. Data-modifying CTEs always run
-- to completion, so the answer is read from finished.
--
-- finished_events writes each job's job.succeeded or job.canceled event
-- (DESIGN §9), its state (migration 0020) from the rows finished returns, in job_id
-- order: the batch's events cost no statement of their own, and one
-- outbox row per workspace and event_batch_max() events (migration 0021).
--
-- notified wakes the finished jobs' waiters on @done_channel, delivered on
-- commit: one line per job, its id and, for a success whose result's text
-- is at most 2,000 bytes, a space and that text as recorded stored it (the
-- waiter answers ?wait with it instead of reading the job; jsonb's text
-- has no newline). Lines are cut into notifications of under 5,000 bytes
-- before their last line, so each stays under the 8,000-byte payload
-- limit. It is joined into the answer (one row) so that it runs.
WITH batch AS (
    SELECT *
    FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[], @results::text[], @nows::timestamptz[], @tails::text[])
        AS b(job_id, claim_token, result, now, tail)
    ORDER BY job_id
    LIMIT cardinality(@job_ids::uuid[])
), owned AS MATERIALIZED (
    SELECT q.job_id, b.result, coalesce(b.now, now()) AS now, b.tail
    FROM batch b
    CROSS JOIN LATERAL (
        SELECT job_id
        FROM job_queue
        WHERE job_id = b.job_id AND claim_token = b.claim_token AND running
        FOR UPDATE
    ) AS q
), finished AS (
    DELETE FROM job_queue q
    USING owned o
    WHERE q.job_id = o.job_id
    RETURNING q.job_id, q.claim_token, q.workspace, q.tag, q.started_at, q.worker, q.attempt, q.restarts,
              q.canceled_by, q.canceled_reason, o.result, o.now,
              CASE WHEN q.canceled_by IS NOT NULL THEN 'canceled' ELSE 'success' END AS status
), recorded AS (
    INSERT INTO job_completed (job_id, workspace, tag, status, result, error, started_at, completed_at,
                               duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
    SELECT job_id, workspace, tag, status, result::jsonb, NULL, started_at, now,
           greatest(0, floor(extract(epoch FROM now - started_at) * 1000))::bigint,
           worker, attempt, restarts, canceled_by, canceled_reason
    FROM finished
    RETURNING job_id, status, result::text AS result
), tails AS (
    INSERT INTO job_logs (job_id, seq, data, created_at)
    SELECT o.job_id, coalesce((SELECT max(seq) FROM job_logs l WHERE l.job_id = o.job_id), 0) + 1, o.tail, o.now
    FROM owned o
    WHERE o.tail <> ''
), runtime_gone AS (
    DELETE FROM job_runtime r USING finished f WHERE r.job_id = f.job_id
), finished_events AS (
    INSERT INTO event_outbox (id, workspace, time, job_states, times, span)
    SELECT event_id(b.times[k * event_batch_max() + 1]), b.workspace, b.times[k * event_batch_max() + 1],
           b.states[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           b.times[k * event_batch_max() + 1 : (k + 1) * event_batch_max()],
           least(b.n - k * event_batch_max(), event_batch_max())
    FROM (
        SELECT f.workspace AS workspace,
               array_agg(job_event_state_of(j, f.status, j.priority, NULL, f.started_at, f.now, f.worker,
                                            f.attempt, f.restarts, j.generation, f.result::jsonb, NULL, NULL,
                                            f.canceled_by, f.canceled_reason)
                         ORDER BY f.job_id) AS states,
               array_agg(f.now ORDER BY f.job_id) AS times, count(*) AS n
        FROM finished f
        JOIN job j ON j.id = f.job_id
        WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = f.workspace) -- recorded while the workspace has a sink
        GROUP BY f.workspace
    ) AS b
    CROSS JOIN LATERAL generate_series(0, (b.n - 1) / event_batch_max()) AS k
    ORDER BY b.workspace, k
), notified AS (
    SELECT count(pg_notify(@done_channel::text, payload)) AS n
    FROM (
        SELECT string_agg(line, E'\n' ORDER BY k) AS payload
        FROM (
            SELECT k, line, (sum(octet_length(line) + 1) OVER (ORDER BY k) - octet_length(line) - 1) / 5000 AS chunk
            FROM (
                SELECT row_number() OVER () AS k,
                       job_id::text || CASE WHEN status = 'success' AND octet_length(coalesce(result, 'null')) <= 2000
                                            THEN ' ' || coalesce(result, 'null') ELSE '' END AS line
                FROM recorded
            ) AS lines
        ) AS numbered
        GROUP BY chunk
    ) AS chunks
)
SELECT job_id, claim_token, status FROM finished, notified
