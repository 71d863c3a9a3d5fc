-- A running job is marked for its worker, which sees the mark on its next
-- heartbeat. The first mark is kept.
UPDATE job_queue
SET canceled_by = coalesce(canceled_by, :by),
    canceled_reason = CASE WHEN canceled_by IS NULL THEN :reason ELSE canceled_reason END
WHERE job_id = :id AND running = 1
