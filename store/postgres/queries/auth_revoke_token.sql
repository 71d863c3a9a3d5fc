-- RevokeToken: refuse a token from now on; its row stays for the record.
UPDATE api_token SET revoked_at = coalesce(@now::timestamptz, now())
WHERE id = @id AND revoked_at IS NULL
