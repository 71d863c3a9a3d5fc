-- OutboxSweep: a bounded batch of outbox events older than @before that
-- the fan-out has passed and no delivery names (event_delivery_event):
-- every sink has settled them and their settled rows are swept.
WITH old AS (
    SELECT o.seq
    FROM event_outbox o
    WHERE o.time < @before
      AND o.seq <= (SELECT fanned_seq FROM event_relay WHERE id = 1)
      AND NOT EXISTS (SELECT 1 FROM event_delivery d WHERE d.event_seq = o.seq)
    ORDER BY o.seq
    LIMIT @limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM event_outbox o
USING old
WHERE o.seq = old.seq
