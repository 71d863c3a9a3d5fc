package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

var qRequeueJobLock = mustQuery("requeue_job_lock")

// Requeue moves a waiting job to the catalog as it is now (DESIGN §4), in
// one transaction: under the queue row's lock it cancels the job, with a
// reason naming the new one, and enqueues its input again through the one
// enqueue path with the same trigger, creator, priority, schedule and
// coalesce key. The new job pins the current commit, schemas and tag.
// ErrConflict for a running or finished job, ErrNotFound for an unknown
// one; any error (an input the current schema refuses, an action that is
// gone) writes nothing.
func (s *Driver) Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error) {
	if actor == "" {
		actor = unknownActor
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var res spine.EnqueueResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		req, err := lockWaiting(ctx, tx, workspace, id)
		if err != nil {
			return err
		}
		if req.ID, err = uuid.NewV7(); err != nil {
			return fmt.Errorf("new job id: %w", err)
		}
		// Cancel first: it frees the coalesce key the new job takes over.
		var gone uuid.UUID
		if err := tx.QueryRow(ctx, qCancelWaiting, pgx.StrictNamedArgs{
			"job_id": id, "by": actor, "reason": "requeued as job " + req.ID.String(), "now": nil,
			"done_channel": s.doneChannel,
		}).Scan(&gone); err != nil {
			return fmt.Errorf("cancel the waiting job: %w", translate(err))
		}
		if res, err = s.EnqueueActionTx(ctx, tx, req); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qScheduleHandOver, pgx.StrictNamedArgs{"old_id": id, "new_id": res.ID}); err != nil {
			return fmt.Errorf("hand the schedule over to job %s: %w", res.ID, err)
		}
		return nil
	})
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("requeue job %s: %w", id, err)
	}
	return res, nil
}

// lockWaiting locks a waiting job and returns the request that enqueues it
// again; ErrConflict when it runs or finished, ErrNotFound when unknown.
func lockWaiting(ctx context.Context, tx pgx.Tx, workspace string, id uuid.UUID) (catalog.EnqueueRequest, error) {
	r := catalog.EnqueueRequest{Workspace: workspace}
	var (
		running   bool
		trigger   string
		input     []byte
		scheduled time.Time
	)
	err := tx.QueryRow(ctx, qRequeueJobLock, pgx.StrictNamedArgs{"job_id": id, "workspace": workspace}).Scan(
		&running, &trigger, &r.TriggerRef, &r.CreatedBy, &input, &r.App, &r.Action,
		&r.Priority, &scheduled, &r.CoalesceKey)
	if errors.Is(err, pgx.ErrNoRows) {
		status, err := finishedStatus(ctx, tx, workspace, id)
		if err != nil {
			return r, err
		}
		return r, spine.RequeueRule(status)
	}
	if err != nil {
		return r, translate(err)
	}
	if err := spine.RequeueRule(liveStatus(running)); err != nil {
		return r, err
	}
	r.TriggerKind, r.Input, r.ScheduledFor = spine.TriggerKind(trigger), input, scheduled
	return r, nil
}
