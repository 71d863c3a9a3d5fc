-- FireTick, last step: remember the job of the tick just fired.
UPDATE schedule SET last_job_id = @job_id WHERE id = @id
