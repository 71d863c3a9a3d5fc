-- SessionDeleteExpired: delete up to 1000 sessions expired by now, in the
-- transaction of a login (session_insert). Logins are the clean-up; the
-- bound keeps one login short however long none happened.
DELETE FROM console_session
WHERE id_hash IN (SELECT id_hash FROM console_session WHERE expires_at <= :now LIMIT 1000)
