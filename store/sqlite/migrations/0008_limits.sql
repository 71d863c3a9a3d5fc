-- A job's resource limits (manifest limits:, DESIGN §6), as in
-- store/postgres/migrations/0008_limits.sql: memory in bytes, pids, cpu in
-- cores; NULL is "not set" (app: the worker's default; action: the app's
-- value, field by field; job: neither set it). Nullable columns without a
-- default are added without rewriting the table; their CHECKs hold for
-- the NULLs of existing rows.

ALTER TABLE app ADD COLUMN limit_memory INTEGER CHECK (limit_memory > 0);
ALTER TABLE app ADD COLUMN limit_pids INTEGER CHECK (limit_pids > 0);
ALTER TABLE app ADD COLUMN limit_cpu REAL CHECK (limit_cpu > 0);

ALTER TABLE action ADD COLUMN limit_memory INTEGER CHECK (limit_memory > 0);
ALTER TABLE action ADD COLUMN limit_pids INTEGER CHECK (limit_pids > 0);
ALTER TABLE action ADD COLUMN limit_cpu REAL CHECK (limit_cpu > 0);

ALTER TABLE job ADD COLUMN limit_memory INTEGER CHECK (limit_memory > 0);
ALTER TABLE job ADD COLUMN limit_pids INTEGER CHECK (limit_pids > 0);
ALTER TABLE job ADD COLUMN limit_cpu REAL CHECK (limit_cpu > 0);
