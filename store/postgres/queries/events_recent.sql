-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards. Plain committed rows: for a view
-- of what happened, not for a reader that goes on from a seq (that is
-- EventsAfter's final prefix). A job event's data is built as in
-- events_after.sql.
SELECT o.seq, o.id, o.workspace, o.type, o.subject, o.time, coalesce(o.data, job_event_json(j, o.job_state))
FROM (
    SELECT seq, id, workspace, type, subject, time, data, job_state
    FROM event_outbox
    WHERE workspace = @workspace
    ORDER BY seq DESC
    LIMIT @limit
) AS o
LEFT JOIN job j ON j.id = (o.job_state).job_id
ORDER BY o.seq DESC
