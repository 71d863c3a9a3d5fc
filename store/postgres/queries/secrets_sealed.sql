-- SecretsSealed: the current ciphertexts of the names that exist, for the
-- enqueue check and the worker at claim. The primary key serves it.
SELECT name, version, ciphertext, key_id
FROM secret
WHERE workspace = @workspace AND name = ANY(@names::text[])
ORDER BY name
