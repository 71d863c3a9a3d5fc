-- LockLeases is lock_lease.sql for the many leases of a FailBatch, in one
-- statement: each lease's queue row is locked (fenced on its claim token)
-- and read with what Fail decides on: the attempt, the cancel mark, the
-- pinned retry policy and the clock. Leases are walked in job_id order and
-- each row is found by a LATERAL primary-key probe, as in
-- complete_batch.sql (the same lock order, the same plan whatever the
-- statistics say). A lost lease returns no row.
WITH leases AS (
    SELECT *
    FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[], @nows::timestamptz[]) AS l(job_id, claim_token, now)
    ORDER BY job_id
    LIMIT cardinality(@job_ids::uuid[])
)
SELECT q.job_id, l.claim_token, q.attempt, q.canceled, q.max_attempts, q.backoff_ms, q.backoff_factor,
       coalesce(l.now, now())
FROM leases l
CROSS JOIN LATERAL (
    SELECT jq.job_id, jq.attempt, jq.canceled_by IS NOT NULL AS canceled,
           j.max_attempts, j.backoff_ms, j.backoff_factor
    FROM job_queue jq
    JOIN job j ON j.id = jq.job_id
    WHERE jq.job_id = l.job_id AND jq.claim_token = l.claim_token AND jq.running
    FOR UPDATE OF jq
) AS q
