-- ReapLock locks up to @limit running jobs whose ping is missing or older
-- than the zombie timeout (invariant 4). SKIP LOCKED: a job another reaper
-- holds, or whose heartbeat, completion or log append is in flight, is left
-- for the next pass, so concurrent reapers never handle one job twice. The
-- caller's writes repeat this guard: what is read here may be stale by then.
SELECT q.job_id, q.claim_token, q.worker, q.restarts, q.canceled_by IS NOT NULL, r.ping
FROM job_queue q
LEFT JOIN job_runtime r ON r.job_id = q.job_id
WHERE q.running
  AND (r.ping IS NULL
       OR r.ping < coalesce(@now::timestamptz, now()) - @zombie_timeout_ms::bigint * interval '1 millisecond')
ORDER BY r.ping NULLS FIRST, q.job_id
LIMIT @limit
FOR UPDATE OF q SKIP LOCKED
