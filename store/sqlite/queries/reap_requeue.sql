-- Put dead workers' jobs back to waiting while they are under the restart
-- limit; the attempt is not charged. :candidates is a JSON array of
-- [job_id, claim_token, last_error] triples; last_error is the encoded job
-- error spine.ReapRule wrote, as on Postgres. The whole guard is repeated
-- here: still running, same claim token, not marked canceled, under the
-- restart limit, ping still stale.
UPDATE job_queue
SET running = 0, worker = NULL, claim_token = NULL, started_at = NULL,
    restarts = restarts + 1, scheduled_for = :now,
    last_error = c.value ->> 2
FROM json_each(:candidates) AS c
WHERE job_queue.job_id = c.value ->> 0
  AND job_queue.claim_token = c.value ->> 1
  AND job_queue.running = 1
  AND job_queue.canceled_by IS NULL
  AND job_queue.restarts + 1 <= :restart_limit
  AND NOT EXISTS (SELECT 1 FROM job_runtime AS r WHERE r.job_id = job_queue.job_id AND r.ping >= :cutoff)
RETURNING job_id, tag
