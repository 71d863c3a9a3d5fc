-- Job listing (GET /api/w/{ws}/jobs, spine.Lister): newest first by
-- (created_at, id), paged by a (created_at, id) cursor. Both indexes end
-- with the sort key, so a page is an index range scan that stops after
-- LIMIT rows however many jobs the workspace holds, and a cursor is an
-- index condition rather than rows skipped.
CREATE INDEX job_list ON job (workspace, created_at DESC, id DESC);
-- The console's most common filter is one app (or one app's action); it
-- gets its own ordered range instead of filtering the workspace's rows.
-- Tag, trigger and status filters are checked on the rows job_list walks:
-- they match a large share of recent jobs in practice, and every extra
-- index on job slows each enqueue.
CREATE INDEX job_list_app ON job (workspace, app_key, action_key, created_at DESC, id DESC);
-- CountJobs per finished status: an index-only count, not a table scan.
CREATE INDEX job_completed_count ON job_completed (workspace, status);
