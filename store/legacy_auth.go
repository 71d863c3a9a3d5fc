package store

import (
	"context"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// legacyAuth is the part of the auth and webhook unit the driver still
// answers (transitional).
type legacyAuth interface {
	auth.Store
	PutWebhookSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) error
	WebhookSecret(ctx context.Context, workspace, app, action string) (string, bool, error)
	EnqueueWebhook(ctx context.Context, signature string, now, forgetBefore time.Time, r catalog.EnqueueRequest) (spine.EnqueueResult, error)
}
