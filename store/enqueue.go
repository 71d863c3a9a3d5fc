package store

import (
	"context"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// enqueueAction is the one enqueue path inside ex's transaction: resolve,
// validate, pin, insert and wake up. Schedules, webhooks and requeues call
// it so their own writes and the job commit together.
func (s *Store) enqueueAction(ctx context.Context, ex driver.Executor, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	return ex.LegacyEnqueueAction(ctx, r)
}
