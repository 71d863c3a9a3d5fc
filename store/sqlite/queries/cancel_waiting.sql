-- A waiting job is canceled at once (invariant 6): its queue row leaves in
-- the transaction that records it canceled.
DELETE FROM job_queue
WHERE job_id = :id AND running = 0
RETURNING workspace, tag, attempt, restarts
