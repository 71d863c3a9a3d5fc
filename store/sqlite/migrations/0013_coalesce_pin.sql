-- Coalescing keeps the pin, and a job can tell it was superseded (issue 15).
--
-- job.generation is the number of requests the job held when it was
-- claimed: job_queue.generation counts them while the job waits, and the
-- coalescing fold writes it to the job row too, so a finished job still
-- shows it (job_queue forgets its row when the job finishes).
--
-- job_coalesce finds the newest job of a (workspace, app, action,
-- coalesce key) created after a given one: the job view's superseded_by,
-- which a running job reads before writing its side effects.
ALTER TABLE job ADD COLUMN generation INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1);

CREATE INDEX job_coalesce ON job (workspace, app_key, action_key, coalesce_key, created_at, id)
    WHERE coalesce_key IS NOT NULL;
