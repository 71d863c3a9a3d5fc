-- CancelWaiting finishes a waiting job as canceled at once (invariant 6):
-- it never started, so started_at, worker and duration stay NULL. Audited
-- in the same statement. The job's waiters are woken on @done_channel
-- (payload: the job id), delivered on commit.
WITH gone AS (
    DELETE FROM job_queue
    WHERE job_id = @job_id AND NOT running
    RETURNING job_id, workspace, tag, attempt, restarts
), clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
), recorded AS (
    INSERT INTO job_completed (job_id, workspace, tag, status, completed_at, attempt, restarts,
                               canceled_by, canceled_reason)
    SELECT g.job_id, g.workspace, g.tag, 'canceled', clock.now, g.attempt, g.restarts, @by::text, @reason::text
    FROM gone g, clock
    RETURNING job_id
), runtime_gone AS (
    DELETE FROM job_runtime r USING gone g WHERE r.job_id = g.job_id
), audited AS (
    INSERT INTO job_audit (job_id, workspace, action, actor, reason, at)
    SELECT g.job_id, g.workspace, 'cancel', @by::text, @reason::text, clock.now
    FROM gone g, clock
)
-- pg_notify returns void, which casts to '': the filter keeps every row.
SELECT job_id FROM recorded
WHERE pg_notify(@done_channel::text, job_id::text)::text = ''
