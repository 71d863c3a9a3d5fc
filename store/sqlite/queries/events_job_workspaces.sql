-- The workspaces of the jobs of @ids (a JSON array) that record events
-- (have a sink), with each such job, in the order of @ids: JobEvents
-- writes one events_jobs row per workspace.
SELECT j.workspace, j.id
FROM json_each(@ids) AS k
JOIN job AS j ON j.id = k.value
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = j.workspace)
ORDER BY k.key
