-- DueSchedules: enabled schedules whose tick is due, earliest first
-- (schedule_due index). FireTick's compare-and-set fires each tick once.
SELECT id, workspace, app_key, action_key, cron, timezone, input, no_overlap, enabled,
       next_run_at, last_run_at, last_job_id, created_by, created_at
FROM schedule
WHERE enabled = 1 AND next_run_at <= :now
ORDER BY next_run_at, id
LIMIT :limit
