-- One outbox row per batch statement (issue 17: with a sink the spine
-- keeps its speed). After migration 0020 the remaining cost of the events
-- was the rows themselves: a batch claim of 1,761 jobs spent 38 of its
-- 94 ms on the job.started rows (auto_explain), half of it the inserts
-- into the heap and the three b-trees (seq, id, workspace + seq), and the
-- enqueue and completion batches alike. So the three batch statements
-- (enqueue_batch.sql, claim.sql, complete_batch.sql) now write one row per
-- workspace holding all of their events: job_states, each job's state in
-- the statement's order, and times, each event's time. The other writers
-- (single transitions, source events) keep one row per event.
--
-- Each event still has its own seq, id, type, subject and time, the same
-- to every reader as before (event_outbox_events):
-- - seq: the row's seq is the first event's, event n (from 1) is
--   seq + n - 1. The sequence steps by event_batch_max() (4,096) from
--   here on, so a row's events never reach the next row's seq; a batch of
--   more events writes more rows. Seqs stay increasing but are no longer
--   dense (they never were: a rolled back insert leaves a gap).
-- - id: the row's UUIDv7 with the event's own milliseconds in front and n
--   - 1 in its last 16 bits (event_batch_id): stable, a UUIDv7 of the
--   event's time, and unique as long as two rows' other 58 random bits
--   differ.
-- - type: from the state's status (job_batch_event_type); subject: the
--   state's job id.
--
-- Events written before this migration keep their rows and seqs.

-- event_batch_max is how many events one outbox row holds at most, and so
-- the step of the outbox's seq. Inlined as a constant.
CREATE FUNCTION event_batch_max() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 4096
$$;

ALTER TABLE event_outbox
    ALTER COLUMN type DROP NOT NULL,
    ALTER COLUMN subject DROP NOT NULL,
    ADD COLUMN job_states job_event_state[],
    ADD COLUMN times timestamptz[],
    -- span is how many events the row holds: seq to seq + span - 1. The
    -- sweep, the sink's start and the relay's lookups read it without
    -- reading the (toasted) arrays.
    ADD COLUMN span integer NOT NULL DEFAULT 1,
    DROP CONSTRAINT event_outbox_data_or_state,
    -- A row is one source event (data), one job event (job_state) or a
    -- batch of job events (job_states with their times; no type nor
    -- subject of its own).
    ADD CONSTRAINT event_outbox_one_kind CHECK (num_nonnulls(data, job_state, job_states) = 1),
    ADD CONSTRAINT event_outbox_batch CHECK (
        CASE WHEN job_states IS NULL THEN type IS NOT NULL AND subject IS NOT NULL AND times IS NULL AND span = 1
             ELSE type IS NULL AND subject IS NULL AND span BETWEEN 1 AND event_batch_max()
                  AND cardinality(job_states) = span AND cardinality(times) = span END);

ALTER SEQUENCE event_outbox_seq_seq INCREMENT BY 4096;
-- lz4 is much cheaper than the default pglz for the batch's array, which
-- is over the 2 kB a row keeps inline from a few dozen events on.
ALTER TABLE event_outbox ALTER COLUMN job_states SET COMPRESSION lz4;

-- job_batch_event_type is the type of a batch row's event whose job was
-- left with status: a batch enqueues, claims or finishes its jobs.
CREATE FUNCTION job_batch_event_type(status text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE status WHEN 'queued' THEN 'job.queued' WHEN 'running' THEN 'job.started'
                       ELSE job_event_type(status) END
$$;

-- event_batch_id is the id of the event at i (from 0) of the batch row
-- whose id is id, at time at: id with the 48-bit Unix milliseconds of at
-- in front (a UUIDv7 of the event's own time) and i in its last 16 bits.
CREATE FUNCTION event_batch_id(id uuid, at timestamptz, i bigint) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT encode(overlay(overlay(uuid_send(id)
                PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3) FROM 1 FOR 6)
            PLACING substring(int8send(i) FROM 7) FROM 15 FOR 2), 'hex')::uuid
$$;

-- event_outbox_events is the events of the outbox row o, in seq order:
-- the row itself, or each event of a batch row. n is the event's place in
-- the row (from 1); data is a source event's, state a job event's (the
-- readers build its data with job_event_json). One statement: Postgres
-- inlines it into the readers' LATERAL joins.
CREATE FUNCTION event_outbox_events(o event_outbox)
RETURNS TABLE (seq bigint, n bigint, id uuid, type text, subject text, at timestamptz,
               data jsonb, state job_event_state)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT o.seq, 1::bigint, o.id, o.type, o.subject, o.time, o.data, o.job_state
    WHERE o.job_states IS NULL
    UNION ALL
    SELECT o.seq + s.n - 1, s.n, event_batch_id(o.id, s.at, s.n - 1), job_batch_event_type(s.status),
           s.job_id::text, s.at, NULL::jsonb,
           ROW(s.job_id, s.status, s.priority, s.scheduled_for, s.started_at, s.completed_at, s.worker,
               s.attempt, s.restarts, s.generation, s.result, s.error, s.last_error, s.canceled_by,
               s.canceled_reason, s.secrets, s.superseded_by)::job_event_state
    -- unnest of two arrays expands the composite into its members.
    FROM unnest(o.job_states, o.times) WITH ORDINALITY
        AS s(job_id, status, priority, scheduled_for, started_at, completed_at, worker, attempt, restarts,
             generation, result, error, last_error, canceled_by, canceled_reason, secrets, superseded_by,
             at, n)
    WHERE o.job_states IS NOT NULL
$$;
