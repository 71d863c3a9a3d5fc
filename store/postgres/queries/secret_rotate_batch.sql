-- SecretRotateBatch: the next rows not sealed with the new key, in
-- primary-key order after the cursor, locked until the batch's
-- transaction commits so no put rewrites a row being resealed.
SELECT workspace, name, version, ciphertext, key_id
FROM secret
WHERE key_id <> @key_id AND (workspace, name) > (@after_workspace, @after_name)
ORDER BY workspace, name
LIMIT @lim
FOR UPDATE
