-- DeliveryClaim: lease up to @limit due deliveries of one sink. The pick
-- is a CTE with FOR UPDATE SKIP LOCKED (never more rows than asked, none
-- another claim holds). The subquery keeps a subject's order: a row is
-- claimable only while it is the lowest pending seq of its subject and
-- sink, whether the others are leased, due later or claimable too (a
-- correlated min, so the plan is an index probe per candidate whatever
-- the statistics say).
-- It reads event_delivery_pending in seq order, and event_delivery_order
-- per candidate. A job event's data is built as in events_after.sql.
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
)
UPDATE event_delivery d
SET lease = @lease, attempts = d.attempts + 1,
    leased_until = coalesce(@now::timestamptz, now()) + @lease_ms::bigint * interval '1 millisecond'
FROM picked p
JOIN event_outbox o ON o.seq = p.event_seq
LEFT JOIN job j ON j.id = (o.job_state).job_id
WHERE d.workspace = @workspace AND d.sink_id = @sink_id AND d.event_seq = p.event_seq
RETURNING d.workspace, d.sink_id, d.event_seq, d.event_id, d.event_type, d.subject, d.status,
          d.attempts, d.next_attempt_at, d.last_error, d.created_at, d.delivered_at, d.failed_at,
          o.time, coalesce(o.data, job_event_json(j, o.job_state))
