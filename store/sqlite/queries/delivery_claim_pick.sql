-- DeliveryClaim, first step: up to :limit due, unleased deliveries of one
-- sink, lowest seq first. A row is claimable only while it is the lowest
-- pending seq of its subject and sink (the others leased, due later or
-- claimable too), which keeps a subject's order. The one writer runs the
-- pick, the lease (delivery_claim_lease.sql) and the read of their events
-- (delivery_claim_events.sql) in one transaction, so no other claim comes
-- between.
SELECT d.workspace, d.sink_id, d.event_seq, d.event_id, d.event_type, d.subject, d.status,
       d.attempts, d.next_attempt_at, d.last_error, d.created_at, d.delivered_at, d.failed_at
FROM event_delivery d
WHERE d.workspace = :workspace AND d.sink_id = :sink_id AND d.status = 'pending'
  AND d.next_attempt_at <= :now
  AND (d.leased_until IS NULL OR d.leased_until <= :now)
  AND d.event_seq = (
      SELECT min(e.event_seq) FROM event_delivery e
      WHERE e.workspace = d.workspace AND e.sink_id = d.sink_id AND e.subject = d.subject
        AND e.status = 'pending')
ORDER BY d.event_seq
LIMIT :limit
