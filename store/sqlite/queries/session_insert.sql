-- SessionInsert: store a console session.
INSERT INTO console_session (id_hash, token_hash, token_id, created_at, expires_at)
VALUES (:id_hash, :token_hash, :token_id, :now, :expires_at)
