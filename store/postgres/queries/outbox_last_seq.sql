-- OutboxLastSeq: the highest seq written: the last event of the row with
-- the primary key's last entry (a batch row holds span events, migration
-- 0021).
SELECT coalesce((SELECT seq + span - 1 FROM event_outbox ORDER BY seq DESC LIMIT 1), 0)
