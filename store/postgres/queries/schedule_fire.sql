-- FireTick, step 1: the compare-and-set that wins tick @tick of schedule
-- @id. A concurrent FireTick of the same tick waits on the row lock and
-- then, seeing next_run_at moved, updates nothing: it did not win. A
-- disabled schedule fires nothing.
UPDATE schedule
SET next_run_at = @next, last_run_at = @tick
WHERE id = @id AND next_run_at = @tick AND enabled
RETURNING workspace, app_key, action_key, input, no_overlap, last_job_id
