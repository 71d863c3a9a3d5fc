-- EventsAfter reads up to @limit events with seq > @after, in seq order,
-- of @workspace ('' for every workspace). One writer commits the events in
-- seq order, so what a reader sees is always a final prefix. event_view
-- expands a row's events and builds a job event's data (migration 0021);
-- row_seq, its row's seq, is the last of the row's events, so the rows
-- with an event after @after are those with row_seq > @after, and the
-- events come in row_seq, nth order.
SELECT seq, id, nth, workspace, type, subject, time, data
FROM event_view
WHERE row_seq > @after AND seq > @after AND (@workspace = '' OR workspace = @workspace)
ORDER BY row_seq, nth
LIMIT @limit
