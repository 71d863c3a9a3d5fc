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
func (s *Store) Cancel(ctx context.Context, p spine.CancelParams) (spine.CancelOutcome, error) {
	if p.By == "" {
		p.By = unknownActor
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var out spine.CancelOutcome
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var running bool
		err := tx.QueryRow(ctx, qCancelLock, pgx.StrictNamedArgs{
			"job_id": p.JobID, "workspace": p.Workspace,
		}).Scan(&running)
		if errors.Is(err, pgx.ErrNoRows) {
			return finishedConflict(ctx, tx, p.Workspace, p.JobID, "cancel")
		}
		if err != nil {
			return translate(err)
		}
		args := pgx.StrictNamedArgs{
			"job_id": p.JobID, "by": p.By, "reason": p.Reason, "now": timeArg(p.Now),
		}
		query, status := qCancelWaiting, spine.StatusCanceled
		if running {
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

// finishedConflict explains why a job that is not in job_queue cannot be
// acted on: ErrConflict naming its terminal status, or ErrNotFound.
func finishedConflict(ctx context.Context, q querier, workspace string, id uuid.UUID, what string) error {
	var status string
	err := q.QueryRow(ctx, qFinishedStatus, pgx.StrictNamedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ErrNotFound
	}
	if err != nil {
		return translate(err)
	}
	return fmt.Errorf("%w: cannot %s a job that already finished with status %s", spine.ErrConflict, what, status)
}

// Reopen puts a failed job (or, with Force, a canceled one) back in the
// queue with the same id and pin, audits it and wakes its tag (invariant
// 7). A successful, queued or running job is a conflict.
func (s *Store) Reopen(ctx context.Context, p spine.ReopenParams) error {
	if p.By == "" {
		p.By = unknownActor
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, qReopenLock, pgx.StrictNamedArgs{
			"job_id": p.JobID, "workspace": p.Workspace,
		}).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return liveConflict(ctx, tx, p.Workspace, p.JobID)
		}
		if err != nil {
			return translate(err)
		}
		if err := reopenable(spine.Status(status), p.Force); err != nil {
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

// reopenable says whether a finished job with status may be reopened.
func reopenable(status spine.Status, force bool) error {
	switch {
	case status == spine.StatusFailure:
		return nil
	case status == spine.StatusCanceled && force:
		return nil
	case status == spine.StatusCanceled:
		return fmt.Errorf("%w: the job was canceled; reopening it needs force", spine.ErrConflict)
	}
	return fmt.Errorf("%w: cannot reopen a job that finished with status %s", spine.ErrConflict, status)
}

// liveConflict explains why a job that is not in job_completed cannot be
// reopened: ErrConflict when it is queued or running, else ErrNotFound.
func liveConflict(ctx context.Context, q querier, workspace string, id uuid.UUID) error {
	var running bool
	err := q.QueryRow(ctx, qLiveStatus, pgx.StrictNamedArgs{
		"job_id": id, "workspace": workspace,
	}).Scan(&running)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ErrNotFound
	}
	if err != nil {
		return translate(err)
	}
	status := spine.StatusQueued
	if running {
		status = spine.StatusRunning
	}
	return fmt.Errorf("%w: cannot reopen a job that is %s", spine.ErrConflict, status)
}
