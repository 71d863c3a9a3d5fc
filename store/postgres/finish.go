package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Complete runs complete.sql: the fenced terminal completion of Complete,
// Fail and Release, which also wakes the job's waiters on commit, in one
// round trip (driver.QueueExecutor).
func (e *executor) Complete(ctx context.Context, c driver.Completion) (spine.Status, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var got string
	err := e.q.QueryRow(ctx, qComplete,
		e.d.completeArgs(c.Lease, c.Status, jsonArg(c.Result), textArg(c.Error), timeArg(c.Now), true)).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", spine.ErrNotOwner
	}
	if err != nil {
		return "", translate(err)
	}
	return spine.Status(got), nil
}

// textArg passes an encoded job error, NULL for none.
func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// completeArgs are complete.sql's arguments; notify says whether the
// statement wakes the job's waiters itself.
func (s *Driver) completeArgs(l spine.Lease, status spine.Status, result, jobErr, now any, notify bool) namedArgs {
	return namedArgs{
		"job_id":       l.JobID,
		"claim_token":  l.ClaimToken,
		"status":       string(status),
		"result":       result,
		"error":        jobErr,
		"now":          now,
		"notify":       notify,
		"done_channel": s.doneChannel,
	}
}

// LockLease locks an owned job's queue row FOR UPDATE for the transaction
// (queries/lock_lease.sql), so a heartbeat in flight (FOR KEY SHARE) or a
// reaper is waited for; spine.ErrNotOwner when the lease is lost
// (driver.QueueExecutor).
func (e *executor) LockLease(ctx context.Context, l spine.Lease, now time.Time) (driver.LeaseState, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var (
		st          driver.LeaseState
		maxAttempts int
		backoffMS   int64
		factor      float64
	)
	err := e.q.QueryRow(ctx, qLockLease, namedArgs{
		"job_id": l.JobID, "claim_token": l.ClaimToken, "now": timeArg(now),
	}).Scan(&st.Attempt, &st.Canceled, &maxAttempts, &backoffMS, &factor, &st.Now)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, spine.ErrNotOwner
	}
	if err != nil {
		return st, translate(err)
	}
	st.Retry = retryPolicy(maxAttempts, backoffMS, factor)
	return st, nil
}

// Requeue runs requeue.sql under the caller's row lock, which also wakes
// the job's tag on commit (driver.QueueExecutor).
func (e *executor) Requeue(ctx context.Context, r driver.Requeue) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var id any
	err := e.q.QueryRow(ctx, qRequeue, e.d.requeueArgs(r)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ErrNotOwner
	}
	return translate(err)
}

// requeueArgs are requeue.sql's arguments.
func (s *Driver) requeueArgs(r driver.Requeue) namedArgs {
	return namedArgs{
		"job_id":        r.JobID,
		"claim_token":   r.ClaimToken,
		"attempt_step":  r.AttemptStep,
		"last_error":    textArg(r.LastError),
		"scheduled_for": timeArg(r.ScheduledFor),
		"channel":       s.channel,
	}
}
