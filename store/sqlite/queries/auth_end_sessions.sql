-- RevokeToken, second statement: end the open console sessions of the
-- token revoked in the same transaction.
UPDATE console_session SET ended_at = :now
WHERE token_id = :id AND ended_at IS NULL
