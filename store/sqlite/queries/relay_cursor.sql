-- RelayCursor: the last outbox seq whose deliveries exist (RelayLockCursor
-- too: in a write transaction the one writer is the lock).
SELECT fanned_seq FROM event_relay WHERE id = 1
