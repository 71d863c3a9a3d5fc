-- What a failed attempt needs to decide between a retry and the end: the
-- attempt, the cancel mark and the retry policy pinned at enqueue. Fenced
-- like every owner write; no row means the caller lost the job.
SELECT q.attempt, q.canceled_by IS NOT NULL, j.max_attempts, j.backoff_ms, j.backoff_factor
FROM job_queue AS q
JOIN job AS j ON j.id = q.job_id
WHERE q.job_id = :id AND q.claim_token = :token AND q.running = 1
