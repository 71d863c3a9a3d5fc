-- EventsAfter reads up to @limit events with seq > @after, in seq order,
-- of @workspace ('' for every workspace). One writer commits the events in
-- seq order, so what a reader sees is always a final prefix. event_view
-- builds a job event's data (migration 0020).
SELECT seq, id, workspace, type, subject, time, data
FROM event_view
WHERE seq > @after AND (@workspace = '' OR workspace = @workspace)
ORDER BY seq
LIMIT @limit
