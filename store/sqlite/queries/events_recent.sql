-- EventsRecent: the newest @limit events of @workspace, newest first (the
-- console's recent events, the live endpoint's ?after=now), from
-- event_outbox_workspace read backwards, through event_view (migration
-- 0021: each row's events expanded, last first).
SELECT seq, id, nth, workspace, type, subject, time, data
FROM event_view
WHERE workspace = @workspace
ORDER BY row_seq DESC, nth DESC
LIMIT @limit
