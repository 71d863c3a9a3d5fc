package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// defaultReapLimit bounds a reaper pass whose Limit is not positive.
const defaultReapLimit = 1000

// Reap handles running jobs whose ping is older than the zombie timeout
// (invariant 4): canceled ones finish canceled; the others go back to
// waiting with restarts+1 while restarts+1 <= RestartLimit, else finish
// as failure with a reason. Every write repeats the full guard, so a job
// that completed or heartbeated meanwhile is left alone; concurrent
// reapers never handle one job twice.
//
// One transaction: ReapLock reads the stale jobs (SKIP LOCKED on
// Postgres, the one writer on SQLite), spine.ReapRule decides each one and
// writes its message here, in Go, and two set writes act on the batch,
// one statement each however many jobs there are.
func (s *Store) Reap(ctx context.Context, p spine.ReapParams) (spine.ReapResult, error) {
	if p.ZombieTimeout <= 0 {
		return spine.ReapResult{}, fmt.Errorf("reap: %w: zombie timeout %s is not positive", spine.ErrInvalid, p.ZombieTimeout)
	}
	if p.Limit <= 0 {
		p.Limit = defaultReapLimit
	}
	var res spine.ReapResult
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		zombies, err := ex.ReapLock(ctx, driver.ReapLockParams{
			Now: p.Now, ZombieTimeout: p.ZombieTimeout, Limit: p.Limit,
		})
		if err != nil || len(zombies) == 0 {
			return err
		}
		requeue, finish, err := reapBatches(zombies, p)
		if err != nil {
			return err
		}
		res, err = reapWrite(ctx, ex, requeue, finish)
		return err
	})
	if err != nil {
		return spine.ReapResult{}, fmt.Errorf("reap: %w", err)
	}
	return res, nil
}

// reapWrite runs the reaper's two writes, each only when it has jobs.
func reapWrite(ctx context.Context, ex driver.Executor, requeue, finish driver.ReapBatch) (spine.ReapResult, error) {
	var res spine.ReapResult
	var err error
	if len(requeue.JobIDs) > 0 {
		if res.Requeued, err = ex.ReapRequeue(ctx, requeue); err != nil {
			return res, err
		}
		// A restarted zombie tries again: the attempt its worker died in
		// ended without finishing the job.
		if err := jobEvents(ctx, ex, events.JobRetrying, requeue.Now, res.Requeued...); err != nil {
			return res, err
		}
	}
	if len(finish.JobIDs) > 0 {
		if res.Failed, res.Canceled, err = ex.ReapFinish(ctx, finish); err != nil {
			return res, err
		}
		if err := jobEvents(ctx, ex, events.JobFailed, finish.Now, res.Failed...); err != nil {
			return res, err
		}
		if err := jobEvents(ctx, ex, events.JobCanceled, finish.Now, res.Canceled...); err != nil {
			return res, err
		}
	}
	return res, nil
}

// reapNull is the Errors entry of a job that stores no job error (a
// cancel-marked one): JSON null, so that a cast to JSON can never fail.
const reapNull = "null"

// reapBatches splits the zombies by spine.ReapRule under p.RestartLimit
// into the batch to requeue and the batch to finish (failed or canceled),
// each job with the encoded job error the rule wrote for it.
func reapBatches(zombies []driver.Zombie, p spine.ReapParams) (requeue, finish driver.ReapBatch, err error) {
	guard := driver.ReapBatch{Now: p.Now, ZombieTimeout: p.ZombieTimeout, RestartLimit: max(p.RestartLimit, 0)}
	requeue, finish = guard, guard
	for _, z := range zombies {
		action, jobErr := spine.ReapRule(z.Zombie, p.RestartLimit)
		msg := reapNull
		if action != spine.ReapCancel {
			if msg, err = jobErr.Encode(); err != nil {
				return requeue, finish, fmt.Errorf("encode the reaper's error for job %s: %w", z.JobID, err)
			}
		}
		if action == spine.ReapRequeue {
			requeue.Add(z.Lease, msg)
		} else {
			finish.Add(z.Lease, msg)
		}
	}
	return requeue, finish, nil
}
