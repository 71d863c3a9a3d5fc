-- SinkGet: one sink (SinkLock too: in a write transaction the one writer
-- is the lock).
SELECT workspace, id, kind, url, subject, types, secret, enabled, after_seq,
       created_by, created_at, updated_at
FROM event_sink
WHERE workspace = :workspace AND id = :id
