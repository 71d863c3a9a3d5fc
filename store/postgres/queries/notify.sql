-- Notify sends each of @payloads once on @channel, inside the caller's
-- transaction so it is delivered only on commit: the distinct tags of an
-- enqueue batch (worker wake-ups), or the job ids of a transaction's
-- completions in chunks (see donePayloads).
SELECT pg_notify(@channel::text, payload) FROM unnest(@payloads::text[]) AS payload
