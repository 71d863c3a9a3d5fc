-- Put a failed attempt back to waiting for attempt+1 at the retry time.
-- Fenced, and never for a job carrying the cancel mark (cancel is final).
UPDATE job_queue
SET running = 0, worker = NULL, claim_token = NULL, started_at = NULL,
    attempt = attempt + 1, last_error = :error, scheduled_for = :scheduled_for
WHERE job_id = :id AND claim_token = :token AND running = 1 AND canceled_by IS NULL
RETURNING attempt, tag
