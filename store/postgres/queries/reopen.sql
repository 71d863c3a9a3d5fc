-- Reopen puts a finished job back in the queue with the same id and pin
-- (invariant 7): the job_completed row goes, a fresh job_queue row is built
-- from the immutable job row (attempt 1, restarts 0, failure info cleared,
-- no coalesce key), the reopen is audited, and the tag is woken. The caller
-- holds the job_completed row lock (reopen_lock.sql).
WITH gone AS (
    DELETE FROM job_completed WHERE job_id = @job_id
    RETURNING job_id
), clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
), queued AS (
    INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for)
    SELECT j.id, j.workspace, j.app_key, j.action_key, j.tag, j.priority, clock.now
    FROM job j JOIN gone g ON g.job_id = j.id, clock
    RETURNING job_id, workspace, tag
), audited AS (
    INSERT INTO job_audit (job_id, workspace, action, actor, reason, at)
    SELECT q.job_id, q.workspace, 'reopen', @by::text, @reason::text, clock.now
    FROM queued q, clock
)
-- pg_notify returns void, which casts to '': the filter keeps every row.
SELECT job_id FROM queued
WHERE pg_notify(@channel::text, tag)::text = ''
