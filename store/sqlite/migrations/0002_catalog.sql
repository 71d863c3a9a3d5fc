-- Sources and catalog (DESIGN §3) on SQLite: the same tables as
-- store/postgres/migrations/0002_catalog.sql with SQLite's types (TEXT,
-- INTEGER microseconds, JSON as checked TEXT), STRICT. Foreign keys are
-- off on this store's connections, so sync deletes actions and apps
-- explicitly. The object cache of a SQLite deployment is file://; there
-- are no object tables here.

CREATE TABLE git_source (
    workspace  TEXT NOT NULL CHECK (workspace <> ''),
    id         TEXT NOT NULL CHECK (id <> ''),
    url        TEXT NOT NULL CHECK (url <> ''),
    branch     TEXT NOT NULL CHECK (branch <> ''),
    commit_sha TEXT NOT NULL DEFAULT '',
    synced_at  INTEGER,
    error      TEXT NOT NULL DEFAULT '',
    error_at   INTEGER,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, id)
) STRICT;

CREATE TABLE app (
    workspace      TEXT NOT NULL,
    app_key        TEXT NOT NULL CHECK (app_key <> ''),
    git_source_id  TEXT NOT NULL,
    commit_sha     TEXT NOT NULL CHECK (commit_sha <> ''),
    entrypoint     TEXT NOT NULL CHECK (entrypoint <> ''),
    runtime        TEXT NOT NULL CHECK (runtime IN ('bun', 'node', 'python', 'command')),
    timeout_ms     INTEGER NOT NULL CHECK (timeout_ms > 0),
    tag            TEXT NOT NULL CHECK (tag <> ''),
    max_attempts   INTEGER NOT NULL CHECK (max_attempts >= 1),
    backoff_ms     INTEGER NOT NULL CHECK (backoff_ms > 0),
    backoff_factor REAL NOT NULL CHECK (backoff_factor >= 1),
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (workspace, app_key)
) STRICT;
CREATE INDEX app_source ON app (workspace, git_source_id);

CREATE TABLE action (
    workspace      TEXT NOT NULL,
    app_key        TEXT NOT NULL,
    action_key     TEXT NOT NULL CHECK (action_key <> ''),
    input_schema   TEXT CHECK (input_schema IS NULL OR json_valid(input_schema)),
    output_schema  TEXT CHECK (output_schema IS NULL OR json_valid(output_schema)),
    timeout_ms     INTEGER CHECK (timeout_ms > 0),
    tag            TEXT CHECK (tag <> ''),
    max_attempts   INTEGER CHECK (max_attempts >= 1),
    backoff_ms     INTEGER CHECK (backoff_ms > 0),
    backoff_factor REAL CHECK (backoff_factor >= 1),
    PRIMARY KEY (workspace, app_key, action_key),
    CONSTRAINT action_retry_whole CHECK (
        (max_attempts IS NULL) = (backoff_ms IS NULL) AND (backoff_ms IS NULL) = (backoff_factor IS NULL))
) STRICT;
