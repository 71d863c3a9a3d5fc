package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// ReapLock locks the stale running jobs with SKIP LOCKED (reap_lock.sql).
func (e *executor) ReapLock(ctx context.Context, p driver.ReapLockParams) ([]driver.Zombie, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qReapLock, namedArgs{
		"now":               timeArg(p.Now),
		"zombie_timeout_ms": p.ZombieTimeout.Milliseconds(),
		"limit":             p.Limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.Zombie, error) {
		var z driver.Zombie
		err := row.Scan(&z.JobID, &z.ClaimToken, &z.Worker, &z.Restarts, &z.Canceled, &z.Ping)
		return z, err
	})
	return jobs, translate(err)
}

// ReapRequeue requeues the batch in one statement over its arrays
// (reap_requeue.sql), which notifies each distinct tag once.
func (e *executor) ReapRequeue(ctx context.Context, b driver.ReapBatch) ([]uuid.UUID, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	args := reapArgs(b)
	args["channel"] = e.d.channel
	rows, err := e.q.Query(ctx, qReapRequeue, args)
	if err != nil {
		return nil, translate(err)
	}
	requeued, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return requeued, translate(err)
}

// ReapFinish finishes the batch in one statement over its arrays
// (reap_finish.sql), which notifies the finished jobs' waiters.
func (e *executor) ReapFinish(ctx context.Context, b driver.ReapBatch) (failed, canceled []uuid.UUID, err error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	args := reapArgs(b)
	args["done_channel"] = e.d.doneChannel
	rows, err := e.q.Query(ctx, qReapFinish, args)
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var status string
		if err := rows.Scan(&id, &status); err != nil {
			return nil, nil, translate(err)
		}
		if spine.Status(status) == spine.StatusCanceled {
			canceled = append(canceled, id)
		} else {
			failed = append(failed, id)
		}
	}
	return failed, canceled, translate(rows.Err())
}

// reapArgs are the arguments reap_requeue.sql and reap_finish.sql share.
func reapArgs(b driver.ReapBatch) namedArgs {
	return namedArgs{
		"job_ids":           b.JobIDs,
		"claim_tokens":      b.ClaimTokens,
		"errors":            b.Errors,
		"now":               timeArg(b.Now),
		"zombie_timeout_ms": b.ZombieTimeout.Milliseconds(),
		"restart_limit":     b.RestartLimit,
	}
}
