-- job_status: one row per job in the terms the API uses (issue 15, "monitoring
-- is just SQL"), so an operator answers "what failed, and why?" with one
-- SELECT instead of joining job, job_queue and job_completed by hand.
-- docs/QUEUE.md lists the queries it is for.
--
-- A job's live state is in exactly one of job_queue (queued or running) and
-- job_completed (success, failure, canceled). The view is the UNION ALL of
-- those two joins rather than two LEFT JOINs under a CASE: a filter on
-- status or a time is then pushed into each branch (status = 'running'
-- reads job_queue, which is kept small, and finds nothing in
-- job_completed's status index; status = 'failure' with completed_at reads
-- job_completed by its indexes), instead of walking every job.
--
-- error is the message of the job's error (a finished failure or canceled
-- job) or, while it waits for a retry or runs again, of its last failed
-- attempt (last_error); both are spine.JobError objects, {"message": …}.
-- scheduled_for is when a queued job may run (NULL once finished, as in
-- the API). Times are timestamptz.
CREATE VIEW job_status AS
SELECT j.id,
       j.workspace,
       j.app_key    AS app,
       j.action_key AS action,
       j.tag,
       CASE WHEN q.running THEN 'running' ELSE 'queued' END AS status,
       q.attempt,
       q.restarts,
       q.last_error ->> 'message' AS error,
       j.created_at,
       q.scheduled_for,
       q.started_at,
       NULL::timestamptz AS completed_at,
       q.worker
FROM job j
JOIN job_queue q ON q.job_id = j.id
UNION ALL
SELECT j.id,
       j.workspace,
       j.app_key,
       j.action_key,
       j.tag,
       c.status,
       c.attempt,
       c.restarts,
       c.error ->> 'message',
       j.created_at,
       NULL::timestamptz,
       c.started_at,
       c.completed_at,
       c.worker
FROM job j
JOIN job_completed c ON c.job_id = j.id;
