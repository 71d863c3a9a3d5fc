-- CreateSchedule: one new schedule. The caller computed next_run_at from
-- the cron expression; a duplicate id is a conflict.
INSERT INTO schedule (id, workspace, app_key, action_key, cron, timezone, input,
                      no_overlap, enabled, next_run_at, created_by, created_at)
VALUES (@id, @workspace, @app_key, @action_key, @cron, @timezone, @input::jsonb,
        @no_overlap, @enabled, @next_run_at, @created_by, coalesce(@now::timestamptz, now()))
