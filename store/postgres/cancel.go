package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// unknownActor names who canceled when the caller did not say.
const unknownActor = "unknown"

// Cancel finishes a waiting job as canceled at once or marks a running one
// for its worker (invariant 6), under the queue row's lock, and audits it.
// A finished job is a conflict; a job of another workspace is not found.
func (s *Driver) Cancel(ctx context.Context, p spine.CancelParams) (spine.CancelOutcome, error) {
	if p.By == "" {
		p.By = unknownActor
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var out spine.CancelOutcome
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		status, err := lockLive(ctx, tx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		action, err := spine.CancelRule(status)
		if err != nil {
			return err
		}
		args := pgx.StrictNamedArgs{
			"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now),
		}
		query, status := qCancelWaiting, spine.StatusCanceled
		if action == spine.CancelMark {
			// The mark only: the job ends (and its waiters wake) when its
			// worker completes it canceled, or the reaper does.
			query, status = qCancelRunning, spine.StatusRunning
		} else {
			args["done_channel"] = s.doneChannel
		}
		var id uuid.UUID
		if err := tx.QueryRow(ctx, query, args).Scan(&id); err != nil {
			return translate(err) // the row is locked: no row here is a bug, not a race
		}
		out.Status = status
		return nil
	})
	if err != nil {
		return spine.CancelOutcome{}, fmt.Errorf("cancel job %s: %w", p.JobID, err)
	}
	return out, nil
}

// lockLive locks a live job of the workspace (cancel_lock.sql) and returns
// its status. Only when there is no live row does it read the finished
// status too, so a cancel of a live job stays one statement before its
// write.
func lockLive(ctx context.Context, tx pgx.Tx, workspace string, id uuid.UUID) (spine.Status, error) {
	var running bool
	err := tx.QueryRow(ctx, qCancelLock, pgx.StrictNamedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&running)
	if errors.Is(err, pgx.ErrNoRows) {
		return finishedStatus(ctx, tx, workspace, id)
	}
	if err != nil {
		return "", translate(err)
	}
	return liveStatus(running), nil
}

// finishedStatus reads the status of a job that is not in job_queue: its
// terminal status, or "" when the workspace has no such job (the spine's
// rules answer ErrNotFound for it).
func finishedStatus(ctx context.Context, q querier, workspace string, id uuid.UUID) (spine.Status, error) {
	var status string
	err := q.QueryRow(ctx, qFinishedStatus, pgx.StrictNamedArgs{
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

// Reopen puts a failed job (or, with Force, a canceled one) back in the
// queue with the same id and pin, audits it and wakes its tag (invariant
// 7). A successful, queued or running job is a conflict.
func (s *Driver) Reopen(ctx context.Context, p spine.ReopenParams) error {
	if p.By == "" {
		p.By = unknownActor
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		status, err := lockFinished(ctx, tx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		if err := spine.ReopenRule(status, p.Force); err != nil {
			return err
		}
		var id uuid.UUID
		err = tx.QueryRow(ctx, qReopen, pgx.StrictNamedArgs{
			"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now), "channel": s.channel,
		}).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			// job_completed without its job row: refuse rather than lose it.
			return fmt.Errorf("%w: the job's pinned record is missing", spine.ErrNotFound)
		}
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("reopen job %s: %w", p.JobID, err)
	}
	return nil
}

// lockFinished locks a finished job of the workspace (reopen_lock.sql)
// and returns its status; a job that is not finished is read from
// job_queue (live_status.sql), "" when the workspace has no such job.
func lockFinished(ctx context.Context, tx pgx.Tx, workspace string, id uuid.UUID) (spine.Status, error) {
	var status string
	err := tx.QueryRow(ctx, qReopenLock, pgx.StrictNamedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return readLive(ctx, tx, workspace, id)
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
	err := q.QueryRow(ctx, qLiveStatus, pgx.StrictNamedArgs{
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
