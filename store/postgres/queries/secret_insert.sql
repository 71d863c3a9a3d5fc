-- SecretInsert: a new secret (the name's counter is locked by this
-- transaction, so no concurrent put inserts it too).
INSERT INTO secret (workspace, name, version, description, ciphertext, key_id, updated_at, updated_by)
VALUES (@workspace, @name, @version, @description, @ciphertext, @key_id,
        coalesce(@now::timestamptz, now()), @updated_by)
RETURNING updated_at
