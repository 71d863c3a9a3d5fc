-- Delete the stored schemas no job can reference any more, without
-- looking for references, as store/postgres/queries/sweep_schemas.sql
-- does: every job pinning a row was created before the row's used_at +
-- :touch_us (pinned_schema.go keeps this), so a row whose used_at +
-- :touch_us is before the oldest job's created_at is referenced by no job.
-- The one writer means no enqueue is in flight, but rows are kept
-- :grace_us past used_at all the same, as on Postgres.
--
-- The oldest job is found by a loose index scan of job_list: the first
-- workspace, each next one, and each one's oldest job, a few index probes
-- per workspace rather than a scan of job.
WITH RECURSIVE workspaces(workspace) AS (
    SELECT (SELECT workspace FROM job ORDER BY workspace LIMIT 1)
    UNION ALL
    SELECT (SELECT j.workspace FROM job AS j WHERE j.workspace > w.workspace ORDER BY j.workspace LIMIT 1)
    FROM workspaces AS w
    WHERE w.workspace IS NOT NULL
), oldest(created_at) AS (
    SELECT min((SELECT j.created_at FROM job AS j WHERE j.workspace = w.workspace
                ORDER BY j.created_at LIMIT 1))
    FROM workspaces AS w
    WHERE w.workspace IS NOT NULL
)
DELETE FROM job_schema
WHERE used_at < (SELECT min(:now - :grace_us, coalesce(created_at - :touch_us, :now - :grace_us)) FROM oldest)
