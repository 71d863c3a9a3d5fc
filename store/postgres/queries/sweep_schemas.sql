-- SweepSchemas deletes the pinned schemas (job_schema) no job can
-- reference any more, without looking for references (issue 13). Every job
-- pinning a row was created before the row's used_at + @schema_touch_ms
-- (enqueue_batch.sql keeps this), so a row whose used_at + @schema_touch_ms
-- is before the oldest job's created_at is referenced by no job there is.
--
-- The oldest job is found by a loose index scan of job_list: the first
-- workspace, then each next one, and each one's oldest job, a few index
-- probes per workspace rather than a scan of job.
--
-- An enqueue running meanwhile is not in that snapshot. One that found its
-- row fresh (pinned within @schema_touch_ms of its clock) wrote nothing to
-- protect it, so rows are also kept until @grace_ms past used_at: an
-- enqueue's transaction would have to stay open that long for this delete
-- to take a row it relies on. One that upserted its row holds the row's
-- lock: this delete waits, then rechecks used_at on the row as committed
-- and keeps it.
WITH RECURSIVE workspaces AS (
    (SELECT workspace FROM job ORDER BY workspace LIMIT 1)
    UNION ALL
    SELECT (SELECT j.workspace FROM job j WHERE j.workspace > w.workspace ORDER BY j.workspace LIMIT 1)
    FROM workspaces w
    WHERE w.workspace IS NOT NULL
), oldest AS (
    SELECT min((SELECT j.created_at FROM job j WHERE j.workspace = w.workspace
                ORDER BY j.created_at LIMIT 1)) AS created_at
    FROM workspaces w
    WHERE w.workspace IS NOT NULL
)
DELETE FROM job_schema
WHERE used_at < least(now() - @grace_ms::bigint * interval '1 millisecond',
                      (SELECT created_at FROM oldest) - @schema_touch_ms::bigint * interval '1 millisecond')
