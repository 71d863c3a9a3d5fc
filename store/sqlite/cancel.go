package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// unknownActor stands for a cancel or reopen whose caller gave no name.
const unknownActor = "unknown"

// jobState is where a job is, as job_state reads it.
type jobState struct {
	app, action, tag string
	priority         int
	running          sql.NullBool   // set while in job_queue
	status           sql.NullString // set once in job_completed
}

// Status is the job's status as the API reports it ("" for a job row with
// neither a queue nor a completed row, which the spine never leaves).
func (st jobState) Status() spine.Status {
	switch {
	case st.status.Valid:
		return spine.Status(st.status.String)
	case st.running.Valid && st.running.Bool:
		return spine.StatusRunning
	case st.running.Valid:
		return spine.StatusQueued
	}
	return ""
}

// state reads a job's state in the current write transaction.
func (w *writeTx) state(ctx context.Context, workspace string, id uuid.UUID) (jobState, error) {
	var st jobState
	err := w.queryRow(ctx, qJobState, sql.Named("id", id), sql.Named("workspace", workspace)).
		Scan(&st.app, &st.action, &st.tag, &st.priority, &st.running, &st.status)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && st.Status() == "") {
		return st, spine.ErrNotFound
	}
	if err != nil {
		return st, fmt.Errorf("read job state: %w", err)
	}
	return st, nil
}

// Cancel finishes a waiting job canceled at once, or marks a running one
// for its worker (invariant 6), and audits it. ErrConflict for a finished
// job, ErrNotFound for an unknown one.
func (s *Driver) Cancel(ctx context.Context, p spine.CancelParams) (spine.CancelOutcome, error) {
	if p.By == "" {
		p.By = unknownActor
	}
	now := resolveNow(p.Now)
	var out spine.CancelOutcome
	err := s.write(ctx, func(w *writeTx) error {
		st, err := w.state(ctx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		action, err := spine.CancelRule(st.Status())
		if err != nil {
			return err
		}
		out.Status = spine.StatusCanceled
		if action == spine.CancelMark {
			out.Status = spine.StatusRunning
			err = w.markCanceled(ctx, p)
		} else {
			err = w.cancelWaiting(ctx, p, now)
		}
		if err != nil {
			return err
		}
		return w.audit(ctx, p.JobID, p.Workspace, "cancel", p.By, p.Reason, now)
	})
	if err != nil {
		return spine.CancelOutcome{}, fmt.Errorf("cancel job %s: %w", p.JobID, err)
	}
	return out, nil
}

// cancelWaiting moves a waiting job straight to job_completed, canceled,
// with no start time.
func (w *writeTx) cancelWaiting(ctx context.Context, p spine.CancelParams, now time.Time) error {
	var workspace, tag string
	var attempt, restarts int
	err := w.queryRow(ctx, qCancelWaiting, sql.Named("id", p.JobID)).Scan(&workspace, &tag, &attempt, &restarts)
	if err != nil {
		return fmt.Errorf("remove waiting job: %w", err)
	}
	if _, err := w.exec(ctx, qFinishInsert,
		sql.Named("id", p.JobID),
		sql.Named("workspace", workspace),
		sql.Named("tag", tag),
		sql.Named("status", string(spine.StatusCanceled)),
		sql.Named("result", nil),
		sql.Named("error", nil),
		sql.Named("started_at", nil),
		sql.Named("completed_at", micros(now)),
		sql.Named("duration_ms", nil),
		sql.Named("worker", nil),
		sql.Named("attempt", attempt),
		sql.Named("restarts", restarts),
		sql.Named("canceled_by", p.By),
		sql.Named("canceled_reason", p.Reason),
	); err != nil {
		return fmt.Errorf("record cancel: %w", translate(err))
	}
	w.finished(p.JobID)
	return nil
}

// markCanceled sets the cancel mark on a running job, keeping a first mark.
func (w *writeTx) markCanceled(ctx context.Context, p spine.CancelParams) error {
	if _, err := w.exec(ctx, qCancelMark,
		sql.Named("id", p.JobID), sql.Named("by", p.By), sql.Named("reason", p.Reason)); err != nil {
		return fmt.Errorf("mark canceled: %w", err)
	}
	return nil
}

// audit records an operator action on a job.
func (w *writeTx) audit(ctx context.Context, id uuid.UUID, workspace, action, actor, reason string, at time.Time) error {
	if _, err := w.exec(ctx, qAuditInsert,
		sql.Named("id", id), sql.Named("workspace", workspace), sql.Named("action", action),
		sql.Named("actor", actor), sql.Named("reason", reason), sql.Named("at", micros(at))); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// Reopen puts a failed job (a canceled one with Force) back in the queue
// with the same id and pin, attempt 1, failure info cleared, and audits it
// (invariant 7).
func (s *Driver) Reopen(ctx context.Context, p spine.ReopenParams) error {
	if p.By == "" {
		p.By = unknownActor
	}
	now := resolveNow(p.Now)
	err := s.write(ctx, func(w *writeTx) error {
		st, err := w.state(ctx, p.Workspace, p.JobID)
		if err != nil {
			return err
		}
		status := st.Status()
		if err := spine.ReopenRule(status, p.Force); err != nil {
			return err
		}
		res, err := w.exec(ctx, qReopenDelete, sql.Named("id", p.JobID), sql.Named("status", string(status)))
		if err != nil {
			return fmt.Errorf("remove completed row: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("remove completed row: %d rows (%v)", n, err)
		}
		if err := w.insertQueue(ctx, queueRow{
			id: p.JobID, workspace: p.Workspace, app: st.app, action: st.action,
			tag: st.tag, priority: st.priority, scheduledFor: now,
		}); err != nil {
			return err
		}
		w.wake(st.tag)
		return w.audit(ctx, p.JobID, p.Workspace, "reopen", p.By, p.Reason, now)
	})
	if err != nil {
		return fmt.Errorf("reopen job %s: %w", p.JobID, err)
	}
	return nil
}
