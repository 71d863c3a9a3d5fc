package catalog

import (
	"context"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// EnqueueStore is what an Enqueuer needs of the database: the one enqueue
// path, and the job read that names a requeued job's trigger.
// The store core (package store) implements it.
type EnqueueStore interface {
	EnqueueAction(ctx context.Context, r EnqueueRequest) (spine.EnqueueResult, error)
	GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error)
	Requeuer
}

// Requeuer is the store side of a requeue: cancel a waiting job and
// enqueue its input again through the one enqueue path, in one
// transaction; the new job keeps the old one's trigger. The store core
// (package store) implements it.
type Requeuer interface {
	Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error)
}

// Counter counts one accepted enqueue, by the job's trigger and
// workspace; metrics.Metrics.JobEnqueued is one.
type Counter func(trigger spine.TriggerKind, workspace string)

// Enqueuer is how a windforce process (the API, the console) puts a job in
// the queue: the store's one enqueue path, then the work every enqueue
// shares, in one place so no caller can forget it. Today that is counting
// it (windforce_jobs_enqueued_total). The store stays a plain
// transaction; what is not the database's business lives here.
//
// A refused enqueue (unknown action, invalid input, a conflict) is not
// counted; an accepted one is counted once, also when it was coalesced
// into a waiting job (the request was accepted; a new job may not be).
type Enqueuer struct {
	Store EnqueueStore
	// Count is called after each accepted enqueue; nil counts nothing.
	Count Counter
}

// Enqueue runs r through the store's one enqueue path and counts it.
func (e *Enqueuer) Enqueue(ctx context.Context, r EnqueueRequest) (spine.EnqueueResult, error) {
	return e.Via(ctx, r, e.Store.EnqueueAction)
}

// Via runs r through enqueue, a store method that wraps the one enqueue
// path in a larger transaction (a signed webhook records its signature in
// the same one), and counts it like Enqueue.
func (e *Enqueuer) Via(ctx context.Context, r EnqueueRequest,
	enqueue func(context.Context, EnqueueRequest) (spine.EnqueueResult, error)) (spine.EnqueueResult, error) {
	res, err := enqueue(ctx, r)
	if err != nil {
		return res, err
	}
	e.count(r.TriggerKind, r.Workspace)
	return res, nil
}

// Requeue cancels the waiting job id and enqueues its input again (the
// store's Requeue), and counts the new job under its trigger, which is the
// old job's. The trigger is read after the requeue committed: a requeue
// the store refuses costs no read, and a failed read cannot undo a job
// already in the queue, so it is counted under trigger "unknown".
func (e *Enqueuer) Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error) {
	res, err := e.Store.Requeue(ctx, workspace, id, actor)
	if err != nil {
		return res, err
	}
	trigger := spine.TriggerKind("unknown")
	if j, err := e.Store.GetJob(ctx, workspace, res.ID); err == nil {
		trigger = j.TriggerKind
	}
	e.count(trigger, workspace)
	return res, nil
}

func (e *Enqueuer) count(trigger spine.TriggerKind, workspace string) {
	if e.Count != nil {
		e.Count(trigger, workspace)
	}
}
