-- Which workspace secrets a job received, as "name@version" (DESIGN §8):
-- written by the worker when it resolves the job's env at claim, fenced on
-- the claim token (queries/job_set_secrets.sql), rewritten by each attempt,
-- shown by the job view. Names and versions only: a value is never stored
-- with a job. NULL until a worker resolved a job that names secrets.
ALTER TABLE job ADD COLUMN secrets text[];
