-- job_status: one row per job in the terms the API uses, as in
-- store/postgres/migrations/0011_job_status.sql (same columns, same order).
-- docs/QUEUE.md lists the queries it is for.
--
-- The UNION ALL of the queue and the completed joins, not two LEFT JOINs
-- under a CASE, so a filter on completed_at or scheduled_for is pushed into
-- its branch and reads that table's index. CROSS JOIN is SQLite's way to
-- fix the join order: each branch walks job_queue or job_completed and
-- reads each job by key, so the live branch reads only the queue (kept
-- small), never the whole job table, whatever the filter. (A filter on
-- status alone still passes over job_completed's rows: there is no index
-- on status alone, since each index costs every completion.)
--
-- error is the message of the job's error, or of its last failed attempt
-- (last_error) while it waits for a retry or runs again. Times are INTEGER
-- microseconds since the Unix epoch (UTC), like every time in this schema:
-- datetime(created_at / 1000000, 'unixepoch') shows one.
CREATE VIEW job_status AS
SELECT j.id,
       j.workspace,
       j.app_key    AS app,
       j.action_key AS action,
       j.tag,
       CASE WHEN q.running = 1 THEN 'running' ELSE 'queued' END AS status,
       q.attempt,
       q.restarts,
       q.last_error ->> '$.message' AS error,
       j.created_at,
       q.scheduled_for,
       q.started_at,
       NULL AS completed_at,
       q.worker
FROM job_queue AS q
CROSS JOIN job AS j ON j.id = q.job_id
UNION ALL
SELECT j.id,
       j.workspace,
       j.app_key,
       j.action_key,
       j.tag,
       c.status,
       c.attempt,
       c.restarts,
       c.error ->> '$.message',
       j.created_at,
       NULL,
       c.started_at,
       c.completed_at,
       c.worker
FROM job_completed AS c
CROSS JOIN job AS j ON j.id = c.job_id;
