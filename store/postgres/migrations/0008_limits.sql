-- A job's resource limits (manifest limits:, DESIGN §6): memory in bytes,
-- pids (processes and threads), cpu in cores. NULL means "not set": on app,
-- the worker's default; on action, the app's value (each field overrides
-- on its own, unlike retry); on job, what enqueue pinned from the two,
-- NULL where neither set it. The worker caps every value by its own.
--
-- The columns are nullable without a default, so adding them rewrites no
-- table. job's checks are NOT VALID: every existing row holds NULL, which
-- passes them, and validating would scan the whole table under the lock
-- that stops enqueue and claim; new rows are checked all the same.

ALTER TABLE app
    ADD COLUMN limit_memory bigint CHECK (limit_memory > 0),
    ADD COLUMN limit_pids integer CHECK (limit_pids > 0),
    ADD COLUMN limit_cpu double precision CHECK (limit_cpu > 0);

ALTER TABLE action
    ADD COLUMN limit_memory bigint CHECK (limit_memory > 0),
    ADD COLUMN limit_pids integer CHECK (limit_pids > 0),
    ADD COLUMN limit_cpu double precision CHECK (limit_cpu > 0);

ALTER TABLE job
    ADD COLUMN limit_memory bigint,
    ADD COLUMN limit_pids integer,
    ADD COLUMN limit_cpu double precision,
    ADD CONSTRAINT job_limit_memory_positive CHECK (limit_memory > 0) NOT VALID,
    ADD CONSTRAINT job_limit_pids_positive CHECK (limit_pids > 0) NOT VALID,
    ADD CONSTRAINT job_limit_cpu_positive CHECK (limit_cpu > 0) NOT VALID;
