-- SetScheduleEnabled: enable or disable. Enabling a disabled schedule
-- moves its tick to @next_run_at (the first after now), so ticks missed
-- while it was off do not fire; anything else keeps the tick, which a
-- FireTick in flight compares against.
UPDATE schedule
SET enabled = @enabled,
    next_run_at = CASE WHEN @enabled AND NOT enabled
                       THEN coalesce(@next_run_at::timestamptz, next_run_at)
                       ELSE next_run_at END
WHERE workspace = @workspace AND id = @id
