-- A job's environment and warm policy (manifest env: and warm:, DESIGN §3,
-- §7, §8), pinned like its limits (0008_limits.sql).
--
-- env is the JSON text of the variables sorted by name
-- ([{"name":"REGION","value":"eu-west-1"},{"name":"SLACK_TOKEN","secret":"slack_token"}]):
-- literals from git and references to workspace secrets, never a secret's
-- value (the worker resolves them at claim). warm is
-- {"max_jobs":1000,"idle_ms":300000}. NULL means none: on app, no
-- variables and cold; on action, the app's (an action's env merges over
-- the app's per name; its warm replaces the app's, and 'false' is an
-- action's `warm: false`); on job, no variables and cold.
--
-- The columns are text, not jsonb: the stores write them from one
-- deterministic encoding (spine.EnvColumn, spine.WarmColumn), and
-- coalescing compares a waiting job's pin with a request's as that text.
-- Nullable without a default, adding them rewrites no table.

ALTER TABLE app
    ADD COLUMN env text,
    ADD COLUMN warm text;

ALTER TABLE action
    ADD COLUMN env text,
    ADD COLUMN warm text;

ALTER TABLE job
    ADD COLUMN env text,
    ADD COLUMN warm text;
