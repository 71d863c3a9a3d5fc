-- EventsAfter reads the events with @after < seq <= @upto, in seq order,
-- of @workspace ('' for every workspace): @upto is the final prefix the
-- driver's horizon allows (store/postgres/events.go). The workspace
-- filter reads event_outbox_workspace, the other the primary key. A row
-- holds the events from its seq to seq + event_batch_max() - 1 at most
-- (migration 0021), so the rows from @after - event_batch_max() on hold
-- every event after @after; event_outbox_events unfolds them, and the
-- order (the rows' seq, then each one's events) is the index's, sorted
-- within a row only. A job event's data is built from its state and job
-- row (migration 0020), for the page alone.
SELECT e.seq, e.id, e.workspace, e.type, e.subject, e.time, coalesce(e.data, job_event_json(j, e.state))
FROM (
    SELECT ev.seq, ev.id, o.workspace, ev.type, ev.subject, ev.at AS time, ev.data, ev.state
    FROM event_outbox o
    CROSS JOIN LATERAL event_outbox_events(o) AS ev
    WHERE o.seq > @after - event_batch_max() AND o.seq <= @upto
      AND (@workspace = '' OR o.workspace = @workspace)
      AND ev.seq > @after AND ev.seq <= @upto
    ORDER BY o.seq, ev.n
    LIMIT @limit
) AS e
LEFT JOIN job j ON j.id = (e.state).job_id
ORDER BY e.seq
