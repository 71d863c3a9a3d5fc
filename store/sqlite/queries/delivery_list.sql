-- DeliveryList: a page of a sink's deliveries, newest event first, from
-- the primary key (workspace, sink_id, event_seq) read backwards.
SELECT workspace, sink_id, event_seq, event_id, event_type, subject, status, attempts,
       next_attempt_at, last_error, created_at, delivered_at, failed_at
FROM event_delivery
WHERE workspace = :workspace AND sink_id = :sink_id
  AND (:status = '' OR status = :status)
  AND (:before = 0 OR event_seq < :before)
ORDER BY event_seq DESC
LIMIT :limit
