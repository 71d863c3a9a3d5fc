-- Console sessions (DESIGN §5). The session cookie is signed, but a
-- signature alone cannot be taken back: a copied cookie would keep working
-- after logout until it expired. So the cookie carries a random session
-- id and every console request looks its row up here; logout sets
-- ended_at, and revoking an API token ends every session of that token.
-- Only the hex SHA-256 of the session id is stored, as for API tokens, so
-- a copy of the database opens no session. token_id is the API token's id
-- ('admin' for the bootstrap admin token, which has no api_token row, so
-- there is no foreign key); token_hash is looked up on every request too,
-- so a revoked or replaced token is refused even if its sessions were not
-- marked. Expired rows are deleted at the next login.
CREATE TABLE console_session (
    id_hash    text PRIMARY KEY CHECK (length(id_hash) = 64),
    token_hash text NOT NULL CHECK (length(token_hash) = 64),
    token_id   text NOT NULL CHECK (token_id <> ''),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
    ended_at   timestamptz
);
-- Revocation ends the live sessions of one token.
CREATE INDEX console_session_token ON console_session (token_id) WHERE ended_at IS NULL;
-- The login-time clean-up deletes by expiry.
CREATE INDEX console_session_expires ON console_session (expires_at);
