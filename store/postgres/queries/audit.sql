-- Audit reads a job's audit trail, oldest first.
SELECT job_id, action, actor, reason, at
FROM job_audit
WHERE job_id = @job_id
ORDER BY id
