-- Renew the ping of every lease in :leases (a JSON array of [job_id,
-- claim_token] pairs) that its caller still owns, in one statement
-- (invariant 3), and return those leases with their cancel mark. A lease
-- that is not returned is lost. DISTINCT: a lease named twice is renewed
-- and returned once.
INSERT INTO job_runtime (job_id, ping)
SELECT q.job_id, :now
FROM (SELECT DISTINCT value ->> 0 AS job_id, value ->> 1 AS claim_token FROM json_each(:leases)) AS l
JOIN job_queue AS q ON q.job_id = l.job_id AND q.claim_token = l.claim_token
WHERE q.running = 1
ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
RETURNING job_id,
          (SELECT q.canceled_by IS NOT NULL FROM job_queue AS q WHERE q.job_id = job_runtime.job_id)
