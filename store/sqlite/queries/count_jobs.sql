-- CountJobs counts a workspace's jobs per status: the live ones from the
-- small job_queue, the finished ones from job_completed's (workspace,
-- status) index.
SELECT CASE WHEN running = 1 THEN 'running' ELSE 'queued' END AS status, count(*)
FROM job_queue WHERE workspace = :workspace
GROUP BY 1
UNION ALL
SELECT status, count(*)
FROM job_completed WHERE workspace = :workspace
GROUP BY status
