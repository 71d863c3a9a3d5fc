package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/store/driver"
)

// The schedule queries (queries/schedule_*.sql).
const (
	qScheduleCreate     query = "schedule_create"
	qScheduleList       query = "schedule_list"
	qScheduleGet        query = "schedule_get"
	qScheduleDue        query = "schedule_due"
	qScheduleSetEnabled query = "schedule_set_enabled"
	qScheduleDelete     query = "schedule_delete"
	qScheduleFire       query = "schedule_fire"
	qScheduleJobLive    query = "schedule_job_live"
	qScheduleSetJob     query = "schedule_set_job"
	qScheduleHandOver   query = "schedule_hand_over"
)

// ScheduleCreate is driver.ScheduleExecutor.ScheduleCreate.
func (e *executor) ScheduleCreate(ctx context.Context, sc schedule.Schedule) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qScheduleCreate,
			sql.Named("id", sc.ID), sql.Named("workspace", sc.Workspace),
			sql.Named("app_key", sc.App), sql.Named("action_key", sc.Action),
			sql.Named("cron", sc.Cron), sql.Named("timezone", sc.Timezone),
			sql.Named("input", jsonArg(sc.Input)), sql.Named("no_overlap", boolInt(sc.NoOverlap)),
			sql.Named("enabled", boolInt(sc.Enabled)), sql.Named("next_run_at", micros(sc.NextRunAt)),
			sql.Named("created_by", sc.CreatedBy), sql.Named("now", micros(resolveNow(sc.CreatedAt))))
		return translate(err)
	})
}

// ScheduleList is driver.ScheduleExecutor.ScheduleList.
func (e *executor) ScheduleList(ctx context.Context, workspace string) ([]schedule.Schedule, error) {
	rows, err := e.read(ctx, qScheduleList, sql.Named("workspace", workspace))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanSchedule)
}

// ScheduleGet is driver.ScheduleExecutor.ScheduleGet.
func (e *executor) ScheduleGet(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error) {
	rows, err := e.read(ctx, qScheduleGet, sql.Named("workspace", workspace), sql.Named("id", id))
	if err != nil {
		return schedule.Schedule{}, translate(err)
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return schedule.Schedule{}, err
	}
	if len(out) == 0 {
		return schedule.Schedule{}, schedule.ErrNotFound
	}
	return out[0], nil
}

// ScheduleDue is driver.ScheduleExecutor.ScheduleDue.
func (e *executor) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	rows, err := e.read(ctx, qScheduleDue, sql.Named("now", micros(resolveNow(now))), sql.Named("limit", limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanSchedule)
}

// ScheduleSetEnabled is driver.ScheduleExecutor.ScheduleSetEnabled.
func (e *executor) ScheduleSetEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error {
	var next any
	if !nextRunAt.IsZero() {
		next = micros(nextRunAt)
	}
	return e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qScheduleSetEnabled, sql.Named("workspace", workspace), sql.Named("id", id),
			sql.Named("enabled", boolInt(enabled)), sql.Named("next_run_at", next))
		return affectedOne(res, err)
	})
}

// ScheduleDelete is driver.ScheduleExecutor.ScheduleDelete.
func (e *executor) ScheduleDelete(ctx context.Context, workspace string, id uuid.UUID) error {
	return e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qScheduleDelete, sql.Named("workspace", workspace), sql.Named("id", id))
		return affectedOne(res, err)
	})
}

// affectedOne turns a statement that touched no schedule into
// schedule.ErrNotFound.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return schedule.ErrNotFound
	}
	return nil
}

// ScheduleFire is driver.ScheduleExecutor.ScheduleFire. The one writer
// runs fires one after the other; the second of a tick finds it moved.
func (e *executor) ScheduleFire(ctx context.Context, id uuid.UUID, tick, next time.Time) (driver.ScheduleFired, bool, error) {
	var r driver.ScheduleFired
	var input string
	var lastJob uuid.NullUUID
	var ok bool
	err := e.write(ctx, func(w *writeTx) error {
		err := w.queryRow(ctx, qScheduleFire, sql.Named("id", id),
			sql.Named("tick", micros(tick)), sql.Named("next", micros(next))).
			Scan(&r.Workspace, &r.App, &r.Action, &input, &r.NoOverlap, &lastJob)
		if errNoRows(err) {
			return nil
		}
		ok = err == nil
		return translate(err)
	})
	if err != nil || !ok {
		return driver.ScheduleFired{}, false, err
	}
	r.Input = []byte(input)
	if lastJob.Valid {
		r.LastJobID = &lastJob.UUID
	}
	return r, true, nil
}

// ScheduleJobLive is driver.ScheduleExecutor.ScheduleJobLive. Its
// statement is the writer's (FireTick asks it inside its transaction), so
// on the pool it runs in a write transaction of its own too.
func (e *executor) ScheduleJobLive(ctx context.Context, job uuid.UUID) (bool, error) {
	var live bool
	err := e.write(ctx, func(w *writeTx) error {
		return translate(w.queryRow(ctx, qScheduleJobLive, sql.Named("job_id", job)).Scan(&live))
	})
	return live, err
}

// ScheduleSetJob is driver.ScheduleExecutor.ScheduleSetJob.
func (e *executor) ScheduleSetJob(ctx context.Context, id, job uuid.UUID) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qScheduleSetJob, sql.Named("id", id), sql.Named("job_id", job))
		return translate(err)
	})
}

// ScheduleHandOver is driver.ScheduleExecutor.ScheduleHandOver.
func (e *executor) ScheduleHandOver(ctx context.Context, oldJob, newJob uuid.UUID) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qScheduleHandOver, sql.Named("old_id", oldJob), sql.Named("new_id", newJob))
		return translate(err)
	})
}

func scanSchedule(rows *sql.Rows) (schedule.Schedule, error) {
	var sc schedule.Schedule
	var input string
	var next, created int64
	var lastRun sql.NullInt64
	var lastJob uuid.NullUUID
	err := rows.Scan(&sc.ID, &sc.Workspace, &sc.App, &sc.Action, &sc.Cron, &sc.Timezone, &input,
		&sc.NoOverlap, &sc.Enabled, &next, &lastRun, &lastJob, &sc.CreatedBy, &created)
	sc.Input, sc.NextRunAt, sc.LastRunAt, sc.CreatedAt = []byte(input), fromMicros(next), nullTime(lastRun), fromMicros(created)
	if lastJob.Valid {
		sc.LastJobID = &lastJob.UUID
	}
	return sc, err
}

// boolInt is a boolean as stored (0/1).
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
