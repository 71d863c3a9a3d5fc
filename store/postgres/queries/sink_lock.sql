-- SinkLock: one sink, locked until the transaction ends, so two
-- concurrent PATCHes apply one after the other instead of one losing.
SELECT workspace, id, kind, url, subject, types, secret, enabled, after_seq,
       created_by, created_at, updated_at
FROM event_sink
WHERE workspace = @workspace AND id = @id
FOR UPDATE
