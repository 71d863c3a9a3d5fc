-- SourceEvent inserts one event of the source :subject at :time (stored
-- microseconds) with :data, the source's API view built by the core, in
-- the transaction that records the sync's outcome (ApplySync,
-- RecordSyncError).
INSERT INTO event_outbox (id, workspace, type, subject, time, data)
SELECT windforce_event_id(:time), :workspace, :type, :subject, :time, json(:data)
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = :workspace) -- recorded while the workspace has a sink
