-- Push hooks that git hosts call (DESIGN §10): the same column as
-- store/postgres/migrations/0012_source_hook_secret.sql. Kept as text
-- because the server recomputes the hosts' HMACs; '' means none.
ALTER TABLE git_source ADD COLUMN hook_secret TEXT NOT NULL DEFAULT '';
