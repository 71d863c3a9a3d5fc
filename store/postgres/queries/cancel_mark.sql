-- CancelMark marks a running job for its worker, who sees the mark on
-- its next heartbeat (invariant 6). The first mark is kept: a second cancel
-- does not rewrite who asked first and why. Audited in the same statement.
WITH marked AS (
    UPDATE job_queue
    SET canceled_by = coalesce(canceled_by, @by::text),
        canceled_reason = CASE WHEN canceled_by IS NULL THEN @reason::text ELSE canceled_reason END
    WHERE job_id = @job_id AND running
    RETURNING job_id, workspace
), audited AS (
    INSERT INTO job_audit (job_id, workspace, action, actor, reason, at)
    SELECT job_id, workspace, 'cancel', @by::text, @reason::text, coalesce(@now::timestamptz, now())
    FROM marked
)
SELECT job_id FROM marked
