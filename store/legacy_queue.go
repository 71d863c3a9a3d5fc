package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// legacyQueue is the part of the queue unit the driver still answers
// (transitional).
type legacyQueue interface {
	Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error)
	Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error)
	Complete(ctx context.Context, p spine.CompleteParams) (spine.Status, error)
	CompleteBatch(ctx context.Context, ps []spine.CompleteParams) ([]spine.CompleteOutcome, error)
	Fail(ctx context.Context, p spine.FailParams) (spine.FailOutcome, error)
	FailBatch(ctx context.Context, ps []spine.FailParams) ([]spine.FailBatchOutcome, error)
	Release(ctx context.Context, p spine.ReleaseParams) error
	GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error)
	AppendLog(ctx context.Context, p spine.AppendLogParams) error
	Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]spine.LogChunk, error)
	Audit(ctx context.Context, jobID uuid.UUID) ([]spine.AuditEntry, error)
	spine.Lister
}
