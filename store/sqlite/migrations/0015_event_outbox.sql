-- The events outbox (DESIGN §9, issue 17) on SQLite: the table of
-- store/postgres/migrations/0015_event_outbox.sql. seq is the order
-- readers follow (one writer: seq order is commit order); id is the
-- CloudEvent id, a UUIDv7 (the driver's windforce_event_id()); time is
-- microseconds since the Unix epoch, as every other time here.
CREATE TABLE event_outbox (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    id        TEXT NOT NULL UNIQUE,
    workspace TEXT NOT NULL CHECK (workspace <> ''),
    type      TEXT NOT NULL CHECK (type IN ('job.queued', 'job.started', 'job.retrying', 'job.succeeded',
                                            'job.failed', 'job.canceled', 'source.synced', 'source.sync_failed')),
    subject   TEXT NOT NULL CHECK (subject <> ''),
    time      INTEGER NOT NULL,
    data      TEXT NOT NULL CHECK (json_valid(data))
) STRICT;

-- A workspace's events in order (the live tail, a workspace's relay pass).
CREATE INDEX event_outbox_workspace ON event_outbox (workspace, seq);
