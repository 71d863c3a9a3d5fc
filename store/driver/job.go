package driver

import (
	"context"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// JobExecutor enqueues and requeues jobs.
type JobExecutor interface {
	// LegacyEnqueueAction resolves, pins and inserts one job on this
	// executor (transitional: the core takes it over).
	LegacyEnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error)
}
