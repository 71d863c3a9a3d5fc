-- GetSchedule: one schedule of a workspace.
SELECT id, workspace, app_key, action_key, cron, timezone, input, no_overlap, enabled,
       next_run_at, last_run_at, last_job_id, created_by, created_at
FROM schedule
WHERE workspace = :workspace AND id = :id
