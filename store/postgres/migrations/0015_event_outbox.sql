-- The events outbox (DESIGN §9, issue 17): every state change writes its
-- event here in the same transaction as the change; the relay delivers
-- and sweeps the rows. seq is the order readers follow (store.EventsAfter
-- reads only a prefix no transaction in flight can still add to, see
-- store/postgres/events.go); id is the CloudEvent id, a UUIDv7; type has
-- no "windforce." prefix; subject is the job id or the source id; data is
-- the CloudEvent's data.
CREATE TABLE event_outbox (
    seq       bigserial PRIMARY KEY,
    id        uuid NOT NULL UNIQUE,
    workspace text NOT NULL CHECK (workspace <> ''),
    type      text NOT NULL CHECK (type IN ('job.queued', 'job.started', 'job.retrying', 'job.succeeded',
                                            'job.failed', 'job.canceled', 'source.synced', 'source.sync_failed')),
    subject   text NOT NULL CHECK (subject <> ''),
    time      timestamptz NOT NULL,
    data      jsonb NOT NULL
);

-- A workspace's events in order (the live tail, a workspace's relay pass).
CREATE INDEX event_outbox_workspace ON event_outbox (workspace, seq);

-- event_id is a UUIDv7 (RFC 9562) for an event at at: the 48-bit Unix
-- milliseconds of at over a random v4 UUID, whose version nibble 0100
-- becomes 0111 (bits 52 and 53 of the bytea set). Postgres 15 has no
-- uuidv7() of its own.
CREATE FUNCTION event_id(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT encode(set_bit(set_bit(
               overlay(uuid_send(gen_random_uuid())
                       PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                       FROM 1 FOR 6),
               52, 1), 53, 1), 'hex')::uuid
$$;
