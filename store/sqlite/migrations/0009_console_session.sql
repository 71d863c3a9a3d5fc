-- Console sessions (DESIGN §5) on SQLite: the same table as
-- store/postgres/migrations/0009_console_session.sql with SQLite's types
-- (INTEGER microsecond timestamps), STRICT. The cookie carries a random
-- session id whose hex SHA-256 keys the row; logout and token revocation
-- set ended_at, so a copied cookie is refused from then on. token_id is
-- 'admin' for the bootstrap admin token (no api_token row, no foreign
-- key). Expired rows are deleted at the next login.
CREATE TABLE console_session (
    id_hash    TEXT PRIMARY KEY CHECK (length(id_hash) = 64),
    token_hash TEXT NOT NULL CHECK (length(token_hash) = 64),
    token_id   TEXT NOT NULL CHECK (token_id <> ''),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL CHECK (expires_at > created_at),
    ended_at   INTEGER
) STRICT;
CREATE INDEX console_session_token ON console_session (token_id) WHERE ended_at IS NULL;
CREATE INDEX console_session_expires ON console_session (expires_at);
