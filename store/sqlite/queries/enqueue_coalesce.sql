-- Fold a request into the waiting job with the same coalesce key, if there
-- is one (invariant 10). Only waiting rows carry job_queue.coalesce_key: the
-- claim clears it, so a running job is never folded into.
UPDATE job_queue
SET generation = generation + 1
WHERE workspace = :workspace
  AND app_key = :app_key
  AND action_key = :action_key
  AND coalesce_key = :coalesce_key
  AND running = 0
RETURNING job_id, generation
