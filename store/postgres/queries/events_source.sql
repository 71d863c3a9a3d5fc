-- SourceEvent inserts one event of the source @subject at @time (NULL:
-- the transaction's clock) with @data, the source's API view built by the
-- core, in the transaction that records the sync's outcome (ApplySync,
-- RecordSyncError).
WITH clock AS (
    SELECT coalesce(@time::timestamptz, now()) AS at
)
INSERT INTO event_outbox (id, workspace, type, subject, time, data)
SELECT event_id(clock.at), @workspace::text, @type::text, @subject::text, clock.at, @data::jsonb
FROM clock
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = @workspace::text) -- recorded while the workspace has a sink
