-- ReadDispatched's queue row: a running job that :worker owns under the
-- claim token :token (spine.Store.ReadDispatched). SQLite keeps no offers,
-- so only a claim makes such a row here; the read is the same as on a
-- store that dispatches.
SELECT job_id, workspace, priority, claim_token, attempt, restarts, started_at, generation
FROM job_queue
WHERE job_id = :id AND claim_token = :token AND running = 1 AND worker = :worker
