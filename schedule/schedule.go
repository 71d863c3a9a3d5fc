package schedule

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Schedule is a cron trigger of one action with a fixed input.
type Schedule struct {
	ID        uuid.UUID
	Workspace string
	App       string
	Action    string
	// Cron has 5 fields (minute precision) or 6 (leading seconds).
	Cron string
	// Timezone is an IANA name ("Europe/Berlin"); "" means UTC.
	Timezone string
	Input    json.RawMessage
	// NoOverlap skips a tick while the job of the previous tick is still
	// queued or running.
	NoOverlap bool
	Enabled   bool
	// NextRunAt is the next tick; it is the unique key that lets only one
	// of many servers fire it.
	NextRunAt time.Time
	// LastRunAt is the last tick fired, whether it made a job or was
	// skipped (no-overlap, an action that cannot run); LastJobID is the
	// last job a tick made (or, after a requeue, its replacement).
	LastRunAt *time.Time
	LastJobID *uuid.UUID
	CreatedBy string
	CreatedAt time.Time
}

// Store keeps schedules; the store core (package store) implements it on
// the same database as the spine and the catalog, so firing a tick and
// enqueueing its job commit together.
type Store interface {
	// CreateSchedule stores s (ID, NextRunAt and CreatedAt set by the caller).
	CreateSchedule(ctx context.Context, s Schedule) error
	// ListSchedules returns a workspace's schedules, oldest first.
	ListSchedules(ctx context.Context, workspace string) ([]Schedule, error)
	// GetSchedule returns one schedule; ErrNotFound (which matches
	// spine.ErrNotFound) when missing.
	GetSchedule(ctx context.Context, workspace string, id uuid.UUID) (Schedule, error)
	// SetScheduleEnabled enables or disables a schedule; enabling sets the
	// next tick to nextRunAt. ErrNotFound when missing.
	SetScheduleEnabled(ctx context.Context, workspace string, id uuid.UUID, enabled bool, nextRunAt time.Time) error
	// DeleteSchedule removes a schedule; ErrNotFound when missing.
	DeleteSchedule(ctx context.Context, workspace string, id uuid.UUID) error
	// DueSchedules returns enabled schedules whose NextRunAt <= now
	// (zero now: the store's clock), earliest first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error)
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
	FireTick(ctx context.Context, t Schedule, next time.Time) (fired bool, job uuid.UUID, err error)
}

// TickRef is the trigger_ref of the job a tick makes: the schedule's id
// and the tick, so every job names the tick it belongs to and a tick that
// fired twice would show as two jobs with one TickRef.
func TickRef(id uuid.UUID, tick time.Time) string {
	return id.String() + "@" + tick.UTC().Format(time.RFC3339Nano)
}
