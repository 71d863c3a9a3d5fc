-- RelayLockCursor with wait: the cursor, locked for this transaction,
-- after any fan-out that holds it has committed (a sink's delete).
SELECT fanned_seq FROM event_relay WHERE id = 1 FOR UPDATE
