-- Whether @workspace records events (it has a sink): an enqueue batch asks
-- once before it builds its events (events_job_row.sql).
SELECT EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = @workspace)
