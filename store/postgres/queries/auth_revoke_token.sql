-- RevokeToken: refuse a token from now on (its row stays for the record)
-- and end its open console sessions in the same statement, so no session
-- of a revoked token is left open. Answers how many tokens it revoked:
-- 0 when there is no live token with that id.
WITH revoked AS (
    UPDATE api_token SET revoked_at = coalesce(@now::timestamptz, now())
    WHERE id = @id AND revoked_at IS NULL
    RETURNING id, revoked_at
), ended AS (
    UPDATE console_session s SET ended_at = r.revoked_at
    FROM revoked r
    WHERE s.token_id = r.id AND s.ended_at IS NULL
)
SELECT count(*) FROM revoked
