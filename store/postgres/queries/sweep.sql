-- Sweep deletes one batch of finished jobs completed before @before, with
-- their job, job_logs and job_audit rows (invariant 8). The batch is a
-- MATERIALIZED CTE with SKIP LOCKED, so the delete never touches more than
-- @batch_size jobs and two sweepers do not wait on each other. A job still
-- in job_queue is never deleted.
WITH batch AS MATERIALIZED (
    SELECT job_id
    FROM job_completed
    WHERE completed_at < @before::timestamptz
    ORDER BY completed_at
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED
), finished AS (
    DELETE FROM job_completed c USING batch b WHERE c.job_id = b.job_id
    RETURNING c.job_id
), jobs AS (
    DELETE FROM job j USING finished f
    WHERE j.id = f.job_id AND NOT EXISTS (SELECT 1 FROM job_queue q WHERE q.job_id = f.job_id)
), logs AS (
    DELETE FROM job_logs l USING finished f WHERE l.job_id = f.job_id
), audits AS (
    DELETE FROM job_audit a USING finished f WHERE a.job_id = f.job_id
)
SELECT count(*) FROM finished
