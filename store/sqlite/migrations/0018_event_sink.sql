-- Where a workspace's events go (DESIGN §9) on SQLite: the same tables as
-- store/postgres/migrations/0018_event_sink.sql with SQLite's types (TEXT
-- uuids, INTEGER microseconds, INTEGER 0/1 booleans, JSON as checked
-- TEXT), STRICT. secret is kept as text (the relay recomputes each
-- webhook's HMAC); no API reads it back.
CREATE TABLE event_sink (
    workspace  TEXT NOT NULL CHECK (workspace <> ''),
    id         TEXT NOT NULL CHECK (id <> ''),
    kind       TEXT NOT NULL CHECK (kind IN ('nats', 'webhook')),
    url        TEXT NOT NULL CHECK (url <> ''),
    subject    TEXT NOT NULL DEFAULT 'windforce' CHECK (subject <> ''),
    types      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(types) AND json_type(types) = 'array'),
    secret     TEXT NOT NULL DEFAULT '',
    enabled    INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    after_seq  INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, id),
    CHECK ((kind = 'webhook') = (secret <> ''))
) STRICT;

-- One event's delivery to one sink; see the Postgres migration. The one
-- writer serializes claims, so the lease only guards against a send that
-- outlives its process (a restart clears leases: one process per file).
CREATE TABLE event_delivery (
    workspace       TEXT NOT NULL,
    sink_id         TEXT NOT NULL,
    event_seq       INTEGER NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    subject         TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER NOT NULL,
    lease           TEXT,
    leased_until    INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    delivered_at    INTEGER,
    failed_at       INTEGER,
    PRIMARY KEY (workspace, sink_id, event_seq),
    CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
    CHECK ((lease IS NULL) = (leased_until IS NULL))
) STRICT;

CREATE INDEX event_delivery_pending ON event_delivery (workspace, sink_id, event_seq)
    WHERE status = 'pending';
CREATE INDEX event_delivery_order ON event_delivery (workspace, sink_id, subject, event_seq)
    WHERE status = 'pending';
CREATE INDEX event_delivery_settled ON event_delivery (coalesce(delivered_at, failed_at))
    WHERE status <> 'pending';
CREATE INDEX event_delivery_event ON event_delivery (event_seq);

-- The fan-out cursor (see the Postgres migration); one row.
CREATE TABLE event_relay (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    fanned_seq INTEGER NOT NULL
) STRICT;
INSERT INTO event_relay (id, fanned_seq) VALUES (1, 0);
