-- LiveStatus says whether a job of the workspace is in job_queue, and
-- whether it runs.
SELECT running FROM job_queue WHERE job_id = @job_id AND workspace = @workspace
