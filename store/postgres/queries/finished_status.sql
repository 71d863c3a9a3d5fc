-- FinishedStatus reads the terminal status of a job of the workspace.
SELECT status FROM job_completed WHERE job_id = @job_id AND workspace = @workspace
