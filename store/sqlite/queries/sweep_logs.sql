-- The logs of swept jobs.
DELETE FROM job_logs WHERE job_id IN (SELECT value FROM json_each(:ids))
