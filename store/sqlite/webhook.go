package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// The webhook queries (queries/webhook_*.sql).
const (
	qWebhookPutSecret query = "webhook_put_secret"
	qWebhookSecret    query = "webhook_secret"
	qWebhookForget    query = "webhook_forget"
	qWebhookSeen      query = "webhook_seen"
)

// WebhookPutSecret creates or replaces the secret of an action in the
// catalog; ok is false when there is no such action.
func (e *executor) WebhookPutSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) (bool, error) {
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qWebhookPutSecret,
			sql.Named("workspace", workspace), sql.Named("app_key", app), sql.Named("action_key", action),
			sql.Named("secret", secret), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// WebhookSecret reads the secret of an action; ok is false when none was
// created.
func (e *executor) WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error) {
	rows, err := e.read(ctx, qWebhookSecret,
		sql.Named("workspace", workspace), sql.Named("app_key", app), sql.Named("action_key", action))
	if err != nil {
		return "", false, err
	}
	return atMostOne(collect(rows, func(r *sql.Rows) (string, error) {
		var v string
		return v, r.Scan(&v)
	}))
}

// WebhookForget deletes the signatures seen before before.
func (e *executor) WebhookForget(ctx context.Context, before time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qWebhookForget, sql.Named("before", micros(before)))
		return translate(err)
	})
}

// WebhookSeen records signature as seen at now; ok is false for a replay.
// The one writer connection serializes duplicates.
func (e *executor) WebhookSeen(ctx context.Context, signature string, now time.Time) (bool, error) {
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qWebhookSeen, sql.Named("signature", signature), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}
