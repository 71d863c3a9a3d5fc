-- SinkUpdate: the changeable fields of a sink (kind, id, after_seq and
-- the creation stay).
UPDATE event_sink
SET url = :url, subject = :subject, types = :types, enabled = :enabled,
    secret = :secret, updated_at = :now
WHERE workspace = :workspace AND id = :id
