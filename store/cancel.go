package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// unknownActor names who canceled, reopened or requeued when the caller
// did not say.
const unknownActor = "unknown"

// Cancel finishes a waiting job as canceled at once, or marks a running
// one for its worker to stop (invariant 6). ErrConflict for a finished
// job, ErrNotFound for an unknown one. Audited.
//
// The job is locked (CancelLock) and spine.CancelRule decides from the
// status read under that lock, in the transaction that writes and audits,
// so a cancel racing a completion either finds the job live and acts, or
// finds it finished and answers the rule's conflict.
func (s *Store) Cancel(ctx context.Context, p spine.CancelParams) (spine.CancelOutcome, error) {
	if p.By == "" {
		p.By = unknownActor
	}
	var out spine.CancelOutcome
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		status, err := ex.CancelLock(ctx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		action, err := spine.CancelRule(status)
		if err != nil {
			return err
		}
		if action == spine.CancelMark {
			// The mark only: the job ends (and its waiters wake) when its
			// worker completes it canceled, or the reaper does.
			out.Status = spine.StatusRunning
			return ex.CancelMark(ctx, p)
		}
		out.Status = spine.StatusCanceled
		if err := ex.CancelWaiting(ctx, p); err != nil {
			return err
		}
		return jobEvents(ctx, ex, events.JobCanceled, p.Now, p.JobID)
	})
	if err != nil {
		return spine.CancelOutcome{}, fmt.Errorf("cancel job %s: %w", p.JobID, err)
	}
	return out, nil
}

// Reopen puts a failed job (or, with Force, a canceled one) back in the
// queue with the same id and pin, failure info cleared, and audits it
// (invariant 7). ErrConflict from any other state.
//
// The finished job is locked (ReopenLock) before spine.ReopenRule decides,
// so two operators reopening at once cannot both succeed.
func (s *Store) Reopen(ctx context.Context, p spine.ReopenParams) error {
	if p.By == "" {
		p.By = unknownActor
	}
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		status, err := ex.ReopenLock(ctx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		if err := spine.ReopenRule(status, p.Force); err != nil {
			return err
		}
		if err := ex.Reopen(ctx, p); err != nil {
			return err
		}
		return jobEvents(ctx, ex, events.JobQueued, p.Now, p.JobID)
	})
	if err != nil {
		return fmt.Errorf("reopen job %s: %w", p.JobID, err)
	}
	return nil
}
