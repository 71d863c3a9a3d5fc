-- Give an owned job back to waiting without charging an attempt or a
-- restart. Fenced; a job carrying the cancel mark is finished instead.
UPDATE job_queue
SET running = 0, worker = NULL, claim_token = NULL, started_at = NULL, scheduled_for = :now
WHERE job_id = :id AND claim_token = :token AND running = 1 AND canceled_by IS NULL
RETURNING tag
