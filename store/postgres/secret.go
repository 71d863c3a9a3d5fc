package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/store/driver"
)

// The secret queries (queries/secret_*.sql, secrets_sealed.sql).
var (
	qSecretNextVersion = mustQuery("secret_next_version")
	qSecretInsert      = mustQuery("secret_insert")
	qSecretReplace     = mustQuery("secret_replace")
	qSecretDelete      = mustQuery("secret_delete")
	qSecretList        = mustQuery("secret_list")
	qSecretsSealed     = mustQuery("secrets_sealed")
	qSecretAuditInsert = mustQuery("secret_audit_insert")
	qSecretAuditList   = mustQuery("secret_audit_list")
	qSecretRotateBatch = mustQuery("secret_rotate_batch")
	qSecretReseal      = mustQuery("secret_reseal")
)

// SecretNextVersion is driver.SecretExecutor.SecretNextVersion.
func (e *executor) SecretNextVersion(ctx context.Context, workspace, name string) (int64, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var v int64
	err := e.q.QueryRow(ctx, qSecretNextVersion, namedArgs{"workspace": workspace, "name": name}).Scan(&v)
	return v, translate(err)
}

// secretArgs binds the row r.
func secretArgs(r driver.SecretRow) namedArgs {
	return namedArgs{
		"workspace": r.Workspace, "name": r.Name, "version": r.Version, "description": r.Description,
		"ciphertext": r.Ciphertext, "key_id": r.KeyID, "updated_by": r.UpdatedBy, "now": timeArg(r.Now),
	}
}

// SecretInsert is driver.SecretExecutor.SecretInsert.
func (e *executor) SecretInsert(ctx context.Context, r driver.SecretRow) (time.Time, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var at time.Time
	if err := e.q.QueryRow(ctx, qSecretInsert, secretArgs(r)).Scan(&at); err != nil {
		return time.Time{}, translate(err)
	}
	return at.UTC(), nil
}

// SecretReplace is driver.SecretExecutor.SecretReplace.
func (e *executor) SecretReplace(ctx context.Context, r driver.SecretRow) (time.Time, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var at time.Time
	err := e.q.QueryRow(ctx, qSecretReplace, secretArgs(r)).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return at.UTC(), true, nil
}

// SecretDelete is driver.SecretExecutor.SecretDelete.
func (e *executor) SecretDelete(ctx context.Context, workspace, name string) (int64, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var v int64
	err := e.q.QueryRow(ctx, qSecretDelete, namedArgs{"workspace": workspace, "name": name}).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, translate(err)
	}
	return v, true, nil
}

// SecretList is driver.SecretExecutor.SecretList.
func (e *executor) SecretList(ctx context.Context, workspace string) ([]secrets.Secret, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSecretList, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (secrets.Secret, error) {
		s := secrets.Secret{Workspace: workspace}
		err := row.Scan(&s.Name, &s.Description, &s.Version, &s.UpdatedAt, &s.UpdatedBy)
		s.UpdatedAt = s.UpdatedAt.UTC()
		return s, err
	})
}

// SecretsSealed is driver.SecretExecutor.SecretsSealed.
func (e *executor) SecretsSealed(ctx context.Context, workspace string, names []string) ([]secrets.Sealed, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSecretsSealed, namedArgs{"workspace": workspace, "names": names})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (secrets.Sealed, error) {
		var s secrets.Sealed
		return s, row.Scan(&s.Name, &s.Version, &s.Ciphertext, &s.KeyID)
	})
}

// SecretAuditInsert is driver.SecretExecutor.SecretAuditInsert.
func (e *executor) SecretAuditInsert(ctx context.Context, a secrets.AuditEntry) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSecretAuditInsert, namedArgs{
		"workspace": a.Workspace, "name": a.Name, "action": string(a.Action), "version": a.Version,
		"actor": a.Actor, "at": timeArg(a.At),
	})
	return translate(err)
}

// SecretAuditList is driver.SecretExecutor.SecretAuditList.
func (e *executor) SecretAuditList(ctx context.Context, workspace string, before int64, limit int) ([]secrets.AuditEntry, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSecretAuditList, namedArgs{"workspace": workspace, "before": before, "lim": limit})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (secrets.AuditEntry, error) {
		a := secrets.AuditEntry{Workspace: workspace}
		var action string
		err := row.Scan(&a.ID, &a.Name, &action, &a.Version, &a.Actor, &a.At)
		a.Action, a.At = secrets.Action(action), a.At.UTC()
		return a, err
	})
}

// SecretRotateBatch is driver.SecretExecutor.SecretRotateBatch.
func (e *executor) SecretRotateBatch(ctx context.Context, keyID, afterWorkspace, afterName string, limit int) ([]driver.SealedRow, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSecretRotateBatch, namedArgs{
		"key_id": keyID, "after_workspace": afterWorkspace, "after_name": afterName, "lim": limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.SealedRow, error) {
		var r driver.SealedRow
		return r, row.Scan(&r.Workspace, &r.Name, &r.Version, &r.Ciphertext, &r.KeyID)
	})
}

// SecretReseal is driver.SecretExecutor.SecretReseal.
func (e *executor) SecretReseal(ctx context.Context, workspace, name string, version int64, oldKeyID, newKeyID string, ciphertext []byte) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qSecretReseal, namedArgs{
		"workspace": workspace, "name": name, "version": version,
		"old_key_id": oldKeyID, "new_key_id": newKeyID, "ciphertext": ciphertext,
	})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}
