package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/store/driver"
)

// The secret queries (queries/secret_*.sql, secrets_sealed.sql).
const (
	qSecretNextVersion query = "secret_next_version"
	qSecretInsert      query = "secret_insert"
	qSecretReplace     query = "secret_replace"
	qSecretDelete      query = "secret_delete"
	qSecretList        query = "secret_list"
	qSecretsSealed     query = "secrets_sealed"
	qSecretAuditInsert query = "secret_audit_insert"
	qSecretAuditList   query = "secret_audit_list"
	qSecretRotateBatch query = "secret_rotate_batch"
	qSecretReseal      query = "secret_reseal"
)

// SecretNextVersion is driver.SecretExecutor.SecretNextVersion.
func (e *executor) SecretNextVersion(ctx context.Context, workspace, name string) (int64, error) {
	var v int64
	err := e.write(ctx, func(w *writeTx) error {
		return translate(w.queryRow(ctx, qSecretNextVersion,
			sql.Named("workspace", workspace), sql.Named("name", name)).Scan(&v))
	})
	return v, err
}

// secretArgs binds the row r with updated_at at.
func secretArgs(r driver.SecretRow, at time.Time) []any {
	return []any{
		sql.Named("workspace", r.Workspace), sql.Named("name", r.Name), sql.Named("version", r.Version),
		sql.Named("description", r.Description), sql.Named("ciphertext", r.Ciphertext),
		sql.Named("key_id", r.KeyID), sql.Named("updated_by", r.UpdatedBy), sql.Named("now", micros(at)),
	}
}

// SecretInsert is driver.SecretExecutor.SecretInsert.
func (e *executor) SecretInsert(ctx context.Context, r driver.SecretRow) (time.Time, error) {
	var at time.Time
	err := e.write(ctx, func(w *writeTx) error {
		at = w.now(r.Now)
		_, err := w.exec(ctx, qSecretInsert, secretArgs(r, at)...)
		return translate(err)
	})
	return at, err
}

// SecretReplace is driver.SecretExecutor.SecretReplace.
func (e *executor) SecretReplace(ctx context.Context, r driver.SecretRow) (time.Time, bool, error) {
	var at time.Time
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		at = w.now(r.Now)
		res, err := w.exec(ctx, qSecretReplace, secretArgs(r, at)...)
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil || n == 0 {
		return time.Time{}, false, err
	}
	return at, true, nil
}

// SecretDelete is driver.SecretExecutor.SecretDelete.
func (e *executor) SecretDelete(ctx context.Context, workspace, name string) (int64, bool, error) {
	var v int64
	err := e.write(ctx, func(w *writeTx) error {
		return w.queryRow(ctx, qSecretDelete, sql.Named("workspace", workspace), sql.Named("name", name)).Scan(&v)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, translate(err)
	}
	return v, true, nil
}

// SecretList is driver.SecretExecutor.SecretList.
func (e *executor) SecretList(ctx context.Context, workspace string) ([]secrets.Secret, error) {
	rows, err := e.read(ctx, qSecretList, sql.Named("workspace", workspace))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, func(r *sql.Rows) (secrets.Secret, error) {
		s := secrets.Secret{Workspace: workspace}
		var at int64
		err := r.Scan(&s.Name, &s.Description, &s.Version, &at, &s.UpdatedBy)
		s.UpdatedAt = fromMicros(at)
		return s, err
	})
}

// SecretsSealed is driver.SecretExecutor.SecretsSealed.
func (e *executor) SecretsSealed(ctx context.Context, workspace string, names []string) ([]secrets.Sealed, error) {
	namesJSON, err := stringsJSON(names)
	if err != nil {
		return nil, err
	}
	rows, err := e.read(ctx, qSecretsSealed, sql.Named("workspace", workspace), sql.Named("names", namesJSON))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, func(r *sql.Rows) (secrets.Sealed, error) {
		var s secrets.Sealed
		return s, r.Scan(&s.Name, &s.Version, &s.Ciphertext, &s.KeyID)
	})
}

// SecretAuditInsert is driver.SecretExecutor.SecretAuditInsert.
func (e *executor) SecretAuditInsert(ctx context.Context, a secrets.AuditEntry) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSecretAuditInsert,
			sql.Named("workspace", a.Workspace), sql.Named("name", a.Name), sql.Named("action", string(a.Action)),
			sql.Named("version", a.Version), sql.Named("actor", a.Actor), sql.Named("at", micros(w.now(a.At))))
		return translate(err)
	})
}

// SecretAuditList is driver.SecretExecutor.SecretAuditList.
func (e *executor) SecretAuditList(ctx context.Context, workspace string, before int64, limit int) ([]secrets.AuditEntry, error) {
	rows, err := e.read(ctx, qSecretAuditList,
		sql.Named("workspace", workspace), sql.Named("before", before), sql.Named("lim", limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, func(r *sql.Rows) (secrets.AuditEntry, error) {
		a := secrets.AuditEntry{Workspace: workspace}
		var action string
		var at int64
		err := r.Scan(&a.ID, &a.Name, &action, &a.Version, &a.Actor, &at)
		a.Action, a.At = secrets.Action(action), fromMicros(at)
		return a, err
	})
}

// SecretRotateBatch is driver.SecretExecutor.SecretRotateBatch.
func (e *executor) SecretRotateBatch(ctx context.Context, keyID, afterWorkspace, afterName string, limit int) ([]driver.SealedRow, error) {
	rows, err := e.read(ctx, qSecretRotateBatch, sql.Named("key_id", keyID),
		sql.Named("after_workspace", afterWorkspace), sql.Named("after_name", afterName), sql.Named("lim", limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, func(r *sql.Rows) (driver.SealedRow, error) {
		var s driver.SealedRow
		return s, r.Scan(&s.Workspace, &s.Name, &s.Version, &s.Ciphertext, &s.KeyID)
	})
}

// SecretReseal is driver.SecretExecutor.SecretReseal.
func (e *executor) SecretReseal(ctx context.Context, workspace, name string, version int64, oldKeyID, newKeyID string, ciphertext []byte) (bool, error) {
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qSecretReseal, sql.Named("workspace", workspace), sql.Named("name", name),
			sql.Named("version", version), sql.Named("old_key_id", oldKeyID), sql.Named("new_key_id", newKeyID),
			sql.Named("ciphertext", ciphertext))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}
