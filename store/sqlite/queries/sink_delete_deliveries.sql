-- SinkDelete, first step: the deliveries of the sink being deleted.
DELETE FROM event_delivery WHERE workspace = :workspace AND sink_id = :id
