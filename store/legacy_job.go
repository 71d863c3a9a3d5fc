package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// legacyJob is the part of the enqueue unit the driver still answers
// (transitional).
type legacyJob interface {
	Enqueue(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, error)
	EnqueueBatch(ctx context.Context, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error)
	EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error)
	Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error)
}

