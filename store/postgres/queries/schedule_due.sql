-- DueSchedules: enabled schedules whose tick is due, earliest first
-- (schedule_due index). Many servers read the same rows; FireTick's
-- compare-and-set lets one of them fire each tick.
SELECT id, workspace, app_key, action_key, cron, timezone, input, no_overlap, enabled,
       next_run_at, last_run_at, last_job_id, created_by, created_at
FROM schedule
WHERE enabled AND next_run_at <= coalesce(@now::timestamptz, now())
ORDER BY next_run_at, id
LIMIT @limit
