package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// The webhook queries (queries/webhook_*.sql).
var (
	qWebhookPutSecret = mustQuery("webhook_put_secret")
	qWebhookSecret    = mustQuery("webhook_secret")
	qWebhookForget    = mustQuery("webhook_forget")
	qWebhookSeen      = mustQuery("webhook_seen")
)

// WebhookPutSecret creates or replaces the secret of an action in the
// catalog; ok is false when there is no such action.
func (e *executor) WebhookPutSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qWebhookPutSecret, namedArgs{
		"workspace": workspace, "app_key": app, "action_key": action, "secret": secret, "now": timeArg(now),
	})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// WebhookSecret reads the secret of an action; ok is false when none was
// created.
func (e *executor) WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var secret string
	err := e.q.QueryRow(ctx, qWebhookSecret, namedArgs{
		"workspace": workspace, "app_key": app, "action_key": action,
	}).Scan(&secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return secret, true, nil
}

// WebhookForget deletes a batch of the signatures seen before before.
func (e *executor) WebhookForget(ctx context.Context, before time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qWebhookForget, namedArgs{"before": before})
	return translate(err)
}

// WebhookSeen records signature as seen at now; ok is false for a replay.
func (e *executor) WebhookSeen(ctx context.Context, signature string, now time.Time) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qWebhookSeen, namedArgs{"signature": signature, "now": timeArg(now)})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}
