package store

import (
	"context"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// PutWebhookSecret creates or rotates the secret of an action;
// catalog.ErrNotFound when the catalog has no such action. The old
// secret stops working the moment this commits.
func (s *Store) PutWebhookSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) error {
	ok, err := s.ex.WebhookPutSecret(ctx, workspace, app, action, secret, now)
	if err != nil {
		return fmt.Errorf("put webhook secret of %s/%s: %w", app, action, err)
	}
	if !ok {
		return fmt.Errorf("put webhook secret: %w", catalog.NotFound(workspace, app, action))
	}
	return nil
}

// WebhookSecret returns an action's secret; ok is false when none was
// created.
func (s *Store) WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error) {
	secret, ok, err := s.ex.WebhookSecret(ctx, workspace, app, action)
	if err != nil {
		return "", false, fmt.Errorf("read webhook secret of %s/%s: %w", app, action, err)
	}
	return secret, ok, nil
}

// EnqueueWebhook records signature as seen at now and enqueues r through
// the one enqueue path, in one transaction, after deleting signatures seen
// before forgetBefore. A signature already recorded is spine.ErrConflict;
// a refused enqueue rolls the record back, so a corrected retry (new
// timestamp, new signature) is unaffected.
func (s *Store) EnqueueWebhook(ctx context.Context, signature string, now, forgetBefore time.Time, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	var res spine.EnqueueResult
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		if err := ex.WebhookForget(ctx, forgetBefore); err != nil {
			return fmt.Errorf("forget old webhook signatures: %w", err)
		}
		ok, err := ex.WebhookSeen(ctx, signature, now)
		if err != nil {
			return fmt.Errorf("record webhook signature: %w", err)
		}
		if !ok {
			return fmt.Errorf("record webhook signature: %w: this signature was already used (replay)", spine.ErrConflict)
		}
		res, err = s.enqueueAction(ctx, ex, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}
