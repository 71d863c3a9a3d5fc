-- One audit row per operator action on a job.
INSERT INTO job_audit (job_id, workspace, action, actor, reason, at)
VALUES (:id, :workspace, :action, :actor, :reason, :at)
