-- Requeue, last step: a schedule whose last job was requeued follows the
-- new job, so no-overlap still sees its tick's job as live.
UPDATE schedule SET last_job_id = :new_id WHERE last_job_id = :old_id
