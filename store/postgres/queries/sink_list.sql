-- SinkList: the sinks of a workspace ('' = every workspace), oldest first.
SELECT workspace, id, kind, url, subject, types, secret, enabled, after_seq,
       created_by, created_at, updated_at
FROM event_sink
WHERE @workspace::text = '' OR workspace = @workspace
ORDER BY workspace, created_at, id
