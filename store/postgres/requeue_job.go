package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

var qRequeueJobLock = mustQuery("requeue_job_lock")

// RequeueJobLock locks a live job under the queue row's lock and reads the
// request that enqueues it again (queries/requeue_job_lock.sql); a job
// that is not live answers its finished status (finished_status.sql), ""
// when unknown (driver.JobExecutor).
func (e *executor) RequeueJobLock(ctx context.Context, workspace string, id uuid.UUID) (catalog.EnqueueRequest, spine.Status, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	r := catalog.EnqueueRequest{Workspace: workspace}
	var (
		running   bool
		trigger   string
		input     []byte
		scheduled time.Time
	)
	err := e.q.QueryRow(ctx, qRequeueJobLock, namedArgs{"job_id": id, "workspace": workspace}).Scan(
		&running, &trigger, &r.TriggerRef, &r.CreatedBy, &input, &r.App, &r.Action,
		&r.Priority, &scheduled, &r.CoalesceKey)
	if errors.Is(err, pgx.ErrNoRows) {
		status, err := finishedStatus(ctx, e.q, workspace, id)
		return catalog.EnqueueRequest{}, status, err
	}
	if err != nil {
		return catalog.EnqueueRequest{}, "", translate(err)
	}
	r.TriggerKind, r.Input, r.ScheduledFor = spine.TriggerKind(trigger), input, scheduled
	return r, liveStatus(running), nil
}
