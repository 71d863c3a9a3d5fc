package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Enqueue inserts job and job_queue in one transaction and wakes the tag's
// workers after the commit (invariant 1). With a CoalesceKey a waiting job
// with the same key takes the request instead (invariant 10).
func (s *Driver) Enqueue(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	p, err := spine.PrepareEnqueue(p, resolveNow(p.Now))
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue: %w", err)
	}
	var res spine.EnqueueResult
	err = s.write(ctx, func(w *writeTx) error {
		var werr error
		res, werr = w.enqueue(ctx, p)
		return werr
	})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue: %w", err)
	}
	return res, nil
}

// EnqueueBatch enqueues every request in one transaction, all or none, with
// one wake-up per distinct tag after the commit. Every request is validated
// before anything is written.
func (s *Driver) EnqueueBatch(ctx context.Context, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error) {
	prepared := make([]spine.EnqueueParams, len(ps))
	for i, p := range ps {
		var err error
		if prepared[i], err = spine.PrepareEnqueue(p, resolveNow(p.Now)); err != nil {
			return nil, fmt.Errorf("enqueue batch: job %d: %w", i, err)
		}
	}
	results := make([]spine.EnqueueResult, len(ps))
	err := s.write(ctx, func(w *writeTx) error {
		for i, p := range prepared {
			res, err := w.enqueue(ctx, p)
			if err != nil {
				return fmt.Errorf("job %d: %w", i, err)
			}
			results[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue batch: %w", err)
	}
	return results, nil
}

// EnqueueTx enqueues inside the caller's transaction, for library users
// who write their own rows and the job atomically. In a transaction made by
// WithTx, the wake-up is sent after it commits (and not at all if it rolls
// back). In any other transaction the store cannot see the commit, so the
// wake-up is sent at once, before the job is visible; the worker that
// wakes finds nothing and its polling picks the job up on the next tick.
// tx must be a transaction on this store's writer: one WithTx gave, or one
// begun on DB().
func (s *Driver) EnqueueTx(ctx context.Context, tx *sql.Tx, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	p, err := spine.PrepareEnqueue(p, resolveNow(p.Now))
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue: %w", err)
	}
	w := s.registered(tx)
	foreign := w == nil
	if foreign {
		w = s.newWriteTx(tx)
	}
	res, err := w.enqueue(ctx, p)
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue: %w", err)
	}
	if foreign {
		w.notify()
	}
	return res, nil
}

// enqueue writes one prepared request and queues its wake-up.
func (w *writeTx) enqueue(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	if p.CoalesceKey != "" {
		res, ok, err := w.coalesce(ctx, p)
		if err != nil || ok {
			return res, err
		}
	}
	if err := w.insertJob(ctx, p); err != nil {
		return spine.EnqueueResult{}, err
	}
	w.wake(p.Pin.Tag)
	return spine.EnqueueResult{ID: p.ID, Generation: 1}, nil
}

// coalesce folds p into the waiting job with its coalesce key, if any. The
// one writer connection means no other transaction can insert that job
// between this update and the insert that follows a miss; the unique
// partial index still guards the rule.
func (w *writeTx) coalesce(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, bool, error) {
	var res spine.EnqueueResult
	err := w.queryRow(ctx, qEnqueueCoalesce,
		sql.Named("workspace", p.Workspace),
		sql.Named("app_key", p.Pin.AppKey),
		sql.Named("action_key", p.Pin.ActionKey),
		sql.Named("coalesce_key", p.CoalesceKey),
	).Scan(&res.ID, &res.Generation)
	if errors.Is(err, sql.ErrNoRows) {
		return res, false, nil
	}
	if err != nil {
		return res, false, fmt.Errorf("coalesce: %w", translate(err))
	}
	if _, err := w.exec(ctx, qEnqueueCoalesceInput,
		sql.Named("id", res.ID), sql.Named("input", string(p.Input))); err != nil {
		return res, false, fmt.Errorf("coalesce input: %w", translate(err))
	}
	res.Coalesced = true
	w.wake(p.Pin.Tag)
	return res, true, nil
}

// insertJob inserts the job row with its pin and its waiting queue row.
// The pin's schemas go to job_schema, once per content; the job row keeps
// their hashes.
func (w *writeTx) insertJob(ctx context.Context, p spine.EnqueueParams) error {
	pin := p.Pin
	createdAt := micros(resolveNow(p.Now))
	// The later of the job's time and the real clock: the job is created
	// before used_at + schemaTouch, and a backdated job still refreshes
	// the rows (pinned_schema.go).
	usedAt := max(createdAt, micros(time.Now()))
	inHash, err := w.pinSchema(ctx, pin.InputSchema, usedAt)
	if err != nil {
		return fmt.Errorf("insert job %s: %w", p.ID, err)
	}
	outHash, err := w.pinSchema(ctx, pin.OutputSchema, usedAt)
	if err != nil {
		return fmt.Errorf("insert job %s: %w", p.ID, err)
	}
	args := append([]any{
		sql.Named("id", p.ID),
		sql.Named("workspace", p.Workspace),
		sql.Named("trigger_kind", string(p.TriggerKind)),
		sql.Named("trigger_ref", p.TriggerRef),
		sql.Named("created_by", p.CreatedBy),
		sql.Named("created_at", createdAt),
		sql.Named("input", string(p.Input)),
		sql.Named("git_source_id", pin.GitSourceID),
		sql.Named("commit_sha", pin.CommitSHA),
		sql.Named("app_key", pin.AppKey),
		sql.Named("action_key", pin.ActionKey),
		sql.Named("entrypoint", pin.Entrypoint),
		sql.Named("runtime", pin.Runtime),
		sql.Named("input_schema_hash", inHash),
		sql.Named("output_schema_hash", outHash),
		sql.Named("timeout_ms", durationMS(pin.Timeout)),
		sql.Named("tag", pin.Tag),
		sql.Named("priority", p.Priority),
		sql.Named("max_attempts", pin.Retry.MaxAttempts),
		sql.Named("backoff_ms", durationMS(pin.Retry.Backoff)),
		sql.Named("backoff_factor", pin.Retry.Factor),
		sql.Named("coalesce_key", textArg(p.CoalesceKey)),
	}, limitArgs(pin.Limits)...)
	if _, err := w.exec(ctx, qEnqueueInsertJob, args...); err != nil {
		return fmt.Errorf("insert job %s: %w", p.ID, translate(err))
	}
	return w.insertQueue(ctx, queueRow{
		id: p.ID, workspace: p.Workspace, app: pin.AppKey, action: pin.ActionKey,
		tag: pin.Tag, priority: p.Priority, scheduledFor: resolveNow(p.ScheduledFor),
		coalesceKey: p.CoalesceKey,
	})
}

// queueRow is a fresh waiting job_queue row (enqueue, reopen).
type queueRow struct {
	id                     uuid.UUID
	workspace, app, action string
	tag                    string
	priority               int
	scheduledFor           time.Time
	coalesceKey            string
}

func (w *writeTx) insertQueue(ctx context.Context, r queueRow) error {
	if _, err := w.exec(ctx, qEnqueueInsertQueue,
		sql.Named("id", r.id),
		sql.Named("workspace", r.workspace),
		sql.Named("app_key", r.app),
		sql.Named("action_key", r.action),
		sql.Named("tag", r.tag),
		sql.Named("priority", r.priority),
		sql.Named("scheduled_for", micros(r.scheduledFor)),
		sql.Named("coalesce_key", textArg(r.coalesceKey)),
	); err != nil {
		return fmt.Errorf("insert queue row %s: %w", r.id, translate(err))
	}
	return nil
}
