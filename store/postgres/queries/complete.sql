-- Complete finishes an owned job in one statement, so in one transaction
-- (invariant 5): the delete from job_queue is fenced on the claim token and
-- running (no row: someone else owns the job, and nothing is written), the
-- job_completed row is built from the deleted row, and the runtime row goes.
-- A job that carries the cancel mark finishes canceled whatever @status says
-- (invariant 6). Fail and Release use it too for their terminal cases.
-- With @notify the job's waiters are woken on @done_channel (payload: the
-- job id), delivered on commit; FailBatch, which runs it many times in one
-- transaction, sends one coalesced notification of its own instead.
-- finished_event writes the job's job.succeeded, job.failed or
-- job.canceled event (DESIGN §9), its state (migration 0020) from the rows this
-- statement wrote.
WITH finished AS (
    DELETE FROM job_queue
    WHERE job_id = @job_id AND claim_token = @claim_token AND running
    RETURNING job_id, workspace, tag, started_at, worker, attempt, restarts, canceled_by, canceled_reason
), clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
), recorded AS (
    INSERT INTO job_completed (job_id, workspace, tag, status, result, error, started_at, completed_at,
                               duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
    SELECT f.job_id, f.workspace, f.tag,
           CASE WHEN f.canceled_by IS NOT NULL THEN 'canceled' ELSE @status::text END,
           @result::jsonb, @error::jsonb, f.started_at, clock.now,
           greatest(0, floor(extract(epoch FROM clock.now - f.started_at) * 1000))::bigint,
           f.worker, f.attempt, f.restarts, f.canceled_by, f.canceled_reason
    FROM finished f, clock
    RETURNING job_id, status
), runtime_gone AS (
    DELETE FROM job_runtime r USING finished f WHERE r.job_id = f.job_id
), finished_event AS (
    INSERT INTO event_outbox (id, workspace, type, subject, time, job_state)
    SELECT event_id(clock.now), f.workspace, job_event_type(r.status), f.job_id::text, clock.now,
           job_event_state_of(j, r.status, j.priority, NULL, f.started_at, clock.now, f.worker,
                          f.attempt, f.restarts, j.generation, @result::jsonb, @error::jsonb, NULL,
                          f.canceled_by, f.canceled_reason)
    FROM finished f
    JOIN recorded r ON r.job_id = f.job_id
    JOIN job j ON j.id = f.job_id
    CROSS JOIN clock
    WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = f.workspace) -- recorded while the workspace has a sink
)
-- pg_notify returns void, which casts to '': the filter keeps every row.
SELECT status FROM recorded
WHERE (CASE WHEN @notify::boolean THEN pg_notify(@done_channel::text, job_id::text)::text ELSE '' END) = ''
