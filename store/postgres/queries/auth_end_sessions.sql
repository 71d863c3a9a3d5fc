-- AuthEndSessions: end the open console sessions of a token, revoked in
-- the same transaction.
UPDATE console_session SET ended_at = coalesce(@now::timestamptz, now())
WHERE token_id = @id AND ended_at IS NULL
