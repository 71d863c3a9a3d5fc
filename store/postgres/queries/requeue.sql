-- Requeue puts an owned job back to waiting: the failed attempt of Fail
-- (@attempt_step 1, @last_error, @scheduled_for = the retry time) or the
-- give-back of Release (@attempt_step 0, last_error kept, now). Fenced on the
-- claim token; a cancel-marked job is never requeued. The runtime row goes
-- and the tag is woken in the same statement.
WITH requeued AS (
    UPDATE job_queue
    SET running = false, worker = NULL, claim_token = NULL, started_at = NULL,
        attempt = attempt + @attempt_step::integer,
        last_error = coalesce(@last_error::jsonb, last_error),
        scheduled_for = coalesce(@scheduled_for::timestamptz, now())
    WHERE job_id = @job_id AND claim_token = @claim_token AND running AND canceled_by IS NULL
    RETURNING job_id, tag
), runtime_gone AS (
    DELETE FROM job_runtime r USING requeued q WHERE r.job_id = q.job_id
)
-- pg_notify returns void, which casts to '': the filter keeps every row.
SELECT job_id FROM requeued
WHERE pg_notify(@channel::text, tag)::text = ''
