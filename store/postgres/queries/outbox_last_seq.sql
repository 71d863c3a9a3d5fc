-- OutboxLastSeq: the highest seq written (the primary key's last entry).
SELECT coalesce(max(seq), 0) FROM event_outbox
