-- SecretRotateBatch: the next rows not sealed with the new key, in
-- primary-key order after the cursor (read inside the batch's write
-- transaction: the one writer keeps puts out until it commits).
SELECT workspace, name, version, ciphertext, key_id
FROM secret
WHERE key_id <> :key_id AND (workspace, name) > (:after_workspace, :after_name)
ORDER BY workspace, name
LIMIT :lim
