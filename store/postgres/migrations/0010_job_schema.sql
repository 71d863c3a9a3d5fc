-- Pinned schemas are stored once per content (issue 13): job_schema holds
-- each distinct schema text once, keyed by the hex SHA-256 of the text as
-- pinned, and a job keeps only the hashes (input_schema_hash,
-- output_schema_hash; NULL for no schema). Twenty jobs of an action with a
-- 5 MB schema used to store twenty copies; now they store one.
--
-- used_at is when an enqueue last pinned the row, kept within an hour
-- (enqueue touches it only when it is older than that, so a busy action
-- writes its row once an hour, not once per job). Every job pinning a row
-- was created no more than an hour after the row's used_at, which is what
-- lets the sweep delete rows no job can reference without looking for
-- references (queries/sweep_schemas.sql).
CREATE TABLE job_schema (
    hash    text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
    used_at timestamptz NOT NULL,
    body    jsonb NOT NULL
);

ALTER TABLE job
    ADD COLUMN input_schema_hash text,
    ADD COLUMN output_schema_hash text;

-- Existing jobs: each distinct schema text once (its jsonb text, which is
-- also what the catalog pins, so new jobs of the same action find these
-- rows), then the hashes on the jobs.
INSERT INTO job_schema (hash, used_at, body)
SELECT DISTINCT ON (hash) hash, greatest(now(), (SELECT max(created_at) FROM job)), body
FROM (
    SELECT encode(sha256(convert_to(input_schema::text, 'UTF8')), 'hex') AS hash, input_schema AS body
    FROM job WHERE input_schema IS NOT NULL
    UNION ALL
    SELECT encode(sha256(convert_to(output_schema::text, 'UTF8')), 'hex'), output_schema
    FROM job WHERE output_schema IS NOT NULL
) AS pinned
ORDER BY hash;

-- Clearing the copies here (not only dropping the columns) frees their
-- TOAST space for reuse once vacuum has passed.
UPDATE job
SET input_schema_hash = encode(sha256(convert_to(input_schema::text, 'UTF8')), 'hex'),
    output_schema_hash = encode(sha256(convert_to(output_schema::text, 'UTF8')), 'hex'),
    input_schema = NULL,
    output_schema = NULL
WHERE input_schema IS NOT NULL OR output_schema IS NOT NULL;

ALTER TABLE job
    DROP COLUMN input_schema,
    DROP COLUMN output_schema;
