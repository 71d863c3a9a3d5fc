-- SecretList: a workspace's secrets by name, never the ciphertext.
SELECT name, description, version, updated_at, updated_by
FROM secret
WHERE workspace = :workspace
ORDER BY name
