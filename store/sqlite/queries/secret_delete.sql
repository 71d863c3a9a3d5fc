-- SecretDelete: drop a secret, answering the version it had. Its
-- secret_version counter stays, so a later create goes on counting.
DELETE FROM secret WHERE workspace = :workspace AND name = :name
RETURNING version
