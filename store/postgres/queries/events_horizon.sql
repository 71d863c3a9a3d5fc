-- EventsHorizon samples what decides which events are final: the last
-- seq handed out, the first xid not yet assigned (xmax) and the oldest
-- xid still running (xmin) of this statement's snapshot. Every seq up to
-- last_seq belongs to a transaction whose xid is below xmax (a writer
-- changes a row, which assigns its xid, before it inserts the event); once
-- a later sample's xmin reaches that xmax, all of them have ended and
-- those seqs are final (store/postgres/events.go). The sequence hands out
-- a row's first seq; its events reach event_batch_max() - 1 further
-- (migration 0021), and the next row's start beyond that.
SELECT CASE WHEN s.is_called THEN s.last_value + event_batch_max() - 1 ELSE 0 END,
       pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
       pg_snapshot_xmin(pg_current_snapshot())::text::bigint
FROM event_outbox_seq_seq s
