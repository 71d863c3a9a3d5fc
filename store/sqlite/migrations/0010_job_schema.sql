-- Pinned schemas stored once per content (issue 13), as in
-- store/postgres/migrations/0010_job_schema.sql: job_schema holds each
-- distinct schema text once, keyed by the hex SHA-256 of its bytes, and a
-- job keeps only the hashes (NULL for no schema).
--
-- used_at (microseconds, like every time here) is when an enqueue last
-- pinned the row, kept within an hour; every job pinning a row was created
-- no more than an hour after it, so the sweep deletes rows older than the
-- oldest job without looking for references (queries/sweep_schemas.sql).
-- It comes before body so reading it never walks the body's overflow
-- pages.
CREATE TABLE job_schema (
    hash    TEXT PRIMARY KEY CHECK (length(hash) = 64),
    used_at INTEGER NOT NULL,
    body    TEXT NOT NULL CHECK (json_valid(body))
) STRICT;

ALTER TABLE job ADD COLUMN input_schema_hash TEXT;
ALTER TABLE job ADD COLUMN output_schema_hash TEXT;

-- Existing jobs: each distinct schema once, then the hashes on the jobs.
-- SQLite has no SHA-256: windforce_sha256 is the store's own function
-- (schema_hash.go), the hash enqueue computes.
INSERT INTO job_schema (hash, used_at, body)
SELECT windforce_sha256(body),
       max(CAST(unixepoch('subsec') * 1000000 AS INTEGER), coalesce((SELECT max(created_at) FROM job), 0)),
       body
FROM (SELECT input_schema AS body FROM job WHERE input_schema IS NOT NULL
      UNION
      SELECT output_schema FROM job WHERE output_schema IS NOT NULL);

UPDATE job
SET input_schema_hash = windforce_sha256(input_schema),
    output_schema_hash = windforce_sha256(output_schema)
WHERE input_schema IS NOT NULL OR output_schema IS NOT NULL;

-- DROP COLUMN rewrites every row without the copies; their pages go to
-- the free list (VACUUM returns them to the file system).
ALTER TABLE job DROP COLUMN input_schema;
ALTER TABLE job DROP COLUMN output_schema;
