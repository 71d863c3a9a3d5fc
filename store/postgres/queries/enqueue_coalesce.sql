-- EnqueueCoalesce folds a request into the waiting job that holds the same
-- (workspace, app, action, coalesce key): the latest input wins and the
-- generation counts the requests (invariant 10). job_queue.coalesce_key is
-- set only while the job waits (the claim clears it), and the UPDATE locks
-- the row and re-checks it, so a job claimed meanwhile is not touched and
-- the caller inserts a follow-up instead.
WITH waiting AS (
    UPDATE job_queue
    SET generation = generation + 1
    WHERE workspace = @workspace AND app_key = @app_key AND action_key = @action_key
      AND coalesce_key = @coalesce_key AND NOT running
    RETURNING job_id, tag, generation
), replaced AS (
    UPDATE job
    SET input = @input::jsonb
    FROM waiting
    WHERE job.id = waiting.job_id
)
SELECT job_id, generation
FROM waiting
WHERE (CASE WHEN @notify::boolean THEN pg_notify(@channel::text, tag)::text ELSE '' END) = ''
