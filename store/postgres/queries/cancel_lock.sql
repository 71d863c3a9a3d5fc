-- CancelLock locks a live job of the workspace and says whether it runs.
-- No row: the job is finished, unknown, or in another workspace.
SELECT running FROM job_queue WHERE job_id = @job_id AND workspace = @workspace FOR UPDATE
