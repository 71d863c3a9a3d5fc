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
	args := insertArgs(p, e.d.channel, notify)
	// Dispatch at enqueue (enqueue.sql): only a job that wakes workers
	// (EnqueueBatch wakes them once, at its end), has no coalesce key, and
	// is not inside a caller's transaction, which would hold the offer's
	// lock for as long as it lasts.
	args["dispatch"] = notify && p.CoalesceKey == "" && e.tx == nil
	args["dispatch_channel"] = e.d.dispatchChannel
	var err error
	if p.Unsynced && p.CoalesceKey == "" && e.tx == nil {
		err = e.enqueueUnsynced(ctx, args, &res)
	} else {
		err = e.q.QueryRow(ctx, qEnqueue, args).Scan(&res.ID, &res.Generation)
	}
	if errors.Is(err, pgx.ErrNoRows) && p.AtCommit {
		return res, false, spine.ErrStalePin
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return res, false, nil
	}
	if err != nil {
		return res, false, translate(err)
	}
	return res, true, nil
}

// enqueueUnsynced runs enqueue.sql in one batch after asyncCommit: the
// batch's implicit transaction commits without waiting for its WAL flush,
// which the claim's commit (or Sync) does later (spine.EnqueueParams.Unsynced).
// One round trip, as the plain insert.
func (e *executor) enqueueUnsynced(ctx context.Context, args namedArgs, res *spine.EnqueueResult) error {
	batch := &pgx.Batch{}
	batch.Queue(asyncCommit)
	batch.Queue(qEnqueue, args)
	results := e.q.SendBatch(ctx, batch)
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return err
	}
	if err := results.QueryRow().Scan(&res.ID, &res.Generation); err != nil {
		return err
	}
	// Close reads the batch's end: the commit of its implicit transaction.
	return results.Close()
}

// asyncCommit lets the rest of a batch's implicit transaction commit
// without waiting for the WAL flush.
const asyncCommit = "SET LOCAL synchronous_commit = off"

// Sync commits one transaction that writes a WAL record and so waits for
// the flush of all the WAL before it (driver.JobExecutor). A transaction
// that writes nothing (txid_current alone) commits without a flush;
// a transactional logical message is the smallest write there is, and it
// needs no table or privilege (wal_level replica is enough).
func (e *executor) Sync(ctx context.Context) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	if _, err := e.q.Exec(ctx, "SELECT pg_logical_emit_message(true, 'windforce', 'sync')"); err != nil {
		return translate(err)
	}
	return nil
}

// EnqueueCoalesce folds p into the waiting job holding its coalesce key
// and, with notify, wakes its tag, in one statement
// (queries/enqueue_coalesce.sql; driver.JobExecutor).
func (e *executor) EnqueueCoalesce(ctx context.Context, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	res := spine.EnqueueResult{Coalesced: true}
	args := coalesceArgs(p)
	args["input"], args["notify"], args["channel"] = jsonArg(p.Input), notify, e.d.channel
	err := e.q.QueryRow(ctx, qEnqueueCoalesce, args).Scan(&res.ID, &res.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.EnqueueResult{}, false, nil
	}
	if err != nil {
		return spine.EnqueueResult{}, false, translate(err)
	}
	return res, true, nil
}

// EnqueueCoalesceRelease takes p's coalesce key from the waiting job that
// holds it with another pin (queries/enqueue_coalesce_release.sql;
// driver.JobExecutor).
func (e *executor) EnqueueCoalesceRelease(ctx context.Context, p spine.EnqueueParams) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qEnqueueRelease, coalesceArgs(p))
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// coalesceArgs name p's coalesce scope and its pin, as enqueue.sql stores
// it, for enqueue_coalesce.sql and enqueue_coalesce_release.sql.
func coalesceArgs(p spine.EnqueueParams) namedArgs {
	memory, pids, cpu := p.Pin.Limits.Columns()
	return namedArgs{
		"workspace":          p.Workspace,
		"app_key":            p.Pin.AppKey,
		"action_key":         p.Pin.ActionKey,
		"coalesce_key":       p.CoalesceKey,
		"git_source_id":      p.Pin.GitSourceID,
		"commit_sha":         p.Pin.CommitSHA,
		"entrypoint":         p.Pin.Entrypoint,
		"runtime":            p.Pin.Runtime,
		"input_schema_hash":  schemaHash(p.Pin.InputSchema),
		"output_schema_hash": schemaHash(p.Pin.OutputSchema),
		"timeout_ms":         p.Pin.Timeout.Milliseconds(),
		"tag":                p.Pin.Tag,
		"max_attempts":       p.Pin.Retry.MaxAttempts,
		"backoff_ms":         max(1, p.Pin.Retry.Backoff.Milliseconds()),
		"backoff_factor":     p.Pin.Retry.Factor,
		"limit_memory":       memory,
		"limit_pids":         pids,
		"limit_cpu":          cpu,
		"env":                spine.EnvColumn(p.Pin.Env),
		"warm":               spine.WarmColumn(p.Pin.Warm),
	}
}

// insertArgs are enqueue.sql's arguments for one prepared job.
func insertArgs(p spine.EnqueueParams, channel string, notify bool) namedArgs {
	var coalesceKey any
	if p.CoalesceKey != "" {
		coalesceKey = p.CoalesceKey
	}
	memory, pids, cpu := p.Pin.Limits.Columns()
	args := namedArgs{
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
		"env":            spine.EnvColumn(p.Pin.Env),
		"warm":           spine.WarmColumn(p.Pin.Warm),
		"notify":         notify,
		"channel":        channel,
		"at_commit":      p.AtCommit,
	}
	schemaArgs(args, p.Pin.InputSchema, p.Pin.OutputSchema)
	return args
}
