-- SecretsSealed: the current ciphertexts of the names (a JSON array) that
-- exist, for the enqueue check and the worker at claim.
SELECT name, version, ciphertext, key_id
FROM secret
WHERE workspace = :workspace AND name IN (SELECT value FROM json_each(:names))
ORDER BY name
