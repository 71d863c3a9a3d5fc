package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Complete finishes an owned job with success (or canceled when it carries
// the cancel mark) in one statement, so one round trip (invariant 5; see
// queries/complete.sql).
func (s *Driver) Complete(ctx context.Context, p spine.CompleteParams) (spine.Status, error) {
	result, err := spine.CheckResult(p.Result)
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	status, err := s.finish(ctx, s.pool, p.Lease, spine.StatusSuccess, jsonArg(result), nil, p.Now)
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	return status, nil
}

// finish runs complete.sql: the fenced terminal completion shared by
// Complete, Fail and Release, which also wakes the job's waiters on
// commit. ErrNotOwner when the lease is lost.
func (s *Driver) finish(ctx context.Context, q querier, l spine.Lease, status spine.Status, result, jobErr any, now time.Time) (spine.Status, error) {
	var got string
	err := q.QueryRow(ctx, qComplete, s.completeArgs(l, status, result, jobErr, timeArg(now), true)).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", spine.ErrNotOwner
	}
	if err != nil {
		return "", translate(err)
	}
	return spine.Status(got), nil
}

// completeArgs are complete.sql's arguments; notify says whether the
// statement wakes the job's waiters itself.
func (s *Driver) completeArgs(l spine.Lease, status spine.Status, result, jobErr, now any, notify bool) pgx.StrictNamedArgs {
	return pgx.StrictNamedArgs{
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

// leaseState is what Fail and Release read under the row lock.
type leaseState struct {
	attempt  int
	canceled bool
	policy   spine.RetryPolicy
	now      time.Time
}

// lockLease locks an owned job's queue row for the transaction; ErrNotOwner
// when the lease is lost.
func lockLease(ctx context.Context, tx pgx.Tx, l spine.Lease, now time.Time) (leaseState, error) {
	var (
		st          leaseState
		maxAttempts int
		backoffMS   int64
		factor      float64
	)
	err := tx.QueryRow(ctx, qLockLease, pgx.StrictNamedArgs{
		"job_id": l.JobID, "claim_token": l.ClaimToken, "now": timeArg(now),
	}).Scan(&st.attempt, &st.canceled, &maxAttempts, &backoffMS, &factor, &st.now)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, spine.ErrNotOwner
	}
	if err != nil {
		return st, translate(err)
	}
	st.policy = retryPolicy(maxAttempts, backoffMS, factor)
	return st, nil
}

// Fail records a failed attempt of an owned job. Under the row lock it
// decides with spine.NextRetry on the pinned policy: back to waiting with
// attempt+1 at the retry time, or finished as failure (canceled when
// marked: a cancel mark wins over a retry).
func (s *Driver) Fail(ctx context.Context, p spine.FailParams) (spine.FailOutcome, error) {
	jobErr, err := p.Error.Encode()
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var out spine.FailOutcome
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		out, err = s.failLocked(ctx, tx, p.Lease, jobErr, p.Now)
		return err
	})
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	return out, nil
}

// failLocked records one failed attempt inside tx: it locks the lease's
// row, then retries or finishes the job. ErrNotOwner (nothing written) when
// the lease is lost.
func (s *Driver) failLocked(ctx context.Context, tx pgx.Tx, l spine.Lease, jobErr string, now time.Time) (spine.FailOutcome, error) {
	st, err := lockLease(ctx, tx, l, now)
	if err != nil {
		return spine.FailOutcome{}, err
	}
	if at, retry := spine.NextRetry(st.policy, st.attempt, st.now); retry && !st.canceled {
		at = at.UTC().Truncate(time.Microsecond)
		out := spine.FailOutcome{Retried: true, NextAttempt: st.attempt + 1, ScheduledFor: at}
		return out, s.requeue(ctx, tx, l, 1, jobErr, at)
	}
	status, err := s.finish(ctx, tx, l, spine.StatusFailure, nil, jobErr, st.now)
	return spine.FailOutcome{Status: status}, err
}

// Release gives an owned job back to the queue without charging an
// attempt or a restart; a cancel-marked job is finished canceled instead.
func (s *Driver) Release(ctx context.Context, p spine.ReleaseParams) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		st, err := lockLease(ctx, tx, p.Lease, p.Now)
		if err != nil {
			return err
		}
		if st.canceled {
			_, err := s.finish(ctx, tx, p.Lease, spine.StatusCanceled, nil, nil, st.now)
			return err
		}
		return s.requeue(ctx, tx, p.Lease, 0, nil, st.now)
	})
	if err != nil {
		return fmt.Errorf("release job %s: %w", p.JobID, err)
	}
	return nil
}

// requeue runs requeue.sql under the caller's row lock.
func (s *Driver) requeue(ctx context.Context, tx pgx.Tx, l spine.Lease, attemptStep int, lastError any, at time.Time) error {
	var id any
	err := tx.QueryRow(ctx, qRequeue, pgx.StrictNamedArgs{
		"job_id":        l.JobID,
		"claim_token":   l.ClaimToken,
		"attempt_step":  attemptStep,
		"last_error":    lastError,
		"scheduled_for": timeArg(at),
		"channel":       s.channel,
	}).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ErrNotOwner
	}
	return translate(err)
}
