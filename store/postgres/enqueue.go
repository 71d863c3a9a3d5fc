package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/windforce/windforce/spine"
)

// querier is what the pool and a transaction share, so one enqueue path
// serves Enqueue, EnqueueBatch and a caller's own transaction (EnqueueTx).
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// coalesceTries bounds the update-or-insert loop of a coalesced enqueue.
// Each turn that fails to do either lost a race to a claim or to another
// enqueue that both committed, so a handful of turns is plenty.
const coalesceTries = 8

// Enqueue inserts one job and wakes its tag, in one statement (one round
// trip) unless it coalesces (invariants 1 and 10).
func (s *Driver) Enqueue(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	// A zero now leaves Now and ScheduledFor zero: the SQL then uses the
	// database clock.
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job: %w", err)
	}
	res, err := s.enqueueOne(ctx, s.pool, p, true)
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job: %w", err)
	}
	return res, nil
}

// EnqueueTx enqueues one job inside the caller's transaction tx: the job
// exists, and its tag is notified, only if tx commits. tx must be at READ
// COMMITTED (the default) for coalescing to retry correctly.
func (s *Driver) EnqueueTx(ctx context.Context, tx pgx.Tx, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job in transaction: %w", err)
	}
	res, err := s.enqueueOne(ctx, tx, p, true)
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job in transaction: %w", err)
	}
	return res, nil
}

// EnqueueBatch enqueues all of ps in one transaction, or none, and wakes
// each distinct tag once. Jobs without a coalesce key go in one pipelined
// round trip.
func (s *Driver) EnqueueBatch(ctx context.Context, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	prepared := make([]spine.EnqueueParams, len(ps))
	for i, p := range ps {
		var err error
		if prepared[i], err = spine.PrepareEnqueue(p, time.Time{}); err != nil {
			return nil, fmt.Errorf("enqueue batch: job %d: %w", i, err)
		}
	}
	if len(prepared) == 0 {
		return nil, nil
	}
	var results []spine.EnqueueResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		results, err = s.enqueueAll(ctx, tx, prepared)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue batch: %w", err)
	}
	return results, nil
}

// enqueueAll runs the coalesced jobs one by one (each may need the
// update-or-insert loop), then inserts all the plain jobs in one statement
// and wakes each distinct tag once.
func (s *Driver) enqueueAll(ctx context.Context, tx pgx.Tx, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error) {
	results := make([]spine.EnqueueResult, len(ps))
	plain := make([]spine.EnqueueParams, 0, len(ps))
	var tags []string
	seen := map[string]bool{}
	for i, p := range ps {
		if !seen[p.Pin.Tag] {
			seen[p.Pin.Tag] = true
			tags = append(tags, p.Pin.Tag)
		}
		if p.CoalesceKey != "" {
			r, err := s.enqueueOne(ctx, tx, p, false)
			if err != nil {
				return nil, fmt.Errorf("job %d: %w", i, err)
			}
			results[i] = r
			continue
		}
		plain = append(plain, p)
		results[i] = spine.EnqueueResult{ID: p.ID, Generation: 1}
	}
	if err := s.insertBatch(ctx, tx, plain, tags); err != nil {
		return nil, fmt.Errorf("insert %d jobs: %w", len(plain), err)
	}
	return results, nil
}

// enqueueOne enqueues one prepared job on q. Without a coalesce key it is
// a single insert. With one it first folds the request into the waiting
// job holding the key; when there is none it inserts, and when the insert
// meets a job that appeared meanwhile (ON CONFLICT DO NOTHING), it tries
// the fold again.
func (s *Driver) enqueueOne(ctx context.Context, q querier, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, error) {
	if p.CoalesceKey == "" {
		res, _, err := s.insertJob(ctx, q, p, notify)
		return res, err
	}
	for range coalesceTries {
		res, ok, err := s.coalesceInto(ctx, q, p, notify)
		if err != nil || ok {
			return res, err
		}
		res, ok, err = s.insertJob(ctx, q, p, notify)
		if err != nil || ok {
			return res, err
		}
	}
	return spine.EnqueueResult{}, fmt.Errorf("%w: coalesce key %q kept changing hands; try again",
		spine.ErrConflict, p.CoalesceKey)
}

// insertJob inserts job and job_queue; ok is false when a waiting job
// already holds p's coalesce key.
func (s *Driver) insertJob(ctx context.Context, q querier, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	res := spine.EnqueueResult{}
	err := q.QueryRow(ctx, qEnqueue, insertArgs(p, s.channel, notify)).Scan(&res.ID, &res.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return res, false, nil
	}
	if err != nil {
		return res, false, translate(err)
	}
	return res, true, nil
}

// coalesceInto folds p into the waiting job holding its coalesce key; ok
// is false when no job waits with that key.
func (s *Driver) coalesceInto(ctx context.Context, q querier, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	res := spine.EnqueueResult{Coalesced: true}
	err := q.QueryRow(ctx, qEnqueueCoalesce, pgx.StrictNamedArgs{
		"workspace":    p.Workspace,
		"app_key":      p.Pin.AppKey,
		"action_key":   p.Pin.ActionKey,
		"coalesce_key": p.CoalesceKey,
		"input":        jsonArg(p.Input),
		"notify":       notify,
		"channel":      s.channel,
	}).Scan(&res.ID, &res.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.EnqueueResult{}, false, nil
	}
	if err != nil {
		return spine.EnqueueResult{}, false, translate(err)
	}
	return res, true, nil
}

// insertArgs are enqueue.sql's arguments for one prepared job.
func insertArgs(p spine.EnqueueParams, channel string, notify bool) pgx.StrictNamedArgs {
	var coalesceKey any
	if p.CoalesceKey != "" {
		coalesceKey = p.CoalesceKey
	}
	memory, pids, cpu := p.Pin.Limits.Columns()
	args := pgx.StrictNamedArgs{
		"id":             p.ID,
		"workspace":      p.Workspace,
		"trigger_kind":   string(p.TriggerKind),
		"trigger_ref":    p.TriggerRef,
		"created_by":     p.CreatedBy,
		"now":            timeArg(p.Now),
		"scheduled_for":  timeArg(p.ScheduledFor),
		"input":          jsonArg(p.Input),
		"git_source_id":  p.Pin.GitSourceID,
		"commit_sha":     p.Pin.CommitSHA,
		"app_key":        p.Pin.AppKey,
		"action_key":     p.Pin.ActionKey,
		"entrypoint":     p.Pin.Entrypoint,
		"runtime":        p.Pin.Runtime,
		"timeout_ms":     p.Pin.Timeout.Milliseconds(),
		"tag":            p.Pin.Tag,
		"priority":       p.Priority,
		"max_attempts":   p.Pin.Retry.MaxAttempts,
		"backoff_ms":     max(1, p.Pin.Retry.Backoff.Milliseconds()),
		"backoff_factor": p.Pin.Retry.Factor,
		"coalesce_key":   coalesceKey,
		"limit_memory":   memory,
		"limit_pids":     pids,
		"limit_cpu":      cpu,
		"notify":         notify,
		"channel":        channel,
	}
	schemaArgs(args, p.Pin.InputSchema, p.Pin.OutputSchema)
	return args
}
