-- RelayLockCursor: the cursor, locked for this transaction's fan-out; no
-- row while another server's fan-out holds it.
SELECT fanned_seq FROM event_relay WHERE id = 1 FOR UPDATE SKIP LOCKED
