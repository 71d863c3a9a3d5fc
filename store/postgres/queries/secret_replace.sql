-- SecretReplace: the new current version of an existing secret; the old
-- version's ciphertext is not kept. No row means no such secret.
UPDATE secret
SET version = @version, description = @description, ciphertext = @ciphertext, key_id = @key_id,
    updated_at = coalesce(@now::timestamptz, now()), updated_by = @updated_by
WHERE workspace = @workspace AND name = @name
RETURNING updated_at
