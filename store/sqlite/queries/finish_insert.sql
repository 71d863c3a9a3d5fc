-- Record a finished job. Written in the transaction that removed its queue
-- row.
INSERT INTO job_completed (
    job_id, workspace, tag, status, result, error, started_at, completed_at,
    duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
VALUES (
    :id, :workspace, :tag, :status, :result, :error, :started_at, :completed_at,
    :duration_ms, :worker, :attempt, :restarts, :canceled_by, :canceled_reason)
