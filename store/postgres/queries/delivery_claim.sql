-- DeliveryClaim: lease up to @limit due deliveries of one sink. The pick
-- is a CTE with FOR UPDATE SKIP LOCKED (never more rows than asked, none
-- another claim holds). The subquery keeps a subject's order: a row is
-- claimable only while it is the lowest pending seq of its subject and
-- sink, whether the others are leased, due later or claimable too (a
-- correlated min, so the plan is an index probe per candidate whatever
-- the statistics say).
-- It reads event_delivery_pending in seq order, and event_delivery_order
-- per candidate. An event is in the outbox row with the greatest seq at
-- or below its own (a batch row holds several, migration 0021): holders
-- finds those rows, each unfolded once however many of its events are
-- claimed. A job event's data is built as in events_after.sql.
WITH picked AS (
    SELECT d.event_seq
    FROM event_delivery d
    WHERE d.workspace = @workspace AND d.sink_id = @sink_id AND d.status = 'pending'
      AND d.next_attempt_at <= coalesce(@now::timestamptz, now())
      AND (d.leased_until IS NULL OR d.leased_until <= coalesce(@now::timestamptz, now()))
      AND d.event_seq = (
          SELECT min(e.event_seq) FROM event_delivery e
          WHERE e.workspace = d.workspace AND e.sink_id = d.sink_id AND e.subject = d.subject
            AND e.status = 'pending')
    ORDER BY d.event_seq
    LIMIT @limit
    FOR UPDATE SKIP LOCKED
), holders AS (
    SELECT DISTINCT h.seq
    FROM picked p
    CROSS JOIN LATERAL (
        SELECT o.seq FROM event_outbox o
        WHERE o.seq <= p.event_seq AND o.seq > p.event_seq - event_batch_max()
        ORDER BY o.seq DESC
        LIMIT 1
    ) AS h
), found AS (
    SELECT ev.seq AS event_seq, ev.at AS time, ev.data, ev.state
    FROM holders h
    JOIN event_outbox o ON o.seq = h.seq
    CROSS JOIN LATERAL event_outbox_events(o) AS ev
    JOIN picked p ON p.event_seq = ev.seq
)
UPDATE event_delivery d
SET lease = @lease, attempts = d.attempts + 1,
    leased_until = coalesce(@now::timestamptz, now()) + @lease_ms::bigint * interval '1 millisecond'
FROM found f
LEFT JOIN job j ON j.id = (f.state).job_id
WHERE d.workspace = @workspace AND d.sink_id = @sink_id AND d.event_seq = f.event_seq
RETURNING d.workspace, d.sink_id, d.event_seq, d.event_id, d.event_type, d.subject, d.status,
          d.attempts, d.next_attempt_at, d.last_error, d.created_at, d.delivered_at, d.failed_at,
          f.time, coalesce(f.data, job_event_json(j, f.state))
