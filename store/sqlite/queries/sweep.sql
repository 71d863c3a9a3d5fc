-- One retention batch (invariant 8): finished jobs completed before
-- :before, oldest first. Only job_completed is read, so queued and running
-- jobs are never touched.
DELETE FROM job_completed
WHERE job_id IN (
    SELECT job_id FROM job_completed
    WHERE completed_at < :before
    ORDER BY completed_at
    LIMIT :batch)
RETURNING job_id
