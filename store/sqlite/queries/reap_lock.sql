-- ReapLock: running jobs whose worker stopped heartbeating (invariant 4): no ping,
-- or a ping older than :cutoff, with what spine.ReapRule decides from (the
-- worker, the restarts, the cancel mark, the last ping). The writes that
-- follow repeat this guard with the claim token read here; they never act
-- on this read alone.
SELECT q.job_id, q.claim_token, q.worker, q.restarts, q.canceled_by IS NOT NULL, r.ping
FROM job_queue AS q
LEFT JOIN job_runtime AS r ON r.job_id = q.job_id
WHERE q.running = 1 AND (r.ping IS NULL OR r.ping < :cutoff)
ORDER BY q.started_at, q.job_id
LIMIT :limit
