-- LockLease locks an owned job's queue row for the rest of the transaction
-- (fenced on the claim token) and reads what Fail and Release decide on: the
-- attempt, the cancel mark, the pinned retry policy and the clock.
SELECT q.attempt, q.canceled_by IS NOT NULL, j.max_attempts, j.backoff_ms, j.backoff_factor,
       coalesce(@now::timestamptz, now())
FROM job_queue q
JOIN job j ON j.id = q.job_id
WHERE q.job_id = @job_id AND q.claim_token = @claim_token AND q.running
FOR UPDATE OF q
