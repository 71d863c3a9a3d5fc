-- The job rows of swept jobs (a JSON array of ids), never one that is
-- queued again.
DELETE FROM job
WHERE id IN (SELECT value FROM json_each(:ids))
  AND NOT EXISTS (SELECT 1 FROM job_queue AS q WHERE q.job_id = job.id)
