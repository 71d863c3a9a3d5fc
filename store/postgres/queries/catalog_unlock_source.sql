-- LockSource's release.
SELECT pg_advisory_unlock(hashtextextended('windforce_source:' || @workspace::text || '/' || @id::text, 0))
