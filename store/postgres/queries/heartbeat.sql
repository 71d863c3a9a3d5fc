-- Heartbeat renews the ping of every lease that is still owned, in one
-- statement (invariant 3), and returns those leases with their cancel mark.
--
-- owned takes FOR KEY SHARE on the queue rows: it does not block a cancel
-- mark (a non-key update) but it does conflict with the reaper's FOR UPDATE
-- and with the fenced delete of a completion. So a reaper skips a job whose
-- heartbeat is in flight, and a heartbeat that waited behind a reaper or a
-- completion re-checks the row and leaves a lost lease out. That holds
-- because every writer that takes a job from its owner (reaper, requeue,
-- completion, release) locks the row FOR UPDATE first: a plain UPDATE of
-- non-key columns would neither wait for nor re-check this lock.
--
-- Rows are locked in job_id order so two overlapping heartbeats cannot
-- deadlock: leases are walked in that order, each one's row probed and
-- locked by a LATERAL subquery that the planner cannot turn into a scan of
-- the whole queue (see complete_batch.sql). DISTINCT: a lease named twice
-- must not make the upsert touch a row twice (an error that would fail the
-- whole heartbeat).
WITH leases AS (
    SELECT DISTINCT * FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[]) AS l(job_id, claim_token)
    ORDER BY job_id
), owned AS MATERIALIZED (
    SELECT q.job_id, q.cancel_requested
    FROM leases l
    CROSS JOIN LATERAL (
        SELECT job_id, canceled_by IS NOT NULL AS cancel_requested
        FROM job_queue
        WHERE job_id = l.job_id AND claim_token = l.claim_token AND running
        FOR KEY SHARE
    ) AS q
), pinged AS (
    INSERT INTO job_runtime (job_id, ping)
    SELECT job_id, coalesce(@now::timestamptz, now()) FROM owned
    ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
)
SELECT job_id, cancel_requested FROM owned
