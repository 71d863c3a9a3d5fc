-- SecretInsert: a new secret; a name the workspace holds is a conflict.
INSERT INTO secret (workspace, name, version, description, ciphertext, key_id, updated_at, updated_by)
VALUES (:workspace, :name, :version, :description, :ciphertext, :key_id, :now, :updated_by)
