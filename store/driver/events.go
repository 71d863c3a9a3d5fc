package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
)

// EventExecutor reads and writes the events outbox (event_outbox, DESIGN
// §9). Every state change writes its events in its own transaction. The
// tuned operations write theirs themselves, in the same statement on
// Postgres: EnqueueInsert and EnqueueInsertBatch job.queued for each job
// they insert (a fold writes none), Claim job.started for each job
// claimed, Complete, CompleteBatch and the finished entries of
// WriteFailures the event of the status they wrote (job.succeeded,
// job.failed or job.canceled). For the other changes (cancel, reopen,
// retry, release, the reaper) the core calls JobEvents after the change,
// in its transaction. Each job event's data is the job in its API shape
// without input, as the change left it: built once per database (the
// job_event view and, on Postgres, job_event_data, migration 0019). A
// source's events (source.synced, source.sync_failed) are written by the
// core with SourceEvent in the transaction that records the sync's
// outcome; their data, the source's API view, is built in Go once for
// both databases (source.ViewOf).
type EventExecutor interface {
	// JobEvents writes an event of p.Type for each job of p.JobIDs, in that
	// order, with its data as the job is now in this transaction
	// (queries/events_jobs.sql). A job id with no job row writes nothing.
	JobEvents(ctx context.Context, p JobEvents) error
	// SourceEvent writes p as one event whose subject is p.SourceID
	// (queries/events_source.sql). Like every event write it writes
	// nothing while p.Workspace has no sink.
	SourceEvent(ctx context.Context, p SourceEvent) error

	// EventsAfter reads up to limit events with seq > after, in seq order,
	// of workspace (every workspace when it is ""). It answers only a
	// prefix that is final: no transaction still in flight can commit an
	// event below the last one it returns, so a reader that goes on
	// after the last seq it got never misses one (queries/events_after.sql).
	// limit is positive (the core checks it).
	EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error)
}

// JobEvents is one event type for some jobs, written as the jobs are
// right after a change, in its transaction.
type JobEvents struct {
	Type   events.Type
	JobIDs []uuid.UUID
	// Now is the event time; zero means the database's clock (on SQLite
	// the transaction's).
	Now time.Time
}

// SourceEvent is one event of a git source, written in the transaction
// of the change it reports.
type SourceEvent struct {
	Type      events.Type
	Workspace string
	SourceID  string
	// Time is the event time, the change's as stored (the source's
	// synced_at or error_at); zero means the database's clock.
	Time time.Time
	// Data is the source's API view as the change left it.
	Data json.RawMessage
}
