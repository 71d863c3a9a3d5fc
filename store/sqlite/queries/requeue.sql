-- Requeue puts an owned job back to waiting: the failed attempt of Fail
-- (:attempt_step 1, :last_error, :scheduled_for = the retry time) or the
-- give-back of Release (:attempt_step 0, last_error kept, now). Fenced on
-- the claim token, and never for a job carrying the cancel mark (cancel is
-- final).
UPDATE job_queue
SET running = 0, worker = NULL, claim_token = NULL, started_at = NULL,
    attempt = attempt + :attempt_step,
    last_error = coalesce(:last_error, last_error),
    scheduled_for = :scheduled_for
WHERE job_id = :id AND claim_token = :token AND running = 1 AND canceled_by IS NULL
RETURNING tag
