-- Sources, catalog and object cache (DESIGN §3).
--
-- git_source: a workspace's git repositories. Credentials are not stored:
-- git reads them from the server's own configuration.
-- app, action: the catalog, filled only by sync, one transaction per
-- synced commit. action's timeout/tag/retry columns are overrides: NULL
-- means "the app's value". Enqueue copies the resolved values into job.
-- object_*: the "postgres" object cache. A tree is complete only when its
-- object_marker row exists; the marker is written after every chunk.

CREATE TABLE git_source (
    workspace  text NOT NULL CHECK (workspace <> ''),
    id         text NOT NULL CHECK (id <> ''),
    url        text NOT NULL CHECK (url <> ''),
    branch     text NOT NULL CHECK (branch <> ''),
    commit_sha text NOT NULL DEFAULT '',
    synced_at  timestamptz,
    error      text NOT NULL DEFAULT '',
    error_at   timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, id)
);

CREATE TABLE app (
    workspace      text NOT NULL,
    app_key        text NOT NULL CHECK (app_key <> ''),
    git_source_id  text NOT NULL,
    commit_sha     text NOT NULL CHECK (commit_sha <> ''),
    entrypoint     text NOT NULL CHECK (entrypoint <> ''),
    runtime        text NOT NULL CHECK (runtime IN ('bun', 'node', 'python', 'command')),
    timeout_ms     bigint NOT NULL CHECK (timeout_ms > 0),
    tag            text NOT NULL CHECK (tag <> ''),
    max_attempts   integer NOT NULL CHECK (max_attempts >= 1),
    backoff_ms     bigint NOT NULL CHECK (backoff_ms > 0),
    backoff_factor double precision NOT NULL CHECK (backoff_factor >= 1),
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (workspace, app_key),
    FOREIGN KEY (workspace, git_source_id) REFERENCES git_source (workspace, id) ON DELETE CASCADE
);
CREATE INDEX app_source ON app (workspace, git_source_id);

CREATE TABLE action (
    workspace      text NOT NULL,
    app_key        text NOT NULL,
    action_key     text NOT NULL CHECK (action_key <> ''),
    input_schema   jsonb,
    output_schema  jsonb,
    timeout_ms     bigint CHECK (timeout_ms > 0),
    tag            text CHECK (tag <> ''),
    max_attempts   integer CHECK (max_attempts >= 1),
    backoff_ms     bigint CHECK (backoff_ms > 0),
    backoff_factor double precision CHECK (backoff_factor >= 1),
    PRIMARY KEY (workspace, app_key, action_key),
    FOREIGN KEY (workspace, app_key) REFERENCES app (workspace, app_key) ON DELETE CASCADE,
    -- A retry override is whole or absent.
    CONSTRAINT action_retry_whole CHECK (
        (max_attempts IS NULL) = (backoff_ms IS NULL) AND (backoff_ms IS NULL) = (backoff_factor IS NULL))
);

CREATE TABLE object_file (
    workspace  text NOT NULL,
    source_id  text NOT NULL,
    commit_sha text NOT NULL,
    path       text NOT NULL CHECK (path <> ''),
    mode       bigint NOT NULL,
    size       bigint NOT NULL CHECK (size >= 0),
    PRIMARY KEY (workspace, source_id, commit_sha, path)
);

CREATE TABLE object_chunk (
    workspace  text NOT NULL,
    source_id  text NOT NULL,
    commit_sha text NOT NULL,
    path       text NOT NULL,
    seq        integer NOT NULL CHECK (seq >= 0),
    data       bytea NOT NULL,
    PRIMARY KEY (workspace, source_id, commit_sha, path, seq)
);

CREATE TABLE object_marker (
    workspace  text NOT NULL,
    source_id  text NOT NULL,
    commit_sha text NOT NULL,
    files      integer NOT NULL CHECK (files >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, source_id, commit_sha)
);
