-- DeliveryInsert: one fan-out pass's deliveries as column arrays, in one
-- statement. A delivery that exists already (a pass redone) stays.
INSERT INTO event_delivery (workspace, sink_id, event_seq, event_id, event_type, subject,
                            next_attempt_at, created_at)
SELECT u.workspace, u.sink_id, u.event_seq, u.event_id, u.event_type, u.subject,
       coalesce(@now::timestamptz, now()), coalesce(@now::timestamptz, now())
FROM unnest(@workspaces::text[], @sink_ids::text[], @seqs::bigint[], @ids::uuid[],
            @types::text[], @subjects::text[])
     AS u(workspace, sink_id, event_seq, event_id, event_type, subject)
ON CONFLICT DO NOTHING
