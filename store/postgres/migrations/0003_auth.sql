-- API tokens (DESIGN §4): a token is shown once at creation and stored only
-- as the hex SHA-256 of its text, so a leaked database does not leak usable
-- tokens. Scopes are per workspace ('*' names every workspace); a revoked
-- token keeps its row (revoked_at set) and is refused at once.

CREATE TABLE api_token (
    id         text PRIMARY KEY CHECK (id <> ''),
    token_hash text NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    workspace  text NOT NULL CHECK (workspace <> ''),
    scopes     text NOT NULL CHECK (scopes <> ''),
    label      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
