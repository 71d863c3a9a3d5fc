-- DeliveryInsert: one fan-out pass's deliveries, a JSON array of
-- [workspace, sink_id, event_seq, event_id, event_type, subject], in one
-- statement. A delivery that exists already (a pass redone) stays.
INSERT INTO event_delivery (workspace, sink_id, event_seq, event_id, event_type, subject,
                            next_attempt_at, created_at)
SELECT d.value ->> 0, d.value ->> 1, d.value ->> 2, d.value ->> 3, d.value ->> 4, d.value ->> 5,
       :now, :now
FROM json_each(:deliveries) AS d
WHERE true
ON CONFLICT DO NOTHING
