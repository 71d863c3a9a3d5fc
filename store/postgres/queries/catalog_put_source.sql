-- PutSource: create a git source, or change its URL and branch; its sync
-- state (commit, error) is kept.
INSERT INTO git_source (workspace, id, url, branch, created_at)
VALUES (@workspace, @id, @url, @branch, coalesce(@now::timestamptz, now()))
ON CONFLICT (workspace, id) DO UPDATE SET url = excluded.url, branch = excluded.branch
