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

// lockStatus reads a job's status in the write transaction (job_state.sql):
// the one writer connection is the lock, so it stays current until the
// transaction ends. "" when the workspace has no such job.
func (e *executor) lockStatus(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error) {
	var status spine.Status
	err := e.write(ctx, func(w *writeTx) error {
		st, err := w.state(ctx, workspace, id)
		if errors.Is(err, spine.ErrNotFound) {
			return nil
		}
		status = st.Status()
		return err
	})
	return status, err
}

// CancelLock reads the job's status on the writer (driver.LifecycleExecutor).
func (e *executor) CancelLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error) {
	return e.lockStatus(ctx, workspace, id)
}

// CancelWaiting moves a waiting job straight to job_completed, canceled,
// with no start time, audits it and wakes its waiters after commit.
func (e *executor) CancelWaiting(ctx context.Context, p spine.CancelParams) error {
	now := resolveNow(p.Now)
	return e.write(ctx, func(w *writeTx) error {
		if err := w.cancelWaiting(ctx, p, now); err != nil {
			return err
		}
		return w.audit(ctx, p.JobID, p.Workspace, "cancel", p.By, p.Reason, now)
	})
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

// CancelMark sets the cancel mark on a running job, keeping a first mark
// (cancel_mark.sql), and audits it.
func (e *executor) CancelMark(ctx context.Context, p spine.CancelParams) error {
	now := resolveNow(p.Now)
	return e.write(ctx, func(w *writeTx) error {
		if _, err := w.exec(ctx, qCancelMark,
			sql.Named("id", p.JobID), sql.Named("by", p.By), sql.Named("reason", p.Reason)); err != nil {
			return fmt.Errorf("mark canceled: %w", err)
		}
		return w.audit(ctx, p.JobID, p.Workspace, "cancel", p.By, p.Reason, now)
	})
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

// ReopenLock reads the job's status on the writer (driver.LifecycleExecutor).
func (e *executor) ReopenLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error) {
	return e.lockStatus(ctx, workspace, id)
}

// Reopen removes the job's completed row (guarded on the status it was
// read with), inserts a fresh waiting queue row from the job row, audits
// it and wakes the tag after commit.
func (e *executor) Reopen(ctx context.Context, p spine.ReopenParams) error {
	now := resolveNow(p.Now)
	return e.write(ctx, func(w *writeTx) error {
		st, err := w.state(ctx, p.Workspace, p.JobID)
		if errors.Is(err, spine.ErrNotFound) {
			return fmt.Errorf("%w: the job's pinned record is missing", spine.ErrNotFound)
		}
		if err != nil {
			return err
		}
		res, err := w.exec(ctx, qReopenDelete, sql.Named("id", p.JobID), sql.Named("status", string(st.Status())))
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
}
