-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards.
SELECT seq, id, workspace, type, subject, time, data
FROM event_outbox
WHERE workspace = @workspace
ORDER BY seq DESC
LIMIT @limit
