-- API tokens (DESIGN §4) on SQLite: the same table as
-- store/postgres/migrations/0003_auth.sql with SQLite's types (TEXT ids,
-- INTEGER microsecond timestamps), STRICT. Only the hex SHA-256 of a token
-- is stored; a revoked token keeps its row and is refused at once.

CREATE TABLE api_token (
    id         TEXT PRIMARY KEY CHECK (id <> ''),
    token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    workspace  TEXT NOT NULL CHECK (workspace <> ''),
    scopes     TEXT NOT NULL CHECK (scopes <> ''),
    label      TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT;
