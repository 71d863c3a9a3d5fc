-- AuthTokenByHash: the live (not revoked) token with this hash.
SELECT id, workspace, scopes, label, created_at
FROM api_token
WHERE token_hash = @token_hash AND revoked_at IS NULL
