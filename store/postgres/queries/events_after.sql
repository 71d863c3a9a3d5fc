-- EventsAfter reads the events with @after < seq <= @upto, in seq order,
-- of @workspace ('' for every workspace): @upto is the final prefix the
-- driver's horizon allows (store/postgres/events.go). The workspace
-- filter reads event_outbox_workspace, the other the primary key. A job
-- event's data is built from its job_state and job row (migration 0020),
-- for the page alone.
SELECT o.seq, o.id, o.workspace, o.type, o.subject, o.time, coalesce(o.data, job_event_json(j, o.job_state))
FROM (
    SELECT seq, id, workspace, type, subject, time, data, job_state
    FROM event_outbox
    WHERE seq > @after AND seq <= @upto AND (@workspace = '' OR workspace = @workspace)
    ORDER BY seq
    LIMIT @limit
) AS o
LEFT JOIN job j ON j.id = (o.job_state).job_id
ORDER BY o.seq
