-- ListSources: the sources of one workspace, or of all when it is ''.
SELECT workspace, id, url, branch, commit_sha, synced_at, error, error_at, created_at, hook_secret
FROM git_source
WHERE @workspace::text = '' OR workspace = @workspace
ORDER BY workspace COLLATE "C", id COLLATE "C"
