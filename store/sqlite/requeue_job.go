package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

const qRequeueJobRead query = "requeue_job_read"

// Requeue moves a waiting job to the catalog as it is now (DESIGN §4), in
// one write transaction: it cancels the job, with a reason naming the new
// one, and enqueues its input again through the one enqueue path with the
// same trigger, creator, priority, schedule and coalesce key. The new job
// pins the current commit, schemas and tag. ErrConflict for a running or
// finished job, ErrNotFound for an unknown one; any error (an input the
// current schema refuses, an action that is gone) writes nothing.
func (s *Driver) Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error) {
	if actor == "" {
		actor = unknownActor
	}
	now := resolveNow(time.Time{})
	var res spine.EnqueueResult
	// Registered, so EnqueueActionTx finds this transaction's statements
	// and queues its wake-up for after the commit.
	err := s.writeRegistered(ctx, true, func(w *writeTx) error {
		req, err := w.readWaiting(ctx, workspace, id)
		if err != nil {
			return err
		}
		if req.ID, err = uuid.NewV7(); err != nil {
			return fmt.Errorf("new job id: %w", err)
		}
		// Cancel first: it frees the coalesce key the new job takes over.
		p := spine.CancelParams{Workspace: workspace, JobID: id, By: actor, Reason: "requeued as job " + req.ID.String()}
		if err := w.cancelWaiting(ctx, p, now); err != nil {
			return err
		}
		if err := w.audit(ctx, id, workspace, "cancel", p.By, p.Reason, now); err != nil {
			return err
		}
		if res, err = s.EnqueueActionTx(ctx, w.tx, req); err != nil {
			return err
		}
		if _, err := w.exec(ctx, qScheduleHandOver, sql.Named("old_id", id), sql.Named("new_id", res.ID)); err != nil {
			return fmt.Errorf("hand the schedule over to job %s: %w", res.ID, err)
		}
		return nil
	})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("requeue job %s: %w", id, err)
	}
	return res, nil
}

// readWaiting returns the request that enqueues a waiting job again;
// ErrConflict when it runs or finished, ErrNotFound when unknown.
func (w *writeTx) readWaiting(ctx context.Context, workspace string, id uuid.UUID) (catalog.EnqueueRequest, error) {
	r := catalog.EnqueueRequest{Workspace: workspace}
	var (
		running        bool
		trigger, input string
		scheduled      int64
	)
	err := w.queryRow(ctx, qRequeueJobRead, sql.Named("id", id), sql.Named("workspace", workspace)).Scan(
		&running, &trigger, &r.TriggerRef, &r.CreatedBy, &input, &r.App, &r.Action,
		&r.Priority, &scheduled, &r.CoalesceKey)
	if errors.Is(err, sql.ErrNoRows) {
		st, err := w.state(ctx, workspace, id)
		if err != nil {
			return r, err
		}
		return r, spine.RequeueRule(st.Status())
	}
	if err != nil {
		return r, fmt.Errorf("read waiting job: %w", err)
	}
	status := spine.StatusQueued
	if running {
		status = spine.StatusRunning
	}
	if err := spine.RequeueRule(status); err != nil {
		return r, err
	}
	r.TriggerKind, r.Input, r.ScheduledFor = spine.TriggerKind(trigger), []byte(input), fromMicros(scheduled)
	return r, nil
}
