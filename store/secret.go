package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ secrets.Store = (*Store)(nil)

// Audit list page sizes.
const (
	defaultSecretAuditLimit = 50
	maxSecretAuditLimit     = 500
)

// DefaultRotateBatch is how many rows one rotate-key transaction
// re-encrypts.
const DefaultRotateBatch = 100

// PutSecret creates or replaces the secret p.Name of p.Workspace as a new
// version sealed with key, and audits it in the same transaction; created
// says which it was. A bad name, value or description is refused with
// the secrets package's typed error before anything is written. The value
// is sealed here and only the ciphertext leaves the process.
func (s *Store) PutSecret(ctx context.Context, key secrets.Key, p secrets.Put) (sec secrets.Secret, created bool, err error) {
	if err := checkSecretPut(p); err != nil {
		return secrets.Secret{}, false, fmt.Errorf("set secret: %w", err)
	}
	if key.IsZero() {
		return secrets.Secret{}, false, fmt.Errorf("set secret %s: %w", p.Name, secrets.ErrNoKey)
	}
	sec = secrets.Secret{Workspace: p.Workspace, Name: p.Name, Description: p.Description, UpdatedBy: p.Actor}
	err = s.ex.Tx(ctx, func(ex driver.Executor) error {
		v, err := ex.SecretNextVersion(ctx, p.Workspace, p.Name)
		if err != nil {
			return err
		}
		sealed, err := secrets.Seal(key, p.Workspace, p.Name, v, p.Value)
		if err != nil {
			return err
		}
		row := driver.SecretRow{Workspace: p.Workspace, Name: p.Name, Version: v, Description: p.Description,
			Ciphertext: sealed, KeyID: key.ID(), UpdatedBy: p.Actor, Now: p.Now}
		action := secrets.ActionReplace
		at, ok, err := ex.SecretReplace(ctx, row)
		if err != nil {
			return err
		}
		if !ok {
			// No concurrent put can insert the name meanwhile: this
			// transaction holds its version counter.
			action = secrets.ActionCreate
			if at, err = ex.SecretInsert(ctx, row); err != nil {
				return err
			}
		}
		sec.Version, sec.UpdatedAt, created = v, at, action == secrets.ActionCreate
		return ex.SecretAuditInsert(ctx, secrets.AuditEntry{Workspace: p.Workspace, Name: p.Name,
			Action: action, Version: v, Actor: p.Actor, At: at})
	})
	if err != nil {
		return secrets.Secret{}, false, fmt.Errorf("set secret %s: %w", p.Name, err)
	}
	return sec, created, nil
}

// checkSecretPut is the rule of what may be stored, before any write.
func checkSecretPut(p secrets.Put) error {
	if p.Workspace == "" {
		return fmt.Errorf("%w: empty workspace", spine.ErrInvalid)
	}
	if err := secrets.ValidName(p.Name); err != nil {
		return err
	}
	if err := secrets.ValidValue(p.Value); err != nil {
		return err
	}
	return secrets.ValidDescription(p.Description)
}

// ListSecrets lists the secrets of workspace by name, never a value.
func (s *Store) ListSecrets(ctx context.Context, workspace string) ([]secrets.Secret, error) {
	list, err := s.ex.SecretList(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	return list, nil
}

// DeleteSecret deletes the secret name of workspace and audits it, as
// actor, in the same transaction; secrets.ErrNotFound (a spine.ErrNotFound)
// when there is none, and then nothing is audited. Its version counter is
// kept: a later create goes on from the deleted version.
func (s *Store) DeleteSecret(ctx context.Context, workspace, name, actor string) error {
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		v, ok, err := ex.SecretDelete(ctx, workspace, name)
		if err != nil {
			return err
		}
		if !ok {
			return secrets.ErrNotFound
		}
		return ex.SecretAuditInsert(ctx, secrets.AuditEntry{Workspace: workspace, Name: name,
			Action: secrets.ActionDelete, Version: v, Actor: actor})
	})
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	return nil
}

// SecretAudit lists the audit of workspace, newest first: at most limit
// entries (0: 50; at most 500) older than the cursor before (0: from the
// newest). next is the cursor of the following page, 0 at the end.
func (s *Store) SecretAudit(ctx context.Context, workspace string, before int64, limit int) (entries []secrets.AuditEntry, next int64, err error) {
	if before < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("secret audit: %w: negative cursor or limit", spine.ErrInvalid)
	}
	if limit == 0 {
		limit = defaultSecretAuditLimit
	}
	limit = min(limit, maxSecretAuditLimit)
	entries, err = s.ex.SecretAuditList(ctx, workspace, before, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("secret audit: %w", err)
	}
	if len(entries) == limit {
		next = entries[len(entries)-1].ID
	}
	return entries, next, nil
}

// SecretsSealed returns the current sealed rows of those of names that
// workspace holds, by name; a name it does not hold is simply absent
// (the caller names what is missing). Enqueue checks with it that every
// secret a job references exists; the worker opens what it returns at
// claim.
func (s *Store) SecretsSealed(ctx context.Context, workspace string, names []string) ([]secrets.Sealed, error) {
	if len(names) == 0 {
		return nil, nil
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	rows, err := s.ex.SecretsSealed(ctx, workspace, names)
	if err != nil {
		return nil, fmt.Errorf("read secrets %v: %w", names, err)
	}
	return rows, nil
}

// RotateSecretsKey re-encrypts every row sealed with old into current,
// batch rows (0: DefaultRotateBatch) per transaction, so a large store is
// never held in one long transaction and an interrupted run keeps what
// it committed. It is idempotent: rows sealed with current already are
// not read. A row sealed with neither key is left alone and listed in
// Rotation.Foreign; a row that claims old's ID but does not open with it
// stops the run with that error.
func (s *Store) RotateSecretsKey(ctx context.Context, old, current secrets.Key, batch int) (secrets.Rotation, error) {
	var out secrets.Rotation
	if old.IsZero() || current.IsZero() {
		return out, fmt.Errorf("rotate secrets key: %w", secrets.ErrNoKey)
	}
	if old.ID() == current.ID() {
		return out, errors.New("rotate secrets key: the old key is the current key")
	}
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	var afterWS, afterName string
	for {
		var n, resealed int
		var foreign []string
		err := s.ex.Tx(ctx, func(ex driver.Executor) error {
			n, resealed, foreign = 0, 0, nil
			rows, err := ex.SecretRotateBatch(ctx, current.ID(), afterWS, afterName, batch)
			if err != nil {
				return err
			}
			for _, r := range rows {
				ok, err := reseal(ctx, ex, old, current, r)
				if err != nil {
					return err
				}
				if !ok {
					foreign = append(foreign, fmt.Sprintf("%s/%s (key %s)", r.Workspace, r.Name, r.KeyID))
				} else {
					resealed++
				}
			}
			if n = len(rows); n > 0 {
				afterWS, afterName = rows[n-1].Workspace, rows[n-1].Name
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("rotate secrets key after %d rows: %w", out.Resealed, err)
		}
		out.Resealed += resealed
		out.Foreign = append(out.Foreign, foreign...)
		if n < batch {
			return out, nil
		}
	}
}

// reseal opens the row r with old and seals it again with current; ok is
// false when r was sealed with neither key (nothing written).
func reseal(ctx context.Context, ex driver.Executor, old, current secrets.Key, r driver.SealedRow) (ok bool, err error) {
	if r.KeyID != old.ID() {
		return false, nil
	}
	value, err := secrets.Open(old, r.Workspace, r.Name, r.Version, r.Ciphertext)
	if err != nil {
		return false, err
	}
	defer clear(value)
	sealed, err := secrets.Seal(current, r.Workspace, r.Name, r.Version, value)
	if err != nil {
		return false, err
	}
	// A row replaced since the batch read it (SQLite's writer and the
	// Postgres row lock prevent that, the fence says so again) is sealed
	// with the key of whoever replaced it and is left alone.
	if _, err := ex.SecretReseal(ctx, r.Workspace, r.Name, r.Version, old.ID(), current.ID(), sealed); err != nil {
		return false, err
	}
	return true, nil
}
