package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Complete finishes an owned job in one write transaction (on the pool,
// its own): the fenced delete of the queue row (finish.sql), the
// job_completed row, the runtime delete; its waiters are woken after the
// commit (driver.QueueExecutor).
func (e *executor) Complete(ctx context.Context, c driver.Completion) (spine.Status, error) {
	var status spine.Status
	err := e.write(ctx, func(w *writeTx) error {
		var werr error
		status, werr = w.finish(ctx, finishing{
			lease: c.Lease, status: c.Status, result: c.Result, errText: c.Error, now: resolveNow(c.Now),
		})
		return werr
	})
	return status, err
}

// LockLease reads an owned job's attempt, cancel mark and retry policy
// (lock_lease.sql) on the writer, which no one else writes through until
// the transaction ends (driver.QueueExecutor).
func (e *executor) LockLease(ctx context.Context, l spine.Lease, now time.Time) (driver.LeaseState, error) {
	var st driver.LeaseState
	err := e.write(ctx, func(w *writeTx) error {
		var err error
		st, err = w.lockLease(ctx, l, now)
		return err
	})
	return st, err
}

// LockLeases is LockLease for each of ls (driver.QueueExecutor).
func (e *executor) LockLeases(ctx context.Context, ls []driver.LeaseAt) (map[spine.Lease]driver.LeaseState, error) {
	locked := make(map[spine.Lease]driver.LeaseState, len(ls))
	err := e.write(ctx, func(w *writeTx) error {
		for _, l := range ls {
			st, err := w.lockLease(ctx, l.Lease, l.Now)
			switch {
			case errors.Is(err, spine.ErrNotOwner):
			case err != nil:
				return fmt.Errorf("job %s: %w", l.JobID, err)
			default:
				locked[l.Lease] = st
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return locked, nil
}

func (w *writeTx) lockLease(ctx context.Context, l spine.Lease, now time.Time) (driver.LeaseState, error) {
	var st driver.LeaseState
	var backoffMS int64
	err := w.queryRow(ctx, qLockLease, sql.Named("id", l.JobID), sql.Named("token", l.ClaimToken)).
		Scan(&st.Attempt, &st.Canceled, &st.Retry.MaxAttempts, &backoffMS, &st.Retry.Factor)
	if errors.Is(err, sql.ErrNoRows) {
		return st, spine.ErrNotOwner
	}
	if err != nil {
		return st, fmt.Errorf("read attempt: %w", err)
	}
	st.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	st.Now = resolveNow(now)
	return st, nil
}

// Requeue puts an owned, unmarked job back to waiting (requeue.sql),
// deletes its runtime row and wakes its tag after the commit
// (driver.QueueExecutor).
func (e *executor) Requeue(ctx context.Context, r driver.Requeue) error {
	return e.write(ctx, func(w *writeTx) error { return w.requeue(ctx, r) })
}

func (w *writeTx) requeue(ctx context.Context, r driver.Requeue) error {
	var tag string
	err := w.queryRow(ctx, qRequeue,
		sql.Named("id", r.JobID), sql.Named("token", r.ClaimToken),
		sql.Named("attempt_step", r.AttemptStep), sql.Named("last_error", textArg(r.LastError)),
		sql.Named("scheduled_for", micros(resolveNow(r.ScheduledFor))),
	).Scan(&tag)
	if errors.Is(err, sql.ErrNoRows) {
		return spine.ErrNotOwner
	}
	if err != nil {
		return fmt.Errorf("requeue: %w", translate(err))
	}
	if err := w.deleteRuntime(ctx, r.Lease); err != nil {
		return err
	}
	w.wake(tag)
	return nil
}

// WriteFailures writes each of fs in turn: a retry as Requeue, the end as
// Complete with failure (driver.QueueExecutor).
func (e *executor) WriteFailures(ctx context.Context, fs []driver.Failure) ([]spine.Status, error) {
	statuses := make([]spine.Status, len(fs))
	err := e.write(ctx, func(w *writeTx) error {
		for k, f := range fs {
			var err error
			if f.Retry {
				err = w.requeue(ctx, driver.Requeue{Lease: f.Lease, AttemptStep: 1, LastError: f.Error, ScheduledFor: f.At})
			} else {
				statuses[k], err = w.finish(ctx, finishing{
					lease: f.Lease, status: spine.StatusFailure, errText: f.Error, now: resolveNow(f.At),
				})
			}
			if err != nil {
				return fmt.Errorf("job %s: %w", f.JobID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return statuses, nil
}

// finishing is a terminal completion by the job's owner.
type finishing struct {
	lease   spine.Lease
	status  spine.Status // wanted; canceled wins when the job is marked
	result  []byte
	errText string
	now     time.Time
}

// finish is the fenced terminal completion (invariant 5): delete the queue
// row only if the claim token still matches, record job_completed, delete
// the runtime row. A job carrying the cancel mark ends canceled whatever
// the owner reported (invariant 6): the mark is read by the fenced delete
// itself, so deciding it here costs no statement.
func (w *writeTx) finish(ctx context.Context, f finishing) (spine.Status, error) {
	var (
		workspace, tag, worker  string
		startedAt               int64
		attempt, restarts       int
		canceledBy, canceledWhy sql.NullString
	)
	err := w.queryRow(ctx, qFinish, sql.Named("id", f.lease.JobID), sql.Named("token", f.lease.ClaimToken)).
		Scan(&workspace, &tag, &startedAt, &worker, &attempt, &restarts, &canceledBy, &canceledWhy)
	if errors.Is(err, sql.ErrNoRows) {
		return "", spine.ErrNotOwner
	}
	if err != nil {
		return "", fmt.Errorf("remove queue row: %w", err)
	}
	status := f.status
	if canceledBy.Valid {
		status = spine.StatusCanceled
	}
	completedAt := micros(f.now)
	if _, err := w.exec(ctx, qFinishInsert,
		sql.Named("id", f.lease.JobID),
		sql.Named("workspace", workspace),
		sql.Named("tag", tag),
		sql.Named("status", string(status)),
		sql.Named("result", jsonArg(f.result)),
		sql.Named("error", textArg(f.errText)),
		sql.Named("started_at", startedAt),
		sql.Named("completed_at", completedAt),
		sql.Named("duration_ms", max(0, (completedAt-startedAt)/1000)),
		sql.Named("worker", worker),
		sql.Named("attempt", attempt),
		sql.Named("restarts", restarts),
		sql.Named("canceled_by", canceledBy),
		sql.Named("canceled_reason", canceledWhy),
	); err != nil {
		return "", fmt.Errorf("record completion: %w", translate(err))
	}
	if err := w.deleteRuntime(ctx, f.lease); err != nil {
		return "", err
	}
	if err := w.jobGroupEvents(ctx, events.Finished(status), oneWorkspace(workspace, f.lease.JobID), completedAt); err != nil {
		return "", err
	}
	w.finished(f.lease.JobID)
	return status, nil
}

func (w *writeTx) deleteRuntime(ctx context.Context, l spine.Lease) error {
	if _, err := w.exec(ctx, qRuntimeDelete, sql.Named("id", l.JobID)); err != nil {
		return fmt.Errorf("delete runtime row: %w", err)
	}
	return nil
}
