package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// The webhook queries (queries/webhook_*.sql).
const (
	qWebhookPutSecret query = "webhook_put_secret"
	qWebhookSecret    query = "webhook_secret"
	qWebhookForget    query = "webhook_forget"
	qWebhookSeen      query = "webhook_seen"
)

// PutWebhookSecret creates or rotates the webhook secret of an action;
// catalog.ErrNotFound when the catalog has no such action.
func (s *Driver) PutWebhookSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) error {
	var n int64
	err := s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qWebhookPutSecret,
			sql.Named("workspace", workspace), sql.Named("app_key", app), sql.Named("action_key", action),
			sql.Named("secret", secret), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("put webhook secret of %s/%s: %w", app, action, err)
	}
	if n == 0 {
		return fmt.Errorf("put webhook secret: %w", catalog.NotFound(workspace, app, action))
	}
	return nil
}

// WebhookSecret returns the webhook secret of an action; ok is false when
// none was created.
func (s *Driver) WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error) {
	rows, err := s.readerQuery(ctx, qWebhookSecret,
		sql.Named("workspace", workspace), sql.Named("app_key", app), sql.Named("action_key", action))
	if err != nil {
		return "", false, fmt.Errorf("read webhook secret of %s/%s: %w", app, action, err)
	}
	secrets, err := collect(rows, func(r *sql.Rows) (string, error) {
		var v string
		return v, r.Scan(&v)
	})
	if err != nil {
		return "", false, fmt.Errorf("read webhook secret of %s/%s: %w", app, action, err)
	}
	if len(secrets) == 0 {
		return "", false, nil
	}
	return secrets[0], true, nil
}

// EnqueueWebhook records signature as seen at now and enqueues r in one
// write transaction, after deleting seen signatures older than
// forgetBefore. A signature seen before is spine.ErrConflict; a refused
// enqueue rolls the record back, so a corrected retry is not a replay.
func (s *Driver) EnqueueWebhook(ctx context.Context, signature string, now, forgetBefore time.Time, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	var res spine.EnqueueResult
	err := s.writeRegistered(ctx, true, func(w *writeTx) error {
		if _, err := w.exec(ctx, qWebhookForget, sql.Named("before", micros(forgetBefore))); err != nil {
			return fmt.Errorf("forget old webhook signatures: %w", translate(err))
		}
		out, err := w.exec(ctx, qWebhookSeen, sql.Named("signature", signature), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return fmt.Errorf("record webhook signature: %w", translate(err))
		}
		if n, err := out.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("record webhook signature: %w: this signature was already used (replay)", spine.ErrConflict)
		}
		res, err = s.EnqueueActionTx(ctx, w.tx, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}
