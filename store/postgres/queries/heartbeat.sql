-- Heartbeat renews the ping of every lease that is still owned, in one
-- statement (invariant 3), and returns those leases with their cancel mark.
--
-- owned takes FOR KEY SHARE on the queue rows: it does not block a cancel
-- mark (a non-key update) but it does conflict with the reaper's FOR UPDATE
-- and with the fenced delete of a completion. So a reaper skips a job whose
-- heartbeat is in flight, and a heartbeat that waited behind a reaper or a
-- completion re-checks the row and leaves a lost lease out. Rows are locked
-- in job_id order so two overlapping heartbeats cannot deadlock. DISTINCT:
-- a lease named twice must not make the upsert touch a row twice (an error
-- that would fail the whole heartbeat).
WITH leases AS (
    SELECT DISTINCT * FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[]) AS l(job_id, claim_token)
), owned AS MATERIALIZED (
    SELECT q.job_id, q.canceled_by IS NOT NULL AS cancel_requested
    FROM job_queue q
    JOIN leases l ON l.job_id = q.job_id AND l.claim_token = q.claim_token
    WHERE q.running
    ORDER BY q.job_id
    FOR KEY SHARE OF q
), pinged AS (
    INSERT INTO job_runtime (job_id, ping)
    SELECT job_id, coalesce(@now::timestamptz, now()) FROM owned
    ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
)
SELECT job_id, cancel_requested FROM owned
