package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/store/driver"
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

// ScheduleCreate is driver.ScheduleExecutor.ScheduleCreate.
func (e *executor) ScheduleCreate(ctx context.Context, sc schedule.Schedule) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qScheduleCreate, namedArgs{
		"id": sc.ID, "workspace": sc.Workspace, "app_key": sc.App, "action_key": sc.Action,
		"cron": sc.Cron, "timezone": sc.Timezone, "input": jsonArg(sc.Input),
		"no_overlap": sc.NoOverlap, "enabled": sc.Enabled, "next_run_at": sc.NextRunAt,
		"created_by": sc.CreatedBy, "now": timeArg(sc.CreatedAt),
	})
	return translate(err)
}

// ScheduleList is driver.ScheduleExecutor.ScheduleList.
func (e *executor) ScheduleList(ctx context.Context, workspace string) ([]schedule.Schedule, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qScheduleList, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, scanSchedule)
}

// ScheduleGet is driver.ScheduleExecutor.ScheduleGet.
func (e *executor) ScheduleGet(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qScheduleGet, namedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return schedule.Schedule{}, translate(err)
	}
	sc, err := pgx.CollectExactlyOneRow(rows, scanSchedule)
	if errors.Is(err, pgx.ErrNoRows) {
		return schedule.Schedule{}, schedule.ErrNotFound
	}
	return sc, err
}

// ScheduleDue is driver.ScheduleExecutor.ScheduleDue.
func (e *executor) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qScheduleDue, namedArgs{"now": timeArg(now), "limit": limit})
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, scanSchedule)
}

// ScheduleSetEnabled is driver.ScheduleExecutor.ScheduleSetEnabled.
func (e *executor) ScheduleSetEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qScheduleSetEnabled, namedArgs{
		"workspace": workspace, "id": id, "enabled": enabled, "next_run_at": timeArg(nextRunAt),
	})
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return schedule.ErrNotFound
	}
	return nil
}

// ScheduleDelete is driver.ScheduleExecutor.ScheduleDelete.
func (e *executor) ScheduleDelete(ctx context.Context, workspace string, id uuid.UUID) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qScheduleDelete, namedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return schedule.ErrNotFound
	}
	return nil
}

// ScheduleFire is driver.ScheduleExecutor.ScheduleFire. A concurrent fire
// of the same tick waits on the row lock, then finds the tick moved.
func (e *executor) ScheduleFire(ctx context.Context, id uuid.UUID, tick, next time.Time) (driver.ScheduleFired, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var r driver.ScheduleFired
	var input []byte
	err := e.q.QueryRow(ctx, qScheduleFire, namedArgs{"id": id, "tick": tick, "next": next}).
		Scan(&r.Workspace, &r.App, &r.Action, &input, &r.NoOverlap, &r.LastJobID)
	if errors.Is(err, pgx.ErrNoRows) {
		return driver.ScheduleFired{}, false, nil
	}
	if err != nil {
		return driver.ScheduleFired{}, false, translate(err)
	}
	r.Input = compactJSON(input)
	return r, true, nil
}

// ScheduleJobLive is driver.ScheduleExecutor.ScheduleJobLive.
func (e *executor) ScheduleJobLive(ctx context.Context, job uuid.UUID) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var live bool
	if err := e.q.QueryRow(ctx, qScheduleJobLive, namedArgs{"job_id": job}).Scan(&live); err != nil {
		return false, translate(err)
	}
	return live, nil
}

// ScheduleSetJob is driver.ScheduleExecutor.ScheduleSetJob.
func (e *executor) ScheduleSetJob(ctx context.Context, id, job uuid.UUID) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qScheduleSetJob, namedArgs{"id": id, "job_id": job})
	return translate(err)
}

// ScheduleHandOver is driver.ScheduleExecutor.ScheduleHandOver.
func (e *executor) ScheduleHandOver(ctx context.Context, oldJob, newJob uuid.UUID) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qScheduleHandOver, namedArgs{"old_id": oldJob, "new_id": newJob})
	return translate(err)
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
