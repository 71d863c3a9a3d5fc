package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
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

var _ schedule.Store = (*Driver)(nil)

// CreateSchedule stores a new schedule.
func (s *Driver) CreateSchedule(ctx context.Context, sc schedule.Schedule) error {
	err := s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qScheduleCreate,
			sql.Named("id", sc.ID), sql.Named("workspace", sc.Workspace),
			sql.Named("app_key", sc.App), sql.Named("action_key", sc.Action),
			sql.Named("cron", sc.Cron), sql.Named("timezone", sc.Timezone),
			sql.Named("input", jsonArg(sc.Input)), sql.Named("no_overlap", boolInt(sc.NoOverlap)),
			sql.Named("enabled", boolInt(sc.Enabled)), sql.Named("next_run_at", micros(sc.NextRunAt)),
			sql.Named("created_by", sc.CreatedBy), sql.Named("now", micros(resolveNow(sc.CreatedAt))))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", sc.ID, err)
	}
	return nil
}

// ListSchedules returns a workspace's schedules, oldest first.
func (s *Driver) ListSchedules(ctx context.Context, workspace string) ([]schedule.Schedule, error) {
	rows, err := s.readerQuery(ctx, qScheduleList, sql.Named("workspace", workspace))
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", workspace, err)
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", workspace, err)
	}
	return out, nil
}

// GetSchedule returns one schedule; schedule.ErrNotFound when missing.
func (s *Driver) GetSchedule(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error) {
	rows, err := s.readerQuery(ctx, qScheduleGet, sql.Named("workspace", workspace), sql.Named("id", id))
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("get schedule %s: %w", id, err)
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("get schedule %s: %w", id, err)
	}
	if len(out) == 0 {
		return schedule.Schedule{}, scheduleNotFound(workspace, id)
	}
	return out[0], nil
}

// DueSchedules returns enabled schedules whose tick is at or before now.
func (s *Driver) DueSchedules(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	rows, err := s.readerQuery(ctx, qScheduleDue, sql.Named("now", micros(resolveNow(now))), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	out, err := collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return out, nil
}

// SetScheduleEnabled enables (moving the tick to nextRunAt) or disables a
// schedule.
func (s *Driver) SetScheduleEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error {
	var next any
	if !nextRunAt.IsZero() {
		next = micros(nextRunAt)
	}
	err := s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qScheduleSetEnabled, sql.Named("workspace", workspace), sql.Named("id", id),
			sql.Named("enabled", boolInt(enabled)), sql.Named("next_run_at", next))
		return affectedOne(res, err, workspace, id)
	})
	if err != nil {
		return fmt.Errorf("set schedule %s enabled=%t: %w", id, enabled, err)
	}
	return nil
}

// DeleteSchedule removes a schedule.
func (s *Driver) DeleteSchedule(ctx context.Context, workspace string, id uuid.UUID) error {
	err := s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qScheduleDelete, sql.Named("workspace", workspace), sql.Named("id", id))
		return affectedOne(res, err, workspace, id)
	})
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}

// affectedOne turns an update of no row into schedule.ErrNotFound.
func affectedOne(res sql.Result, err error, workspace string, id uuid.UUID) error {
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return scheduleNotFound(workspace, id)
	}
	return nil
}

// FireTick fires tick t.NextRunAt of schedule t.ID in one write
// transaction: the compare-and-set on the tick, the no-overlap check and
// the enqueue commit together (see schedule.Store). An action that cannot
// run (schedule.Unrunnable) still advances the tick: fired is true, job
// uuid.Nil, and the error says why.
func (s *Driver) FireTick(ctx context.Context, t schedule.Schedule, next time.Time) (bool, uuid.UUID, error) {
	var fired bool
	var job uuid.UUID
	var noJob error
	// Registered, so EnqueueActionTx joins this transaction and its
	// wake-up waits for the commit.
	err := s.writeRegistered(ctx, true, func(w *writeTx) error {
		fired, job, noJob = false, uuid.Nil, nil
		row, ok, err := fireCAS(ctx, w, t, next)
		if err != nil || !ok {
			return err
		}
		fired = true
		if row.noOverlap && row.lastJob.Valid {
			live, err := jobLive(ctx, w, row.lastJob.UUID)
			if err != nil || live {
				return err
			}
		}
		row.tick = t.NextRunAt
		job, noJob, err = s.enqueueTick(ctx, w, t.ID, row)
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
	workspace, app, action, input string
	// tick is the fired tick: the job's scheduled_for, so each job names
	// the tick it belongs to.
	tick      time.Time
	noOverlap bool
	lastJob   uuid.NullUUID
}

// fireCAS moves the tick; ok is false when the tick was already fired, or
// the schedule was disabled or deleted.
func fireCAS(ctx context.Context, w *writeTx, t schedule.Schedule, next time.Time) (firedRow, bool, error) {
	var r firedRow
	err := w.queryRow(ctx, qScheduleFire, sql.Named("id", t.ID),
		sql.Named("tick", micros(t.NextRunAt)), sql.Named("next", micros(next))).
		Scan(&r.workspace, &r.app, &r.action, &r.input, &r.noOverlap, &r.lastJob)
	if errNoRows(err) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("move tick: %w", err)
	}
	return r, true, nil
}

// jobLive reports whether a job is still queued or running.
func jobLive(ctx context.Context, w *writeTx, id uuid.UUID) (bool, error) {
	var live bool
	if err := w.queryRow(ctx, qScheduleJobLive, sql.Named("job_id", id)).Scan(&live); err != nil {
		return false, fmt.Errorf("check previous job %s: %w", id, err)
	}
	return live, nil
}

// Savepoint statements around a tick's enqueue: too small for a file.
const (
	spEnqueueTick         = "SAVEPOINT enqueue_tick"
	spEnqueueTickRollback = "ROLLBACK TO enqueue_tick"
	spEnqueueTickRelease  = "RELEASE enqueue_tick"
)

// enqueueTick enqueues the tick's job through the one enqueue path and
// records it. The enqueue runs in a savepoint: when the action cannot run
// (noJob), whatever it wrote is undone and the moved tick commits alone.
func (s *Driver) enqueueTick(ctx context.Context, w *writeTx, id uuid.UUID, row firedRow) (job uuid.UUID, noJob, err error) {
	if _, err := w.tx.ExecContext(ctx, spEnqueueTick); err != nil {
		return uuid.Nil, nil, fmt.Errorf("savepoint: %w", err)
	}
	res, err := s.EnqueueActionTx(ctx, w.tx, tickRequest(id, row))
	if err != nil {
		if _, rerr := w.tx.ExecContext(ctx, spEnqueueTickRollback); rerr != nil {
			return uuid.Nil, nil, fmt.Errorf("roll back to savepoint: %w", rerr)
		}
		// The rolled-back enqueue must not wake anyone.
		clear(w.tags)
		if schedule.Unrunnable(err) {
			return uuid.Nil, err, nil
		}
		return uuid.Nil, nil, err
	}
	if _, err := w.tx.ExecContext(ctx, spEnqueueTickRelease); err != nil {
		return uuid.Nil, nil, fmt.Errorf("release savepoint: %w", err)
	}
	if _, err := w.exec(ctx, qScheduleSetJob, sql.Named("id", id), sql.Named("job_id", res.ID)); err != nil {
		return uuid.Nil, nil, fmt.Errorf("record job %s: %w", res.ID, err)
	}
	return res.ID, nil, nil
}

// tickRequest is the enqueue request of one tick of schedule id.
func tickRequest(id uuid.UUID, row firedRow) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{
		Workspace: row.workspace, App: row.app, Action: row.action,
		TriggerKind: spine.TriggerSchedule, TriggerRef: schedule.TickRef(id, row.tick),
		CreatedBy: "schedule:" + id.String(), Input: []byte(row.input), ScheduledFor: row.tick,
	}
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

func scheduleNotFound(workspace string, id uuid.UUID) error {
	return fmt.Errorf("%w: %s in workspace %q", schedule.ErrNotFound, id, workspace)
}
