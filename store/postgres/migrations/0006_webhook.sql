-- Webhook triggers (DESIGN §4). A signed webhook carries an HMAC-SHA256 of
-- "timestamp.body" keyed by its action's secret. The secret is kept as
-- text, not hashed: the server must recompute the HMAC. There is no
-- foreign key to action: a sync rewrites the catalog and must not drop
-- the secrets a sender was given; a secret of a removed action is inert
-- because enqueue refuses the unknown action.
CREATE TABLE webhook_secret (
    workspace  text NOT NULL CHECK (workspace <> ''),
    app_key    text NOT NULL CHECK (app_key <> ''),
    action_key text NOT NULL CHECK (action_key <> ''),
    secret     text NOT NULL CHECK (secret <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, app_key, action_key)
);

-- Signatures already accepted, so a captured request cannot be replayed
-- inside the timestamp window. The primary key makes "record the
-- signature" the replay check itself (a unique insert); rows older than
-- twice the window are deleted lazily by the next webhook.
CREATE TABLE webhook_seen (
    signature text PRIMARY KEY CHECK (length(signature) = 64),
    seen_at   timestamptz NOT NULL
);
CREATE INDEX webhook_seen_seen_at ON webhook_seen (seen_at);
