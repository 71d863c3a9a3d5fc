package driver

import (
	"context"
	"time"

	"github.com/windforce/windforce/secrets"
)

// SecretRow is one secret as stored: its current version sealed, never
// its value.
type SecretRow struct {
	Workspace, Name string
	Version         int64
	Description     string
	// Ciphertext is secrets.Seal's output for (Workspace, Name, Version).
	Ciphertext []byte
	// KeyID is the ID of the key that sealed Ciphertext.
	KeyID     string
	UpdatedBy string
	// Now is updated_at; zero is the database's clock.
	Now time.Time
}

// SealedRow is a stored ciphertext with its workspace (the rotation
// batch spans workspaces).
type SealedRow struct {
	Workspace string
	secrets.Sealed
}

// SecretExecutor keeps workspace secrets and their audit (DESIGN §8).
// Which of its operations run together, and the rules (validation,
// sealing, create or replace, not found), are the core's.
type SecretExecutor interface {
	// SecretNextVersion hands out the next version of (workspace, name):
	// 1 the first time, then one more than the last, also after the
	// secret was deleted. In a transaction it holds the name's counter
	// until commit, so concurrent puts of one name take turns.
	SecretNextVersion(ctx context.Context, workspace, name string) (int64, error)
	// SecretInsert inserts the secret r and answers the updated_at it
	// stored; a name the workspace holds already is spine.ErrConflict.
	SecretInsert(ctx context.Context, r SecretRow) (time.Time, error)
	// SecretReplace overwrites the secret r.Name of r.Workspace (version,
	// description, ciphertext, key, who and when) and answers the
	// updated_at it stored; ok is false when there is no such secret.
	SecretReplace(ctx context.Context, r SecretRow) (at time.Time, ok bool, err error)
	// SecretDelete deletes a secret and answers the version it had; ok is
	// false when there is none. The version counter is kept.
	SecretDelete(ctx context.Context, workspace, name string) (version int64, ok bool, err error)
	// SecretList lists the secrets of workspace by name, without
	// ciphertexts.
	SecretList(ctx context.Context, workspace string) ([]secrets.Secret, error)
	// SecretsSealed reads the current rows of those names of workspace
	// that exist, by name.
	SecretsSealed(ctx context.Context, workspace string, names []string) ([]secrets.Sealed, error)
	// SecretAuditInsert appends e to the audit (its ID is ignored, the
	// database numbers entries in order; a zero At is the database's
	// clock).
	SecretAuditInsert(ctx context.Context, e secrets.AuditEntry) error
	// SecretAuditList lists at most limit audit entries of workspace,
	// newest first, with ids below before (0: from the newest).
	SecretAuditList(ctx context.Context, workspace string, before int64, limit int) ([]secrets.AuditEntry, error)
	// SecretRotateBatch reads at most limit rows, of every workspace,
	// whose key_id is not keyID, after the row (afterWorkspace, afterName)
	// in (workspace, name) order. In a transaction on Postgres it locks
	// them until commit.
	SecretRotateBatch(ctx context.Context, keyID, afterWorkspace, afterName string, limit int) ([]SealedRow, error)
	// SecretReseal replaces the ciphertext and key of the row (workspace,
	// name) if it still has version and oldKeyID; ok is false when it
	// changed or is gone (nothing is written).
	SecretReseal(ctx context.Context, workspace, name string, version int64, oldKeyID, newKeyID string, ciphertext []byte) (ok bool, err error)
}
