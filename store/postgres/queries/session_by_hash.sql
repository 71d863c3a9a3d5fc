-- SessionByHash: the console session with this id hash, ended or not;
-- the console checks ended_at and expires_at.
SELECT id_hash, token_hash, token_id, created_at, expires_at, ended_at
FROM console_session
WHERE id_hash = @id_hash
