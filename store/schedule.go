package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ schedule.Store = (*Store)(nil)

// CreateSchedule stores s (ID, NextRunAt and CreatedAt set by the caller).
func (s *Store) CreateSchedule(ctx context.Context, sc schedule.Schedule) error {
	if err := s.ex.ScheduleCreate(ctx, sc); err != nil {
		return fmt.Errorf("create schedule %s: %w", sc.ID, err)
	}
	return nil
}

// ListSchedules returns a workspace's schedules, oldest first.
func (s *Store) ListSchedules(ctx context.Context, workspace string) ([]schedule.Schedule, error) {
	out, err := s.ex.ScheduleList(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list schedules of %s: %w", workspace, err)
	}
	return out, nil
}

// GetSchedule returns one schedule; ErrNotFound (which matches
// spine.ErrNotFound) when missing.
func (s *Store) GetSchedule(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error) {
	sc, err := s.ex.ScheduleGet(ctx, workspace, id)
	if errors.Is(err, schedule.ErrNotFound) {
		return schedule.Schedule{}, scheduleNotFound(workspace, id)
	}
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("get schedule %s: %w", id, err)
	}
	return sc, nil
}

// SetScheduleEnabled enables or disables a schedule; enabling sets the
// next tick to nextRunAt. ErrNotFound when missing.
func (s *Store) SetScheduleEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error {
	if err := s.ex.ScheduleSetEnabled(ctx, workspace, id, enabled, nextRunAt); err != nil {
		return fmt.Errorf("set schedule %s enabled=%t: %w", id, enabled, orNotFound(err, workspace, id))
	}
	return nil
}

// DeleteSchedule removes a schedule; ErrNotFound when missing.
func (s *Store) DeleteSchedule(ctx context.Context, workspace string, id uuid.UUID) error {
	if err := s.ex.ScheduleDelete(ctx, workspace, id); err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, orNotFound(err, workspace, id))
	}
	return nil
}

// DueSchedules returns enabled schedules whose NextRunAt <= now
// (zero now: the store's clock), earliest first.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	out, err := s.ex.ScheduleDue(ctx, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return out, nil
}

// scheduleNotFound is the one error of a schedule that is not there:
// "schedule not found: <id> in workspace "<ws>"", matching
// schedule.ErrNotFound and spine.ErrNotFound.
func scheduleNotFound(workspace string, id uuid.UUID) error {
	return fmt.Errorf("%w: %s in workspace %q", schedule.ErrNotFound, id, workspace)
}

// orNotFound is err, or scheduleNotFound when the driver found no
// schedule.
func orNotFound(err error, workspace string, id uuid.UUID) error {
	if errors.Is(err, schedule.ErrNotFound) {
		return scheduleNotFound(workspace, id)
	}
	return err
}

// FireTick fires the tick t.NextRunAt of schedule t.ID, once across all
// servers: in one transaction it moves NextRunAt from t.NextRunAt to
// next (compare-and-set: a second server sees the moved row and does
// nothing) and, unless skipped by no-overlap, enqueues the job through
// the one enqueue path with trigger_kind schedule. fired reports
// whether this call won the tick; job is uuid.Nil when skipped.
// When the action cannot run (Unrunnable: gone from the catalog, or
// the input no longer matches its schema) the tick still moves: fired
// is true, job uuid.Nil, and err says why. Any other error moves
// nothing (fired false), so the next pass tries the tick again.
//
// The compare-and-set, the no-overlap check and the enqueue commit
// together, so a crash leaves all of them or none. The enqueue runs in a
// savepoint: when the action cannot run, only the savepoint is rolled
// back (with whatever the enqueue wrote) and the moved tick commits alone.
func (s *Store) FireTick(ctx context.Context, t schedule.Schedule, next time.Time) (bool, uuid.UUID, error) {
	var fired bool
	var job uuid.UUID
	var noJob error
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		// Reset: the driver may run fn again.
		fired, job, noJob = false, uuid.Nil, nil
		row, ok, err := ex.ScheduleFire(ctx, t.ID, t.NextRunAt, next)
		if err != nil {
			return fmt.Errorf("move tick: %w", err)
		}
		if !ok {
			return nil
		}
		fired = true
		if row.NoOverlap && row.LastJobID != nil {
			live, err := ex.ScheduleJobLive(ctx, *row.LastJobID)
			if err != nil {
				return fmt.Errorf("check previous job %s: %w", *row.LastJobID, err)
			}
			if live {
				return nil
			}
		}
		var res spine.EnqueueResult
		err = ex.Tx(ctx, func(ex driver.Executor) error {
			var err error
			res, err = s.enqueueAction(ctx, ex, tickRequest(t.ID, t.NextRunAt, row))
			return err
		})
		if schedule.Unrunnable(err) {
			noJob = err
			return nil
		}
		if err != nil {
			return err
		}
		if err := ex.ScheduleSetJob(ctx, t.ID, res.ID); err != nil {
			return fmt.Errorf("record job %s: %w", res.ID, err)
		}
		job = res.ID
		return nil
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

// tickRequest is the enqueue request of tick of schedule id: the job's
// scheduled_for is the tick, so each job names the tick it belongs to.
func tickRequest(id uuid.UUID, tick time.Time, row driver.ScheduleFired) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{
		Workspace: row.Workspace, App: row.App, Action: row.Action,
		TriggerKind: spine.TriggerSchedule, TriggerRef: schedule.TickRef(id, tick),
		CreatedBy: "schedule:" + id.String(), Input: row.Input, ScheduledFor: tick,
	}
}
