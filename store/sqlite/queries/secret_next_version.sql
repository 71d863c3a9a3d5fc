-- SecretNextVersion: hand out the next version of (workspace, name). The
-- counter outlives a delete, so a version is never reused for a name (the
-- one writer orders concurrent puts).
INSERT INTO secret_version AS v (workspace, name, last_version)
VALUES (:workspace, :name, 1)
ON CONFLICT (workspace, name) DO UPDATE SET last_version = v.last_version + 1
RETURNING last_version
