-- OutboxSweep: a bounded batch of outbox rows older than :before (a row's
-- time is its first event's; its events are one statement's) whose events
-- the fan-out has passed (a row's seq is its last event's) and no delivery
-- names (event_delivery_event over the row's seqs, migration 0021).
DELETE FROM event_outbox
WHERE seq IN (
    SELECT o.seq FROM event_outbox o
    WHERE o.time < :before
      AND o.seq <= (SELECT fanned_seq FROM event_relay WHERE id = 1)
      AND NOT EXISTS (SELECT 1 FROM event_delivery d
                      WHERE d.event_seq BETWEEN o.seq - coalesce(o.n, 1) + 1 AND o.seq)
    ORDER BY o.seq
    LIMIT :limit)
