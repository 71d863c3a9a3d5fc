package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// The schedule queries (queries/schedule_*.sql).
var (
	qScheduleCreate     = mustQuery("schedule_create")
	qScheduleList       = mustQuery("schedule_list")
	qScheduleGet        = mustQuery("schedule_get")
	qScheduleDue        = mustQuery("schedule_due")
	qScheduleSetEnabled = mustQuery("schedule_set_enabled")
	qScheduleDelete     = mustQuery("schedule_delete")
	qScheduleFire       = mustQuery("schedule_fire")
	qScheduleJobLive    = mustQuery("schedule_job_live")
	qScheduleSetJob     = mustQuery("schedule_set_job")
	qScheduleHandOver   = mustQuery("schedule_hand_over")
)

var _ schedule.Store = (*Driver)(nil)

// CreateSchedule stores a new schedule.
func (s *Driver) CreateSchedule(ctx context.Context, sc schedule.Schedule) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, qScheduleCreate, pgx.StrictNamedArgs{
		"id": sc.ID, "workspace": sc.Workspace, "app_key": sc.App, "action_key": sc.Action,
		"cron": sc.Cron, "timezone": sc.Timezone, "input": jsonArg(sc.Input),
		"no_overlap": sc.NoOverlap, "enabled": sc.Enabled, "next_run_at": sc.NextRunAt,
		"created_by": sc.CreatedBy, "now": timeArg(sc.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", sc.ID, translate(err))
	}
	return nil
}

// ListSchedules returns a workspace's schedules, oldest first.
func (s *Driver) ListSchedules(ctx context.Context, workspace string) ([]schedule.Schedule, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qScheduleList, pgx.StrictNamedArgs{"workspace": workspace})
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", workspace, err)
	}
	out, err := pgx.CollectRows(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", workspace, err)
	}
	return out, nil
}

// GetSchedule returns one schedule; schedule.ErrNotFound when missing.
func (s *Driver) GetSchedule(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qScheduleGet, pgx.StrictNamedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("get schedule %s: %w", id, err)
	}
	sc, err := pgx.CollectExactlyOneRow(rows, scanSchedule)
	if errors.Is(err, pgx.ErrNoRows) {
		return schedule.Schedule{}, scheduleNotFound(workspace, id)
	}
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("get schedule %s: %w", id, err)
	}
	return sc, nil
}

// DueSchedules returns enabled schedules whose tick is at or before now.
func (s *Driver) DueSchedules(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qScheduleDue, pgx.StrictNamedArgs{"now": timeArg(now), "limit": limit})
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return out, nil
}

// SetScheduleEnabled enables (moving the tick to nextRunAt) or disables a
// schedule.
func (s *Driver) SetScheduleEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, qScheduleSetEnabled, pgx.StrictNamedArgs{
		"workspace": workspace, "id": id, "enabled": enabled, "next_run_at": timeArg(nextRunAt),
	})
	if err != nil {
		return fmt.Errorf("set schedule %s enabled=%t: %w", id, enabled, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return scheduleNotFound(workspace, id)
	}
	return nil
}

// DeleteSchedule removes a schedule.
func (s *Driver) DeleteSchedule(ctx context.Context, workspace string, id uuid.UUID) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, qScheduleDelete, pgx.StrictNamedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return scheduleNotFound(workspace, id)
	}
	return nil
}

// FireTick fires tick t.NextRunAt of schedule t.ID in one transaction: the
// compare-and-set on the tick, the no-overlap check and the enqueue commit
// together, so a crash leaves either all of them or none (see
// schedule.Store). An action that cannot run (schedule.Unrunnable) still
// advances the tick: fired is true, job uuid.Nil, and the error says why.
func (s *Driver) FireTick(ctx context.Context, t schedule.Schedule, next time.Time) (bool, uuid.UUID, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var fired bool
	var job uuid.UUID
	var noJob error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		fired, job, noJob = false, uuid.Nil, nil
		row, ok, err := fireCAS(ctx, tx, t, next)
		if err != nil || !ok {
			return err
		}
		fired = true
		if row.noOverlap && row.lastJob != nil {
			live, err := jobLive(ctx, tx, *row.lastJob)
			if err != nil || live {
				return err
			}
		}
		row.tick = t.NextRunAt
		job, noJob, err = s.enqueueTick(ctx, tx, t.ID, row)
		return err
	})
	if err != nil {
		return false, uuid.Nil, fmt.Errorf("fire schedule %s tick %s: %w", t.ID, t.NextRunAt.Format(time.RFC3339), err)
	}
	if noJob != nil {
		return true, uuid.Nil, fmt.Errorf("fire schedule %s tick %s: tick advanced without a job: %w",
			t.ID, t.NextRunAt.Format(time.RFC3339), noJob)
	}
	return fired, job, nil
}

// firedRow is what the compare-and-set returns of the schedule it moved.
type firedRow struct {
	workspace, app, action string
	input                  []byte
	// tick is the fired tick: the job's scheduled_for, so each job names
	// the tick it belongs to.
	tick      time.Time
	noOverlap bool
	lastJob   *uuid.UUID
}

// fireCAS moves the tick; ok is false when another server already did, or
// the schedule was disabled or deleted.
func fireCAS(ctx context.Context, tx pgx.Tx, t schedule.Schedule, next time.Time) (firedRow, bool, error) {
	var r firedRow
	err := tx.QueryRow(ctx, qScheduleFire, pgx.StrictNamedArgs{"id": t.ID, "tick": t.NextRunAt, "next": next}).
		Scan(&r.workspace, &r.app, &r.action, &r.input, &r.noOverlap, &r.lastJob)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("move tick: %w", err)
	}
	return r, true, nil
}

// jobLive reports whether a job is still queued or running.
func jobLive(ctx context.Context, tx pgx.Tx, id uuid.UUID) (bool, error) {
	var live bool
	if err := tx.QueryRow(ctx, qScheduleJobLive, pgx.StrictNamedArgs{"job_id": id}).Scan(&live); err != nil {
		return false, fmt.Errorf("check previous job %s: %w", id, err)
	}
	return live, nil
}

// enqueueTick enqueues the tick's job through the one enqueue path and
// records it. The enqueue runs in a savepoint: when the action cannot run
// (noJob), only the savepoint is rolled back and the moved tick commits.
func (s *Driver) enqueueTick(ctx context.Context, tx pgx.Tx, id uuid.UUID, row firedRow) (job uuid.UUID, noJob, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("savepoint: %w", err)
	}
	res, err := s.EnqueueActionTx(ctx, sp, tickRequest(id, row))
	if err != nil {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return uuid.Nil, nil, fmt.Errorf("roll back to savepoint: %w", rerr)
		}
		if schedule.Unrunnable(err) {
			return uuid.Nil, err, nil
		}
		return uuid.Nil, nil, err
	}
	if err := sp.Commit(ctx); err != nil {
		return uuid.Nil, nil, fmt.Errorf("release savepoint: %w", err)
	}
	if _, err := tx.Exec(ctx, qScheduleSetJob, pgx.StrictNamedArgs{"id": id, "job_id": res.ID}); err != nil {
		return uuid.Nil, nil, fmt.Errorf("record job %s: %w", res.ID, err)
	}
	return res.ID, nil, nil
}

// tickRequest is the enqueue request of one tick of schedule id.
func tickRequest(id uuid.UUID, row firedRow) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{
		Workspace: row.workspace, App: row.app, Action: row.action,
		TriggerKind: spine.TriggerSchedule, TriggerRef: schedule.TickRef(id, row.tick),
		CreatedBy: "schedule:" + id.String(), Input: compactJSON(row.input), ScheduledFor: row.tick,
	}
}

func scanSchedule(row pgx.CollectableRow) (schedule.Schedule, error) {
	var sc schedule.Schedule
	var input []byte
	var lastRun *time.Time
	err := row.Scan(&sc.ID, &sc.Workspace, &sc.App, &sc.Action, &sc.Cron, &sc.Timezone, &input,
		&sc.NoOverlap, &sc.Enabled, &sc.NextRunAt, &lastRun, &sc.LastJobID, &sc.CreatedBy, &sc.CreatedAt)
	sc.Input, sc.LastRunAt = compactJSON(input), ptrTime(lastRun)
	return sc, err
}

func scheduleNotFound(workspace string, id uuid.UUID) error {
	return fmt.Errorf("%w: %s in workspace %q", schedule.ErrNotFound, id, workspace)
}
