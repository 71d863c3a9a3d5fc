-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards. Plain committed rows: for a view
-- of what happened, not for a reader that goes on from a seq (that is
-- EventsAfter's final prefix).
SELECT seq, id, workspace, type, subject, time, data
FROM event_outbox
WHERE workspace = @workspace
ORDER BY seq DESC
LIMIT @limit
