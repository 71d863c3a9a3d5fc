-- AuthRevokeToken: refuse a token from now on; its row stays for the
-- record. No row updated means no live token has that id. The core ends
-- the token's console sessions (auth_end_sessions) in the same
-- transaction.
UPDATE api_token SET revoked_at = coalesce(@now::timestamptz, now())
WHERE id = @id AND revoked_at IS NULL
