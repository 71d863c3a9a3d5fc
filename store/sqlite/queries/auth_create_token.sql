-- AuthCreateToken: store a new API token by its hash.
INSERT INTO api_token (id, token_hash, workspace, scopes, label, created_at)
VALUES (:id, :token_hash, :workspace, :scopes, :label, :now)
