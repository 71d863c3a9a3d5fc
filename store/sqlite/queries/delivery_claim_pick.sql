-- DeliveryClaim, first step: up to :limit due, unleased deliveries of one
-- sink with their events, lowest seq first. A row is claimable only while
-- it is the lowest pending seq of its subject and sink (the others
-- leased, due later or claimable too), which keeps a subject's order. The one
-- writer runs the pick and the lease (delivery_claim_lease.sql) in one
-- transaction, so no other claim comes between. event_view builds a job
-- event's data (migration 0020).
SELECT d.workspace, d.sink_id, d.event_seq, d.event_id, d.event_type, d.subject, d.status,
       d.attempts, d.next_attempt_at, d.last_error, d.created_at, d.delivered_at, d.failed_at,
       o.time, o.data
FROM event_delivery d
JOIN event_view o ON o.seq = d.event_seq
WHERE d.workspace = :workspace AND d.sink_id = :sink_id AND d.status = 'pending'
  AND d.next_attempt_at <= :now
  AND (d.leased_until IS NULL OR d.leased_until <= :now)
  AND d.event_seq = (
      SELECT min(e.event_seq) FROM event_delivery e
      WHERE e.workspace = d.workspace AND e.sink_id = d.sink_id AND e.subject = d.subject
        AND e.status = 'pending')
ORDER BY d.event_seq
LIMIT :limit
