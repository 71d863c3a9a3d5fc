-- AuthTokenByID: the token with this id, revoked or not, so the audit
-- identity "token:<id>" of an old job still shows its token's label.
SELECT id, token_hash, workspace, scopes, label, created_at, revoked_at
FROM api_token
WHERE id = :id
