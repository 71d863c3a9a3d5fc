package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule"
)

// ScheduleExecutor keeps schedules and fires their ticks. The operations
// are single statements; the core (store.Store.FireTick) composes the
// tick's compare-and-set, no-overlap check, enqueue and bookkeeping in one
// transaction.
type ScheduleExecutor interface {
	// ScheduleCreate inserts s as given (ID, NextRunAt set; a zero
	// CreatedAt means the database's clock). A duplicate id is
	// spine.ErrConflict; a value the schema refuses is spine.ErrInvalid.
	ScheduleCreate(ctx context.Context, s schedule.Schedule) error
	// ScheduleList returns the schedules of workspace, oldest first
	// (created_at, then id).
	ScheduleList(ctx context.Context, workspace string) ([]schedule.Schedule, error)
	// ScheduleGet returns schedule id of workspace; schedule.ErrNotFound
	// (bare: the core says which) when there is none.
	ScheduleGet(ctx context.Context, workspace string, id uuid.UUID) (schedule.Schedule, error)
	// ScheduleDue returns at most limit enabled schedules whose next_run_at
	// is at or before now (zero: the database's clock), earliest first.
	ScheduleDue(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error)
	// ScheduleSetEnabled sets enabled; enabling a disabled schedule moves
	// its tick to nextRunAt (zero keeps it), anything else keeps the tick a
	// fire in flight compares against. schedule.ErrNotFound (bare) when the
	// schedule does not exist.
	ScheduleSetEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error
	// ScheduleDelete removes a schedule (its jobs stay); schedule.ErrNotFound
	// (bare) when it does not exist.
	ScheduleDelete(ctx context.Context, workspace string, id uuid.UUID) error

	// ScheduleFire is the compare-and-set that wins tick of schedule id:
	// it moves next_run_at from tick to next and sets last_run_at to tick,
	// only while the schedule is enabled and still at tick. ok is false
	// when nothing moved (another server won the tick, or the schedule was
	// disabled, moved or deleted); that is not an error.
	ScheduleFire(ctx context.Context, id uuid.UUID, tick, next time.Time) (row ScheduleFired, ok bool, err error)
	// ScheduleJobLive reports whether job is still queued or running (it
	// has a job_queue row); false for a finished or unknown job.
	ScheduleJobLive(ctx context.Context, job uuid.UUID) (bool, error)
	// ScheduleSetJob records job as the last job of schedule id (no error
	// when the schedule does not exist: it fired in this transaction).
	ScheduleSetJob(ctx context.Context, id, job uuid.UUID) error
	// ScheduleHandOver moves last_job_id from oldJob to newJob on every
	// schedule that points at oldJob, so a requeued tick's replacement
	// still counts for no-overlap. None pointing at it is no error.
	ScheduleHandOver(ctx context.Context, oldJob, newJob uuid.UUID) error
}

// ScheduleFired is what ScheduleFire returns of the schedule whose tick it
// moved: what the tick's job is made of, and what no-overlap checks.
type ScheduleFired struct {
	Workspace, App, Action string
	// Input is the schedule's fixed input, as compact JSON.
	Input     json.RawMessage
	NoOverlap bool
	// LastJobID is the job of the previous tick that made one (nil: none).
	LastJobID *uuid.UUID
}
