-- Record the dead workers' jobs that end here: canceled when marked
-- (started_at kept, no error), else failure past the restart limit with
-- the encoded job error spine.ReapRule wrote. :candidates is a JSON array
-- of [job_id, claim_token, error] triples. Same guard as the requeue.
INSERT INTO job_completed (
    job_id, workspace, tag, status, result, error, started_at, completed_at,
    duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
SELECT q.job_id, q.workspace, q.tag,
       CASE WHEN q.canceled_by IS NOT NULL THEN 'canceled' ELSE 'failure' END,
       NULL,
       CASE WHEN q.canceled_by IS NOT NULL THEN NULL ELSE c.value ->> 2 END,
       q.started_at, :now, max(0, (:now - q.started_at) / 1000), q.worker,
       q.attempt, q.restarts, q.canceled_by, q.canceled_reason
FROM json_each(:candidates) AS c
JOIN job_queue AS q ON q.job_id = c.value ->> 0 AND q.claim_token = c.value ->> 1
LEFT JOIN job_runtime AS r ON r.job_id = q.job_id
WHERE q.running = 1
  AND (q.canceled_by IS NOT NULL OR q.restarts + 1 > :restart_limit)
  AND (r.ping IS NULL OR r.ping < :cutoff)
RETURNING job_id, status
