package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// The queue's hot path: claim, heartbeat, complete, fail and release. Each
// request is checked here, once, and then run as the driver's tuned
// statement (claim, heartbeat, complete and batch completion are one
// statement, so one round trip each). Fail and Release lock the lease,
// decide here (spine.FailRule: a retry with backoff, or the end; a cancel
// mark wins over a retry) and write, in one transaction. A lost lease is
// spine.ErrNotOwner, and nothing is written for it.
//
// A request may carry the job's log tail (the output its worker had not
// appended yet): it is appended in the same transaction, just before the
// outcome, so the outcome and the end of the logs are all-or-nothing. A
// request without a tail adds no statement: Complete and CompleteBatch
// stay one statement then.

// Claim takes up to p.Limit waiting jobs on p.Tags in one statement
// (invariant 2): highest priority first, then oldest scheduled_for. Each
// claimed job gets a fresh claim token and its first ping atomically, so
// a worker that dies before its first heartbeat is still reaped. Never
// returns more than p.Limit jobs; never the same job to two callers.
func (s *Store) Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error) {
	if p.Limit <= 0 {
		return nil, fmt.Errorf("claim jobs: %w: limit %d is not positive", spine.ErrInvalid, p.Limit)
	}
	// A repeated tag would count its rows twice against the limit.
	p.Tags = distinctTags(p.Tags)
	if len(p.Tags) == 0 {
		return nil, fmt.Errorf("claim jobs: %w: no tags", spine.ErrInvalid)
	}
	if p.Offer > 0 && p.Capacity < 1 {
		return nil, fmt.Errorf("claim jobs: %w: an offer needs a capacity, got %d", spine.ErrInvalid, p.Capacity)
	}
	jobs, err := s.ex.Claim(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return jobs, nil
}

// distinctTags drops empty and repeated tags, keeping the first order. A
// worker serves a handful of tags: a linear search beats a map.
func distinctTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Heartbeat renews the ping of every lease whose claim token still
// matches, in one statement, and returns those leases with their cancel
// mark (invariant 3). A lease missing from the result is lost. A lease
// named twice is renewed and returned once.
func (s *Store) Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error) {
	if len(p.Leases) == 0 {
		return nil, nil
	}
	owned, err := s.ex.Heartbeat(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	return owned, nil
}

// Complete finishes an owned job in one transaction: the fenced delete
// from job_queue, the job_completed row, the job_runtime delete
// (invariant 5). A job marked canceled completes as canceled (invariant
// 6). ErrNotOwner when the token no longer matches; nothing is written.
func (s *Store) Complete(ctx context.Context, p spine.CompleteParams) (spine.Status, error) {
	result, err := spine.CheckResult(p.Result)
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	c := driver.Completion{Lease: p.Lease, Status: spine.StatusSuccess, Result: result, Now: p.Now}
	var status spine.Status
	if p.LogTail == "" {
		status, err = s.ex.Complete(ctx, c)
	} else {
		err = s.ex.Tx(ctx, func(ex driver.Executor) error {
			if err := appendTail(ctx, ex, p.Lease, p.LogTail, p.Now); err != nil {
				return err
			}
			status, err = ex.Complete(ctx, c)
			return err
		})
	}
	if err != nil {
		return "", fmt.Errorf("complete job %s: %w", p.JobID, err)
	}
	return status, nil
}

// CompleteBatch completes many owned jobs at once (one statement on
// Postgres, one transaction on SQLite), each exactly as Complete would:
// fenced on its own claim token and all-or-nothing per job. A lease that
// is lost (or a result that is refused) does not block the others: its
// outcome carries ErrNotOwner (or ErrInvalid) and nothing is written for
// it. Outcomes come in the order of ps. The error is for the batch as a
// whole (the database failed): then nothing at all was written.
func (s *Store) CompleteBatch(ctx context.Context, ps []spine.CompleteParams) ([]spine.CompleteOutcome, error) {
	plan := spine.PlanCompleteBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	// The driver appends each job's log tail with its completion, fenced
	// the same way (one statement on Postgres): a lost job gets neither.
	statuses, err := s.ex.CompleteBatch(ctx, completions(ps, plan, plan.Todo))
	if err != nil {
		return nil, fmt.Errorf("complete batch of %d jobs: %w", len(plan.Todo), err)
	}
	setStatuses(ps, plan, plan.Todo, statuses)
	return plan.Outcomes, nil
}

// completions are the requests of ps at idx as the driver writes them:
// with their checked results and their log tails as text a column stores.
func completions(ps []spine.CompleteParams, plan spine.CompleteBatchPlan, idx []int) []spine.CompleteParams {
	cs := make([]spine.CompleteParams, len(idx))
	for k, i := range idx {
		cs[k] = spine.CompleteParams{Lease: ps[i].Lease, Result: plan.Results[i], LogTail: spine.SafeText(ps[i].LogTail), Now: ps[i].Now}
	}
	return cs
}

// setStatuses records the driver's statuses of the requests at idx; an
// empty status is a lost lease.
func setStatuses(ps []spine.CompleteParams, plan spine.CompleteBatchPlan, idx []int, statuses []spine.Status) {
	for k, i := range idx {
		if statuses[k] == "" {
			plan.Outcomes[i].Err = fmt.Errorf("complete job %s: %w", ps[i].JobID, spine.ErrNotOwner)
			continue
		}
		plan.Outcomes[i] = spine.CompleteOutcome{JobID: ps[i].JobID, Status: statuses[k]}
	}
}

// appendTail appends a job's log tail inside the transaction of its
// outcome, fenced on its lease (spine.ErrNotOwner when lost). On Postgres
// the append locks the job's queue row until the commit, so the outcome
// written after it finds the lease still held. An empty tail is no
// statement.
func appendTail(ctx context.Context, ex driver.Executor, l spine.Lease, tail string, now time.Time) error {
	if tail == "" {
		return nil
	}
	return ex.AppendLog(ctx, spine.AppendLogParams{Lease: l, Data: spine.SafeText(tail), Now: now})
}

// Fail records a failed attempt of an owned job, fenced like Complete.
// With attempts left the job goes back to waiting with attempt+1 and
// scheduled_for = now + backoff (exponential with jitter); otherwise it
// finishes as failure. A canceled mark wins over a retry.
func (s *Store) Fail(ctx context.Context, p spine.FailParams) (spine.FailOutcome, error) {
	jobErr, err := p.Error.Encode()
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	var out spine.FailOutcome
	err = s.ex.Tx(ctx, func(ex driver.Executor) error {
		st, err := ex.LockLease(ctx, p.Lease, p.Now)
		if err != nil {
			return err
		}
		if err := appendTail(ctx, ex, p.Lease, p.LogTail, st.Now); err != nil {
			return err
		}
		if at, retry := retryAt(st); retry {
			out = spine.FailOutcome{Retried: true, NextAttempt: st.Attempt + 1, ScheduledFor: at}
			if err := ex.Requeue(ctx, driver.Requeue{Lease: p.Lease, AttemptStep: 1, LastError: jobErr, ScheduledFor: at}); err != nil {
				return err
			}
			return jobEvents(ctx, ex, events.JobRetrying, st.Now, p.JobID)
		}
		status, err := ex.Complete(ctx, driver.Completion{
			Lease: p.Lease, Status: spine.StatusFailure, Error: jobErr, Now: st.Now,
		})
		out = spine.FailOutcome{Status: status}
		return err
	})
	if err != nil {
		return spine.FailOutcome{}, fmt.Errorf("fail job %s: %w", p.JobID, err)
	}
	return out, nil
}

// retryAt applies spine.FailRule to a locked lease; the retry time is
// truncated to the microsecond both databases store, so the outcome says
// what a read of the job gives back.
func retryAt(st driver.LeaseState) (time.Time, bool) {
	at, retry := spine.FailRule(st.Retry, st.Attempt, st.Canceled, st.Now)
	if !retry {
		return time.Time{}, false
	}
	return at.UTC().Truncate(time.Microsecond), true
}

// FailBatch records many failed attempts in one transaction (one
// commit), each exactly as Fail would and fenced on its own claim
// token. A lost lease or an error that cannot be stored gets its Err in
// its outcome and does not hold back the others.
func (s *Store) FailBatch(ctx context.Context, ps []spine.FailParams) ([]spine.FailBatchOutcome, error) {
	plan := spine.PlanFailBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		ls := make([]driver.LeaseAt, len(plan.Todo))
		for k, i := range plan.Todo {
			ls[k] = driver.LeaseAt{Lease: ps[i].Lease, Now: ps[i].Now}
		}
		locked, err := ex.LockLeases(ctx, ls)
		if err != nil {
			return err
		}
		fs := make([]driver.Failure, 0, len(plan.Todo))
		written := make([]int, 0, len(plan.Todo))
		for _, i := range plan.Todo {
			p := ps[i]
			st, ok := locked[p.Lease]
			if !ok {
				plan.Outcomes[i].Err = fmt.Errorf("fail job %s: %w", p.JobID, spine.ErrNotOwner)
				continue
			}
			if err := appendTail(ctx, ex, p.Lease, p.LogTail, st.Now); err != nil {
				return fmt.Errorf("job %s: %w", p.JobID, err)
			}
			f := driver.Failure{Lease: p.Lease, At: st.Now, Error: plan.Errors[i]}
			if at, retry := retryAt(st); retry {
				f.Retry, f.At = true, at
				plan.Outcomes[i].FailOutcome = spine.FailOutcome{Retried: true, NextAttempt: st.Attempt + 1, ScheduledFor: at}
			}
			fs = append(fs, f)
			written = append(written, i)
		}
		if len(fs) == 0 {
			return nil
		}
		statuses, err := ex.WriteFailures(ctx, fs)
		if err != nil {
			return err
		}
		// The finished ones wrote their events; the retried ones' go in
		// one statement more for the whole batch.
		var retried []uuid.UUID
		for k, i := range written {
			if fs[k].Retry {
				retried = append(retried, fs[k].JobID)
			} else {
				plan.Outcomes[i].Status = statuses[k]
			}
		}
		return jobEvents(ctx, ex, events.JobRetrying, time.Time{}, retried...)
	})
	if err != nil {
		return nil, fmt.Errorf("fail batch of %d jobs: %w", len(plan.Todo), err)
	}
	return plan.Outcomes, nil
}

// Release gives an owned job back to the queue without charging an
// attempt or a restart (a worker draining on shutdown). A job marked
// canceled is finished canceled instead.
func (s *Store) Release(ctx context.Context, p spine.ReleaseParams) error {
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		st, err := ex.LockLease(ctx, p.Lease, p.Now)
		if err != nil {
			return err
		}
		if err := appendTail(ctx, ex, p.Lease, p.LogTail, st.Now); err != nil {
			return err
		}
		if st.Canceled {
			_, err := ex.Complete(ctx, driver.Completion{Lease: p.Lease, Status: spine.StatusCanceled, Now: st.Now})
			return err
		}
		if err := ex.Requeue(ctx, driver.Requeue{Lease: p.Lease, ScheduledFor: st.Now}); err != nil {
			return err
		}
		// The job waits again with its attempt uncharged: to a receiver it
		// is queued, as after its enqueue (docs/EVENTS.md).
		return jobEvents(ctx, ex, events.JobQueued, st.Now, p.JobID)
	})
	if err != nil {
		return fmt.Errorf("release job %s: %w", p.JobID, err)
	}
	return nil
}
