package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/windforce/windforce/spine"
)

// querier is what the pool and a transaction share, so every operation
// runs on either (executor.q).
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// EnqueueInsert inserts one job and, with notify, wakes its tag, in one
// statement (queries/enqueue.sql): one round trip (driver.JobExecutor).
func (e *executor) EnqueueInsert(ctx context.Context, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	res := spine.EnqueueResult{}
	err := e.q.QueryRow(ctx, qEnqueue, insertArgs(p, e.d.channel, notify)).Scan(&res.ID, &res.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return res, false, nil
	}
	if err != nil {
		return res, false, translate(err)
	}
	return res, true, nil
}

// EnqueueCoalesce folds p into the waiting job holding its coalesce key
// and, with notify, wakes its tag, in one statement
// (queries/enqueue_coalesce.sql; driver.JobExecutor).
func (e *executor) EnqueueCoalesce(ctx context.Context, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	res := spine.EnqueueResult{Coalesced: true}
	err := e.q.QueryRow(ctx, qEnqueueCoalesce, pgx.StrictNamedArgs{
		"workspace":    p.Workspace,
		"app_key":      p.Pin.AppKey,
		"action_key":   p.Pin.ActionKey,
		"coalesce_key": p.CoalesceKey,
		"input":        jsonArg(p.Input),
		"notify":       notify,
		"channel":      e.d.channel,
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
