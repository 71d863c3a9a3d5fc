-- ApplySync, last: the source now holds this commit; its error is cleared.
UPDATE git_source
SET commit_sha = @commit_sha, synced_at = coalesce(@now::timestamptz, now()), error = '', error_at = NULL
WHERE workspace = @workspace AND id = @id
