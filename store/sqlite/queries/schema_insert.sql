-- Store a schema an enqueue pins, once per content (issue 13): the one
-- writer has just found no row with this hash (schema_used_at.sql).
INSERT INTO job_schema (hash, used_at, body) VALUES (:hash, :used_at, :body)
