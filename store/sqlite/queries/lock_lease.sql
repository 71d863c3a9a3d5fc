-- LockLease reads what a failed attempt or a release decides on: the
-- attempt, the cancel mark and the retry policy pinned at enqueue. Fenced
-- like every owner write; no row means the caller lost the job. The one
-- writer connection is the lock: nothing changes the row before the write
-- that follows in the same transaction.
SELECT q.attempt, q.canceled_by IS NOT NULL, j.max_attempts, j.backoff_ms, j.backoff_factor
FROM job_queue AS q
JOIN job AS j ON j.id = q.job_id
WHERE q.job_id = :id AND q.claim_token = :token AND q.running = 1
