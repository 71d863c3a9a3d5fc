package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
)

// Complete finishes an owned job with its result in one transaction
// (invariant 5): the fenced delete of the queue row, the job_completed row,
// the runtime delete. A job carrying the cancel mark completes canceled.
func (s *Driver) Complete(ctx context.Context, p spine.CompleteParams) (spine.Status, error) {
	result, err := spine.CheckResult(p.Result)
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	var status spine.Status
	err = s.write(ctx, func(w *writeTx) error {
		var werr error
		status, werr = w.finish(ctx, finishing{
			lease: p.Lease, status: spine.StatusSuccess, result: result, now: resolveNow(p.Now),
		})
		return werr
	})
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	return status, nil
}

// Fail records a failed attempt of an owned job. With attempts left under
// the pinned policy, and no cancel mark, the job waits again for attempt+1
// at the retry time; otherwise it finishes failure (canceled when marked).
func (s *Driver) Fail(ctx context.Context, p spine.FailParams) (spine.FailOutcome, error) {
	errText, err := p.Error.Encode()
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	now := resolveNow(p.Now)
	var out spine.FailOutcome
	err = s.write(ctx, func(w *writeTx) error {
		var werr error
		out, werr = w.fail(ctx, p.Lease, errText, now)
		return werr
	})
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	return out, nil
}

// FailBatch records many failed attempts in one write transaction, each as
// Fail would (see spine.Store); a lost lease writes nothing and the others
// go on.
func (s *Driver) FailBatch(ctx context.Context, ps []spine.FailParams) ([]spine.FailBatchOutcome, error) {
	plan := spine.PlanFailBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	err := s.write(ctx, func(w *writeTx) error {
		return plan.Write(ps, func(p spine.FailParams, jobErr string) (spine.FailOutcome, error) {
			return w.fail(ctx, p.Lease, jobErr, resolveNow(p.Now))
		})
	})
	if err != nil {
		return nil, fmt.Errorf("fail batch of %d jobs: %w", len(plan.Todo), err)
	}
	return plan.Outcomes, nil
}

func (w *writeTx) fail(ctx context.Context, l spine.Lease, errText string, now time.Time) (spine.FailOutcome, error) {
	var attempt int
	var marked bool
	var policy spine.RetryPolicy
	var backoffMS int64
	err := w.queryRow(ctx, qFailRead, sql.Named("id", l.JobID), sql.Named("token", l.ClaimToken)).
		Scan(&attempt, &marked, &policy.MaxAttempts, &backoffMS, &policy.Factor)
	if errors.Is(err, sql.ErrNoRows) {
		return spine.FailOutcome{}, notOwner(l)
	}
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("read attempt: %w", err)
	}
	policy.Backoff = time.Duration(backoffMS) * time.Millisecond
	if at, retry := spine.NextRetry(policy, attempt, now); retry && !marked {
		return w.retry(ctx, l, errText, resolveNow(at))
	}
	status, err := w.finish(ctx, finishing{lease: l, status: spine.StatusFailure, errText: errText, now: now})
	if err != nil {
		return spine.FailOutcome{}, err
	}
	return spine.FailOutcome{Status: status}, nil
}

// retry puts a failed attempt back to waiting, fenced, and wakes its tag.
func (w *writeTx) retry(ctx context.Context, l spine.Lease, errText string, at time.Time) (spine.FailOutcome, error) {
	var next int
	var tag string
	err := w.queryRow(ctx, qFailRetry,
		sql.Named("id", l.JobID), sql.Named("token", l.ClaimToken),
		sql.Named("error", errText), sql.Named("scheduled_for", micros(at)),
	).Scan(&next, &tag)
	if errors.Is(err, sql.ErrNoRows) {
		return spine.FailOutcome{}, notOwner(l)
	}
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("schedule retry: %w", translate(err))
	}
	if err := w.deleteRuntime(ctx, l); err != nil {
		return spine.FailOutcome{}, err
	}
	w.wake(tag)
	return spine.FailOutcome{Retried: true, NextAttempt: next, ScheduledFor: at}, nil
}

// Release gives an owned job back to waiting without charging an attempt
// or a restart. A job carrying the cancel mark is finished canceled.
func (s *Driver) Release(ctx context.Context, p spine.ReleaseParams) error {
	now := resolveNow(p.Now)
	err := s.write(ctx, func(w *writeTx) error {
		var tag string
		err := w.queryRow(ctx, qRelease,
			sql.Named("id", p.JobID), sql.Named("token", p.ClaimToken), sql.Named("now", micros(now)),
		).Scan(&tag)
		if errors.Is(err, sql.ErrNoRows) {
			// Not owned, or marked canceled: finish (fenced) decides which.
			_, err = w.finish(ctx, finishing{lease: p.Lease, status: spine.StatusCanceled, now: now})
			return err
		}
		if err != nil {
			return fmt.Errorf("requeue: %w", err)
		}
		if err := w.deleteRuntime(ctx, p.Lease); err != nil {
			return err
		}
		w.wake(tag)
		return nil
	})
	if err != nil {
		return fmt.Errorf("release job %s: %w", p.JobID, err)
	}
	return nil
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
// the owner reported (invariant 6).
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
		return "", notOwner(f.lease)
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
	w.finished(f.lease.JobID)
	return status, nil
}

func (w *writeTx) deleteRuntime(ctx context.Context, l spine.Lease) error {
	if _, err := w.exec(ctx, qRuntimeDelete, sql.Named("id", l.JobID)); err != nil {
		return fmt.Errorf("delete runtime row: %w", err)
	}
	return nil
}

// notOwner is the error of a fenced write whose claim token no longer
// matches: the caller must stop and write nothing more.
func notOwner(l spine.Lease) error {
	return fmt.Errorf("%w (claim token %s)", spine.ErrNotOwner, l.ClaimToken)
}
