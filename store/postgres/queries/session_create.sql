-- CreateSession: store a console session and, in the same statement,
-- delete up to 1000 sessions expired by now: logins are the clean-up, and
-- the bound keeps one login short however long none happened.
WITH expired AS (
    DELETE FROM console_session
    WHERE id_hash IN (SELECT id_hash FROM console_session WHERE expires_at <= @now LIMIT 1000)
)
INSERT INTO console_session (id_hash, token_hash, token_id, created_at, expires_at)
VALUES (@id_hash, @token_hash, @token_id, @now, @expires_at)
