-- LockSource: a session advisory lock per source, held for a whole sync so
-- two servers never fetch and write the same source at once.
SELECT pg_advisory_lock(hashtextextended('windforce_source:' || @workspace::text || '/' || @id::text, 0))
