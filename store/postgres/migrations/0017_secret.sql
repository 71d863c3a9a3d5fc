-- Workspace secrets (DESIGN §8). A row holds the current version's value
-- sealed with AES-256-GCM (package secrets): a 12-byte nonce then the
-- ciphertext and tag, with (workspace, name, version) as associated data,
-- so a ciphertext copied onto another row does not open. key_id is the
-- fingerprint of the key that sealed it, so rotate-key finds the rows an
-- old key sealed. Older versions' ciphertexts are not kept. The database
-- alone shows names, descriptions, versions, who and when, and each
-- value's length to within 64 bytes (values are padded before sealing)
-- — never a value.
CREATE TABLE secret (
    workspace   text NOT NULL CHECK (workspace <> ''),
    name        text NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'),
    version     bigint NOT NULL CHECK (version > 0),
    description text NOT NULL DEFAULT '',
    ciphertext  bytea NOT NULL CHECK (length(ciphertext) > 28),
    key_id      text NOT NULL CHECK (key_id <> ''),
    updated_at  timestamptz NOT NULL,
    updated_by  text NOT NULL,
    PRIMARY KEY (workspace, name)
);

-- The last version handed out per (workspace, name). It outlives a delete,
-- so a name deleted and created again goes on counting and a version is
-- never reused (an old ciphertext restored from a backup cannot pass for
-- the new one). Taking the next version is one upsert that row-locks the
-- counter until commit, which orders concurrent puts of one name.
CREATE TABLE secret_version (
    workspace    text NOT NULL,
    name         text NOT NULL,
    last_version bigint NOT NULL CHECK (last_version > 0),
    PRIMARY KEY (workspace, name)
);

-- Who created, replaced or deleted which version when; written in the
-- transaction of the change itself, kept after the secret is deleted.
CREATE TABLE secret_audit (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace text NOT NULL CHECK (workspace <> ''),
    name      text NOT NULL,
    action    text NOT NULL CHECK (action IN ('create', 'replace', 'delete')),
    version   bigint NOT NULL CHECK (version > 0),
    actor     text NOT NULL,
    at        timestamptz NOT NULL
);
-- The audit list: one workspace, newest first, paged by id.
CREATE INDEX secret_audit_workspace ON secret_audit (workspace, id);
