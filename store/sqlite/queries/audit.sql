-- A job's audit trail, oldest first.
SELECT action, actor, reason, at
FROM job_audit
WHERE job_id = :id
ORDER BY id
