-- Object cache: serialize writers of one commit tree (transaction lock).
SELECT pg_advisory_xact_lock(hashtextextended('windforce_object:' || @workspace::text || '/' || @source_id::text || '/' || @commit_sha::text, 0))
