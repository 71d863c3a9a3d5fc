-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards, through event_view (migration 0020).
SELECT seq, id, workspace, type, subject, time, data
FROM event_view
WHERE workspace = @workspace
ORDER BY seq DESC
LIMIT @limit
