package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// CancelLock locks a live job of the workspace (cancel_lock.sql) and
// returns its status (driver.LifecycleExecutor). Only when there is no
// live row does it read the finished status too, so a cancel of a live job
// stays one statement before its write.
func (e *executor) CancelLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var running bool
	err := e.q.QueryRow(ctx, qCancelLock, namedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&running)
	if errors.Is(err, pgx.ErrNoRows) {
		return finishedStatus(ctx, e.q, workspace, id)
	}
	if err != nil {
		return "", translate(err)
	}
	return liveStatus(running), nil
}

// CancelWaiting finishes a waiting job canceled, audits it and notifies its
// waiters in one statement (cancel_waiting.sql).
func (e *executor) CancelWaiting(ctx context.Context, p spine.CancelParams) error {
	return e.cancelWrite(ctx, qCancelWaiting, namedArgs{
		"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now),
		"done_channel": e.d.doneChannel,
	})
}

// CancelMark marks a running job and audits it in one statement
// (cancel_mark.sql).
func (e *executor) CancelMark(ctx context.Context, p spine.CancelParams) error {
	return e.cancelWrite(ctx, qCancelMark, namedArgs{
		"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now),
	})
}

// cancelWrite runs one of the cancel writes, which return the job's id.
func (e *executor) cancelWrite(ctx context.Context, query string, args namedArgs) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var id uuid.UUID
	err := e.q.QueryRow(ctx, query, args).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		// Under CancelLock the row is there in the state read: no row is a
		// bug, not a race.
		return fmt.Errorf("the job is no longer in the state it was locked in: %w", err)
	}
	return translate(err)
}

// finishedStatus reads the status of a job that is not in job_queue: its
// terminal status, or "" when the workspace has no such job (the spine's
// rules answer ErrNotFound for it).
func finishedStatus(ctx context.Context, q querier, workspace string, id uuid.UUID) (spine.Status, error) {
	var status string
	err := q.QueryRow(ctx, qFinishedStatus, namedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", translate(err)
	}
	return spine.Status(status), nil
}

// liveStatus is the status of a job_queue row.
func liveStatus(running bool) spine.Status {
	if running {
		return spine.StatusRunning
	}
	return spine.StatusQueued
}

// ReopenLock locks a finished job of the workspace (reopen_lock.sql) and
// returns its status; a job that is not finished is read from job_queue
// (live_status.sql), "" when the workspace has no such job.
func (e *executor) ReopenLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var status string
	err := e.q.QueryRow(ctx, qReopenLock, namedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return readLive(ctx, e.q, workspace, id)
	}
	if err != nil {
		return "", translate(err)
	}
	return spine.Status(status), nil
}

// readLive reads the status of a job that is not in job_completed: queued
// or running, or "" when the workspace has no such job.
func readLive(ctx context.Context, q querier, workspace string, id uuid.UUID) (spine.Status, error) {
	var running bool
	err := q.QueryRow(ctx, qLiveStatus, namedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&running)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", translate(err)
	}
	return liveStatus(running), nil
}

// Reopen moves a finished job back to job_queue, audits it and notifies
// its tag in one statement (reopen.sql).
func (e *executor) Reopen(ctx context.Context, p spine.ReopenParams) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var id uuid.UUID
	err := e.q.QueryRow(ctx, qReopen, namedArgs{
		"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now), "channel": e.d.channel,
	}).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		// job_completed without its job row: refuse rather than lose it.
		return fmt.Errorf("%w: the job's pinned record is missing", spine.ErrNotFound)
	}
	return translate(err)
}
