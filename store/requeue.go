package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Requeue moves a waiting job to the catalog as it is now (DESIGN §4), in
// one transaction: under the job's lock it cancels the job, with a reason
// naming the new one, and enqueues its input again through the one
// enqueue path with the same trigger, creator, priority, schedule and
// coalesce key. The new job pins the current commit, schemas and tag, and
// a schedule whose last job was the old one points at the new one.
// spine.RequeueRule judges the job: ErrConflict for a running or finished
// job, ErrNotFound for an unknown one; any error (an input the current
// schema refuses, an action that is gone) writes nothing.
func (s *Store) Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error) {
	if actor == "" {
		actor = unknownActor
	}
	var res spine.EnqueueResult
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		req, status, err := ex.RequeueJobLock(ctx, workspace, id)
		if err != nil {
			return err
		}
		if err := spine.RequeueRule(status); err != nil {
			return err
		}
		if req.ID, err = uuid.NewV7(); err != nil {
			return fmt.Errorf("new job id: %w", err)
		}
		// Cancel first: it frees the coalesce key the new job takes over.
		if err := ex.CancelWaiting(ctx, spine.CancelParams{
			Workspace: workspace, JobID: id, By: actor, Reason: "requeued as job " + req.ID.String(),
		}); err != nil {
			return fmt.Errorf("cancel the waiting job: %w", err)
		}
		if err := jobEvents(ctx, ex, events.JobCanceled, time.Time{}, id); err != nil {
			return err
		}
		if res, err = s.enqueueAction(ctx, ex, req); err != nil {
			return err
		}
		if err := ex.ScheduleHandOver(ctx, id, res.ID); err != nil {
			return fmt.Errorf("hand the schedule over to job %s: %w", res.ID, err)
		}
		return nil
	})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("requeue job %s: %w", id, err)
	}
	return res, nil
}
