-- SinkDelete: a sink and its deliveries, in one statement (a
-- data-modifying CTE), so a sink never leaves deliveries behind.
WITH d AS (
    DELETE FROM event_delivery WHERE workspace = @workspace AND sink_id = @id
)
DELETE FROM event_sink WHERE workspace = @workspace AND id = @id
