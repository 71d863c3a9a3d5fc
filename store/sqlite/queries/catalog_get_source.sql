-- GetSource: one git source with its sync state.
SELECT workspace, id, url, branch, commit_sha, synced_at, error, error_at, created_at, hook_secret
FROM git_source
WHERE workspace = :workspace AND id = :id
