-- Record the finished jobs of a completion batch, one statement for the
-- whole batch, fenced like finish.sql (invariant 5): a job is recorded only
-- if its queue row is running under the lease's own claim token; a cancel
-- mark finishes it canceled. :leases is a JSON array of {"id", "token",
-- "result" (JSON text in a string, or null), "completed_at"}, one per job
-- (the caller drops repeats). json_each drives the join, so each lease is
-- one primary-key lookup of job_queue, never a scan. finish_batch_delete
-- then removes the same rows, in the same transaction. The rest of
-- RETURNING is each job's finished event (complete_batch.go), recorded
-- while its workspace has a sink (one probe).
INSERT INTO job_completed (
    job_id, workspace, tag, status, result, error, started_at, completed_at,
    duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
SELECT
    q.job_id, q.workspace, q.tag,
    CASE WHEN q.canceled_by IS NULL THEN 'success' ELSE 'canceled' END,
    l.value ->> 'result', NULL, q.started_at, l.value ->> 'completed_at',
    max(0, ((l.value ->> 'completed_at') - q.started_at) / 1000),
    q.worker, q.attempt, q.restarts, q.canceled_by, q.canceled_reason
FROM json_each(:leases) AS l
JOIN job_queue AS q ON q.job_id = l.value ->> 'id'
WHERE q.claim_token = l.value ->> 'token' AND q.running = 1
RETURNING job_id, status, workspace, result, error, started_at, completed_at, coalesce(worker, ''),
          attempt, restarts, coalesce(canceled_by, ''), coalesce(canceled_reason, ''),
          EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = job_completed.workspace)
