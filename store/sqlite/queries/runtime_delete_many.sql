-- Runtime rows of jobs (a JSON array of ids) that are no longer running.
DELETE FROM job_runtime WHERE job_id IN (SELECT value FROM json_each(:ids))
