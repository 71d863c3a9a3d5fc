-- EventsAfter reads the events with @after < seq <= @upto, in seq order,
-- of @workspace ('' for every workspace): @upto is the final prefix the
-- driver's horizon allows (store/postgres/events.go). The workspace
-- filter reads event_outbox_workspace, the other the primary key.
SELECT seq, id, workspace, type, subject, time, data
FROM event_outbox
WHERE seq > @after AND seq <= @upto AND (@workspace = '' OR workspace = @workspace)
ORDER BY seq
LIMIT @limit
