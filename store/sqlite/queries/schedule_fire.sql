-- FireTick, step 1: the compare-and-set that wins tick :tick of schedule
-- :id. The one writer runs FireTicks one after the other; the second of
-- the same tick finds next_run_at moved and updates nothing. A disabled
-- schedule fires nothing.
UPDATE schedule
SET next_run_at = :next, last_run_at = :tick
WHERE id = :id AND next_run_at = :tick AND enabled = 1
RETURNING workspace, app_key, action_key, input, no_overlap, last_job_id
