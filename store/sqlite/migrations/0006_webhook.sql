-- Webhook triggers (DESIGN §4) on SQLite: the same tables as
-- store/postgres/migrations/0006_webhook.sql with SQLite's types (INTEGER
-- microsecond timestamps), STRICT. The secret is kept as text because the
-- server recomputes the HMAC; no foreign key to action, so a sync that
-- rewrites the catalog keeps the secrets senders were given.
CREATE TABLE webhook_secret (
    workspace  TEXT NOT NULL CHECK (workspace <> ''),
    app_key    TEXT NOT NULL CHECK (app_key <> ''),
    action_key TEXT NOT NULL CHECK (action_key <> ''),
    secret     TEXT NOT NULL CHECK (secret <> ''),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, app_key, action_key)
) STRICT;

-- Accepted signatures: the primary key turns "record the signature" into
-- the replay check; old rows are deleted lazily by the next webhook.
CREATE TABLE webhook_seen (
    signature TEXT PRIMARY KEY CHECK (length(signature) = 64),
    seen_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_seen_seen_at ON webhook_seen (seen_at);
