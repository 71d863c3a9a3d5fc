-- JobRowEvents writes @n job events of @workspace as ONE outbox row
-- (migration 0021) whose jobs column, @jobs, the driver built from what a
-- batch's own statements wrote and returned (events_batch.go: a claim, an
-- enqueue batch, a batch completion), with no read of the job_event view;
-- @type, @subject and @time are its first event's. Nothing is written
-- while @workspace has no sink. The row takes the @n seqs after the last
-- one handed out and stores the last (see events_jobs.sql).
INSERT INTO event_outbox (seq, n, id, workspace, type, subject, time, data, jobs)
SELECT coalesce((SELECT s.seq FROM sqlite_sequence AS s WHERE s.name = 'event_outbox'), 0) + @n,
       @n, windforce_event_id(@time), @workspace, @type, @subject, @time, '{}', @jobs
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = @workspace) -- recorded while the workspace has a sink
