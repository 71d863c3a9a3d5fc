package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

const qRequeueJobRead query = "requeue_job_read"

// RequeueJobLock reads, in the write transaction (the one writer is the
// lock), the request that enqueues a live job again
// (queries/requeue_job_read.sql); a job that is not live answers its
// finished status (job_state.sql), "" when unknown (driver.JobExecutor).
func (e *executor) RequeueJobLock(ctx context.Context, workspace string, id uuid.UUID) (catalog.EnqueueRequest, spine.Status, error) {
	var r catalog.EnqueueRequest
	var status spine.Status
	err := e.write(ctx, func(w *writeTx) error {
		var err error
		r, status, err = w.readWaiting(ctx, workspace, id)
		return err
	})
	return r, status, err
}

// readWaiting reads the request that enqueues a live job again, and its
// status.
func (w *writeTx) readWaiting(ctx context.Context, workspace string, id uuid.UUID) (catalog.EnqueueRequest, spine.Status, error) {
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
		if errors.Is(err, spine.ErrNotFound) {
			return catalog.EnqueueRequest{}, "", nil
		}
		if err != nil {
			return catalog.EnqueueRequest{}, "", err
		}
		return catalog.EnqueueRequest{}, st.Status(), nil
	}
	if err != nil {
		return catalog.EnqueueRequest{}, "", fmt.Errorf("read waiting job: %w", err)
	}
	status := spine.StatusQueued
	if running {
		status = spine.StatusRunning
	}
	r.TriggerKind, r.Input, r.ScheduledFor = spine.TriggerKind(trigger), []byte(input), fromMicros(scheduled)
	return r, status, nil
}
