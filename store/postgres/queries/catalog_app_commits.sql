-- AppCommits: where each app of a workspace is now (the primary key's
-- prefix): a worker's warm pool polls it to drain old commits.
SELECT app_key, git_source_id, commit_sha
FROM app
WHERE workspace = @workspace
ORDER BY app_key COLLATE "C"
