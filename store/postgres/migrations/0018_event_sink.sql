-- Where a workspace's events go (DESIGN §9): sinks, and the delivery of
-- each outbox event to each sink.
--
-- secret is the webhook signing secret (whsec_ + base64 key), kept as
-- text as webhook_secret and git_source.hook_secret are: the relay must
-- recompute the HMAC of every delivery. No API reads it back. after_seq
-- is the outbox position when the sink was created: it receives only the
-- events after it.
CREATE TABLE event_sink (
    workspace  text NOT NULL CHECK (workspace <> ''),
    id         text NOT NULL CHECK (id <> ''),
    kind       text NOT NULL CHECK (kind IN ('nats', 'webhook')),
    url        text NOT NULL CHECK (url <> ''),
    subject    text NOT NULL DEFAULT 'windforce' CHECK (subject <> ''),
    types      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(types) = 'array'),
    secret     text NOT NULL DEFAULT '',
    enabled    boolean NOT NULL DEFAULT true,
    after_seq  bigint NOT NULL DEFAULT 0,
    created_by text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (workspace, id),
    -- A webhook signs, a nats sink does not.
    CHECK ((kind = 'webhook') = (secret <> ''))
);

-- One event's delivery to one sink. pending rows are the relay's work:
-- a claim leases a row (lease, leased_until) for one attempt, sends with
-- no transaction open, and settles it fenced on the lease. Of one
-- subject (job or source) and sink, only the pending row with the lowest
-- event_seq is ever claimable, so events of a job reach a sink in order.
-- Settled rows (delivered, failed) stay for the API and the console until
-- the retention sweep. No foreign keys (none in the spine either): deleting
-- a sink deletes its deliveries in the same transaction, and the sweep
-- deletes an outbox row only once no delivery row names it.
CREATE TABLE event_delivery (
    workspace       text NOT NULL,
    sink_id         text NOT NULL,
    event_seq       bigint NOT NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    subject         text NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL,
    lease           uuid,
    leased_until    timestamptz,
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz,
    failed_at       timestamptz,
    PRIMARY KEY (workspace, sink_id, event_seq),
    CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
    CHECK ((lease IS NULL) = (leased_until IS NULL))
);

-- The claim: a sink's pending rows in seq order, where each subject's
-- head comes first (the due time is a filter: a backlog is mostly due).
CREATE INDEX event_delivery_pending ON event_delivery (workspace, sink_id, event_seq)
    WHERE status = 'pending';
-- The order check: an earlier pending row of the same subject and sink.
CREATE INDEX event_delivery_order ON event_delivery (workspace, sink_id, subject, event_seq)
    WHERE status = 'pending';
-- The sweep: settled rows by settle time.
CREATE INDEX event_delivery_settled ON event_delivery ((coalesce(delivered_at, failed_at)))
    WHERE status <> 'pending';
-- The outbox sweep: does any delivery still name this event?
CREATE INDEX event_delivery_event ON event_delivery (event_seq);

-- The fan-out cursor: the last outbox seq whose deliveries exist. One
-- row; the fan-out of one server at a time locks it (SKIP LOCKED: the
-- others leave the pass to it), makes the deliveries of the events after
-- it for every enabled sink that wants them, and moves it, in one
-- transaction.
CREATE TABLE event_relay (
    id         integer PRIMARY KEY CHECK (id = 1),
    fanned_seq bigint NOT NULL
);
INSERT INTO event_relay (id, fanned_seq) VALUES (1, 0);
