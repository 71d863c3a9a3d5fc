-- When an enqueue last pinned a schema (pinned_schema.go); no row: the
-- schema is not stored. used_at comes before body in the row, so this
-- never reads the body's overflow pages.
SELECT used_at FROM job_schema WHERE hash = :hash
