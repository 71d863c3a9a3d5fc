-- SinkUpdate: the changeable fields of a sink (kind, id, after_seq and
-- the creation stay).
UPDATE event_sink
SET url = @url, subject = @subject, types = @types::jsonb, enabled = @enabled,
    secret = @secret, updated_at = coalesce(@now::timestamptz, now())
WHERE workspace = @workspace AND id = @id
