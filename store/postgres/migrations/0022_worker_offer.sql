-- Dispatch at enqueue (spine/dispatch.go, docs/QUEUE.md). A worker whose
-- claim found fewer jobs than it had free slots leaves an offer here in
-- the claim's own statement, and renews it with every such claim; an
-- enqueue of a due job that no waiting job of its tag outranks may take
-- an offer of its tag and insert the job already running, owned by that
-- worker, in its own statement. That saves the worker's claim round trip
-- between a request and its job's start (issue 18).
--
-- An offer is a hint with an expiry, not a reservation: the enqueue
-- counts the worker's running jobs (job_queue_worker) against capacity,
-- so no bookkeeping of slots can drift, and a worker that dies leaves an
-- offer that lapses after a few poll intervals.
CREATE TABLE worker_offer (
    worker     text PRIMARY KEY,
    tags       text[] NOT NULL CHECK (cardinality(tags) > 0),
    capacity   integer NOT NULL CHECK (capacity > 0),
    expires_at timestamptz NOT NULL
);

-- A worker's running jobs: the enqueue's capacity count and Withdraw's
-- read of what a stopping worker owns. Only running rows, each inserted
-- once by its claim (or dispatch).
CREATE INDEX job_queue_worker ON job_queue (worker) WHERE running;
