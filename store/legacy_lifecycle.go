package store

import (
	"context"
	"time"

	"github.com/windforce/windforce/spine"
)

// legacyLifecycle is the part of the lifecycle unit (cancel, reopen, reap,
// sweep, queue health) the driver still answers (transitional).
type legacyLifecycle interface {
	Cancel(ctx context.Context, p spine.CancelParams) (spine.CancelOutcome, error)
	Reopen(ctx context.Context, p spine.ReopenParams) error
	Reap(ctx context.Context, p spine.ReapParams) (spine.ReapResult, error)
	Sweep(ctx context.Context, p spine.SweepParams) (int, error)
	Health(ctx context.Context) ([]spine.TagHealth, error)
	SetZombieTimeout(ctx context.Context, d time.Duration) error
}
