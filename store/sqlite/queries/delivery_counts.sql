-- DeliveryCounts: a sink's deliveries per status (the primary key's
-- (workspace, sink_id) prefix).
SELECT status, count(*) FROM event_delivery
WHERE workspace = :workspace AND sink_id = :sink_id
GROUP BY status
