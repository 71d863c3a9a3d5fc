-- The fence of every terminal completion by an owner (invariant 5): the
-- queue row leaves only if the caller's claim token still matches. No row
-- back means someone else owns the job: write nothing.
DELETE FROM job_queue
WHERE job_id = :id AND claim_token = :token AND running = 1
RETURNING workspace, tag, started_at, worker, attempt, restarts, canceled_by, canceled_reason
