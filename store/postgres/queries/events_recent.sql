-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards, each row's events unfolded
-- (event_outbox_events, migration 0021). Plain committed rows: for a view
-- of what happened, not for a reader that goes on from a seq (that is
-- EventsAfter's final prefix). A job event's data is built as in
-- events_after.sql.
SELECT e.seq, e.id, e.workspace, e.type, e.subject, e.time, coalesce(e.data, job_event_json(j, e.state))
FROM (
    SELECT ev.seq, ev.id, o.workspace, ev.type, ev.subject, ev.at AS time, ev.data, ev.state
    FROM event_outbox o
    CROSS JOIN LATERAL event_outbox_events(o) AS ev
    WHERE o.workspace = @workspace
    ORDER BY o.seq DESC, ev.n DESC
    LIMIT @limit
) AS e
LEFT JOIN job j ON j.id = (e.state).job_id
ORDER BY e.seq DESC
