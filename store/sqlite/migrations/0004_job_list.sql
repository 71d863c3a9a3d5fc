-- Job listing (GET /api/w/{ws}/jobs, spine.Lister) on SQLite: the same
-- indexes as store/postgres/migrations/0004_job_list.sql. Newest first by
-- (created_at, id), paged by a (created_at, id) cursor: each page is a
-- range scan of an index ending with the sort key that stops after LIMIT
-- rows, and the cursor is an index condition rather than rows skipped.
CREATE INDEX job_list ON job (workspace, created_at DESC, id DESC);
-- One app (or one app's action), the console's most common filter, gets
-- its own ordered range. Tag, trigger and status filters are checked on
-- the rows job_list walks: every extra index on job slows each enqueue.
CREATE INDEX job_list_app ON job (workspace, app_key, action_key, created_at DESC, id DESC);
-- CountJobs per finished status: a covering index, not a table scan.
CREATE INDEX job_completed_count ON job_completed (workspace, status);
