-- SecretReseal: the same version sealed with the new key. Fenced on the
-- version and the old key: a row replaced since it was read is left alone.
UPDATE secret SET ciphertext = :ciphertext, key_id = :new_key_id
WHERE workspace = :workspace AND name = :name AND version = :version AND key_id = :old_key_id
