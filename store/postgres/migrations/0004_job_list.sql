-- Job listing (GET /api/w/{ws}/jobs, spine.Lister): newest first by
-- (created_at, id), paged by a (created_at, id) cursor. Both indexes end
-- with the sort key, so a page is an index range scan that stops after
-- LIMIT rows however many jobs the workspace holds, and a cursor is an
-- index condition rather than rows skipped.
CREATE INDEX job_list ON job (workspace, created_at DESC, id DESC);
-- No other index on job: app, action, tag, trigger and status filters are
-- checked on the rows job_list walks. Each index on job is written by every
-- enqueue; the three listing indexes first tried here cost 13 % of SQLite's
-- and 7 % of Postgres's no-op throughput (docs/BENCHMARKS.md).
-- CountJobs per finished status: an index-only count, not a table scan.
CREATE INDEX job_completed_count ON job_completed (workspace, status);
