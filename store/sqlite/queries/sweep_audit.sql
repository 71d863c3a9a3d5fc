-- The audit trail of swept jobs.
DELETE FROM job_audit WHERE job_id IN (SELECT value FROM json_each(:ids))
