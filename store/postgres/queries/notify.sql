-- Notify wakes the workers of each distinct tag once, inside the caller's
-- transaction so the wake-up is delivered only on commit.
SELECT pg_notify(@channel::text, tag) FROM unnest(@tags::text[]) AS tag
