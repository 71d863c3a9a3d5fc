-- SecretNextVersion: hand out the next version of (workspace, name). The
-- counter outlives a delete, so a version is never reused for a name; the
-- upsert row-locks the counter until commit, so two puts of one name take
-- turns and neither seals with a version the other holds.
INSERT INTO secret_version AS v (workspace, name, last_version)
VALUES (@workspace, @name, 1)
ON CONFLICT (workspace, name) DO UPDATE SET last_version = v.last_version + 1
RETURNING last_version
