-- ReopenLock locks the finished job of the workspace and reads its status,
-- so two operators reopening at once cannot both succeed.
SELECT status FROM job_completed WHERE job_id = @job_id AND workspace = @workspace FOR UPDATE
