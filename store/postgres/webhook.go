package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// The webhook queries (queries/webhook_*.sql).
var (
	qWebhookPutSecret = mustQuery("webhook_put_secret")
	qWebhookSecret    = mustQuery("webhook_secret")
	qWebhookForget    = mustQuery("webhook_forget")
	qWebhookSeen      = mustQuery("webhook_seen")
)

// PutWebhookSecret creates or rotates the webhook secret of an action;
// catalog.ErrNotFound when the catalog has no such action.
func (s *Driver) PutWebhookSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, qWebhookPutSecret, pgx.StrictNamedArgs{
		"workspace": workspace, "app_key": app, "action_key": action, "secret": secret, "now": timeArg(now),
	})
	if err != nil {
		return fmt.Errorf("put webhook secret of %s/%s: %w", app, action, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("put webhook secret: %w", catalog.NotFound(workspace, app, action))
	}
	return nil
}

// WebhookSecret returns the webhook secret of an action; ok is false when
// none was created.
func (s *Driver) WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var secret string
	err := s.pool.QueryRow(ctx, qWebhookSecret, pgx.StrictNamedArgs{
		"workspace": workspace, "app_key": app, "action_key": action,
	}).Scan(&secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read webhook secret of %s/%s: %w", app, action, err)
	}
	return secret, true, nil
}

// EnqueueWebhook records signature as seen at now and enqueues r in one
// transaction, after deleting seen signatures older than forgetBefore. A
// signature seen before is spine.ErrConflict; a refused enqueue rolls the
// record back, so a corrected retry is not a replay.
func (s *Driver) EnqueueWebhook(ctx context.Context, signature string, now, forgetBefore time.Time, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var res spine.EnqueueResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qWebhookForget, pgx.StrictNamedArgs{"before": forgetBefore}); err != nil {
			return fmt.Errorf("forget old webhook signatures: %w", translate(err))
		}
		tag, err := tx.Exec(ctx, qWebhookSeen, pgx.StrictNamedArgs{"signature": signature, "now": timeArg(now)})
		if err != nil {
			return fmt.Errorf("record webhook signature: %w", translate(err))
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("record webhook signature: %w: this signature was already used (replay)", spine.ErrConflict)
		}
		res, err = s.EnqueueActionTx(ctx, tx, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}
