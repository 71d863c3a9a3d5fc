-- JobEvents inserts an event of @type at @now (NULL: the transaction's
-- clock) for each job of @ids, in that order, with its state as the
-- job_event view shows it after this transaction's writes (migration
-- 0020). The transitions that are not one tuned statement (cancel,
-- reopen, retry, release, the reaper) run it after their change, in
-- their transaction.
WITH clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
)
INSERT INTO event_outbox (id, workspace, type, subject, time, job_state)
SELECT event_id(clock.now), v.workspace, @type::text, v.id::text, clock.now, v.state
FROM unnest(@ids::uuid[]) WITH ORDINALITY AS k(id, n)
JOIN job_event v ON v.id = k.id
CROSS JOIN clock
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = v.workspace) -- recorded while the workspace has a sink
ORDER BY k.n
