-- SetScheduleEnabled: enable or disable. Enabling a disabled schedule
-- moves its tick to :next_run_at (the first after now), so ticks missed
-- while it was off do not fire; anything else keeps the tick, which a
-- FireTick compares against.
UPDATE schedule
SET enabled = :enabled,
    next_run_at = CASE WHEN :enabled = 1 AND enabled = 0
                       THEN coalesce(:next_run_at, next_run_at)
                       ELSE next_run_at END
WHERE workspace = :workspace AND id = :id
