-- SinkDelete: the sink row; SinkDelete runs sink_delete_deliveries.sql in
-- the same write transaction first.
DELETE FROM event_sink WHERE workspace = :workspace AND id = :id
