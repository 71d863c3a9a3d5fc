-- PutSource: create a git source, or change its URL and branch; its sync
-- state (commit, error) is kept, and so is its hook secret unless a new
-- one is given.
INSERT INTO git_source (workspace, id, url, branch, hook_secret, created_at)
VALUES (@workspace, @id, @url, @branch, @hook_secret, coalesce(@now::timestamptz, now()))
ON CONFLICT (workspace, id) DO UPDATE SET url = excluded.url, branch = excluded.branch,
    hook_secret = CASE WHEN excluded.hook_secret = '' THEN git_source.hook_secret ELSE excluded.hook_secret END
