-- OutboxSweep: a bounded batch of outbox rows older than @before whose
-- events the fan-out has passed and no delivery names (event_delivery_event,
-- a range: a row holds the span events from its seq on, migration 0021):
-- every sink has settled them and their settled rows are swept.
WITH old AS (
    SELECT o.seq
    FROM event_outbox o
    WHERE o.time < @before
      AND o.seq + o.span - 1 <= (SELECT fanned_seq FROM event_relay WHERE id = 1)
      AND NOT EXISTS (SELECT 1 FROM event_delivery d WHERE d.event_seq >= o.seq AND d.event_seq < o.seq + o.span)
    ORDER BY o.seq
    LIMIT @limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM event_outbox o
USING old
WHERE o.seq = old.seq
