-- A job's environment and warm policy (manifest env: and warm:, DESIGN §3,
-- §7, §8), as in store/postgres/migrations/0016_pin_env_warm.sql: JSON
-- text from one deterministic encoding (spine.EnvColumn, spine.WarmColumn),
-- compared as text by coalescing; NULL means none (app: no variables,
-- cold; action: the app's, and warm 'false' is an action's `warm: false`;
-- job: no variables, cold). env holds names, literals and secret
-- references, never a secret's value.

ALTER TABLE app ADD COLUMN env TEXT CHECK (json_valid(env));
ALTER TABLE app ADD COLUMN warm TEXT CHECK (json_valid(warm));

ALTER TABLE action ADD COLUMN env TEXT CHECK (json_valid(env));
ALTER TABLE action ADD COLUMN warm TEXT CHECK (json_valid(warm));

ALTER TABLE job ADD COLUMN env TEXT CHECK (json_valid(env));
ALTER TABLE job ADD COLUMN warm TEXT CHECK (json_valid(warm));
