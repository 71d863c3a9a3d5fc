-- DeliverySweep: a bounded batch of settled deliveries settled before
-- :before (event_delivery_settled).
DELETE FROM event_delivery
WHERE rowid IN (
    SELECT rowid FROM event_delivery
    WHERE status <> 'pending' AND coalesce(delivered_at, failed_at) < :before
    LIMIT :limit)
