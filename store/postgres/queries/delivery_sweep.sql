-- DeliverySweep: a bounded batch of settled deliveries settled before
-- @before (event_delivery_settled), skipping rows a concurrent sweep holds.
WITH old AS (
    SELECT workspace, sink_id, event_seq
    FROM event_delivery
    WHERE status <> 'pending' AND coalesce(delivered_at, failed_at) < @before
    LIMIT @limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM event_delivery d
USING old
WHERE d.workspace = old.workspace AND d.sink_id = old.sink_id AND d.event_seq = old.event_seq
