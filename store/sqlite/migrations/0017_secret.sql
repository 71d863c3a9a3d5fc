-- Workspace secrets (DESIGN §8) on SQLite: the same tables as
-- store/postgres/migrations/0017_secret.sql with SQLite's types (INTEGER
-- microsecond timestamps, BLOB ciphertext), STRICT. A row holds only the
-- current version's sealed value (nonce ‖ AES-256-GCM of the value padded
-- to 64 bytes, the row bound as associated data) and the fingerprint of
-- the key that sealed it.
CREATE TABLE secret (
    workspace   TEXT NOT NULL CHECK (workspace <> ''),
    name        TEXT NOT NULL CHECK (name <> '' AND length(name) <= 64),
    version     INTEGER NOT NULL CHECK (version > 0),
    description TEXT NOT NULL DEFAULT '',
    ciphertext  BLOB NOT NULL CHECK (length(ciphertext) > 28),
    key_id      TEXT NOT NULL CHECK (key_id <> ''),
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (workspace, name)
) STRICT;

-- The last version handed out per name; it outlives a delete, so a
-- version is never reused for a (workspace, name).
CREATE TABLE secret_version (
    workspace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    last_version INTEGER NOT NULL CHECK (last_version > 0),
    PRIMARY KEY (workspace, name)
) STRICT;

-- Who created, replaced or deleted which version when. AUTOINCREMENT so
-- an id is never reused (ids are the audit list's cursor).
CREATE TABLE secret_audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL CHECK (workspace <> ''),
    name      TEXT NOT NULL,
    action    TEXT NOT NULL CHECK (action IN ('create', 'replace', 'delete')),
    version   INTEGER NOT NULL CHECK (version > 0),
    actor     TEXT NOT NULL,
    at        INTEGER NOT NULL
) STRICT;
CREATE INDEX secret_audit_workspace ON secret_audit (workspace, id);
