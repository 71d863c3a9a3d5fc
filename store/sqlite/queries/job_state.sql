-- Where a job of a workspace is: waiting or running in job_queue, finished
-- in job_completed. Cancel and Reopen decide from it inside their write
-- transaction (the one writer connection keeps it current).
SELECT j.app_key, j.action_key, j.tag, j.priority, q.running, c.status
FROM job AS j
LEFT JOIN job_queue AS q ON q.job_id = j.id
LEFT JOIN job_completed AS c ON c.job_id = j.id
WHERE j.id = :id AND j.workspace = :workspace
