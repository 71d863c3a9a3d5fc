package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/google/uuid"
	msqlite "modernc.org/sqlite"

	"github.com/windforce/windforce/events"
	storedriver "github.com/windforce/windforce/store/driver"
)

// The events outbox's queries (queries/events_*.sql).
const (
	qEventsAfter         query = "events_after"
	qEventsJobs          query = "events_jobs"
	qEventsJobWorkspaces query = "events_job_workspaces"
	qEventsJobRow        query = "events_job_row"
	qEventsRecorded      query = "events_recorded"
	qEventsFinished      query = "events_finished"
	qEventsSource        query = "events_source"
)

// The SQL functions the event_view (migration 0020) and events_jobs.sql
// call: SQLite cannot write a time or a duration as Go does, nor make a
// UUIDv7.
const (
	timeFunc     = "windforce_time"
	durationFunc = "windforce_duration"
	eventIDFunc  = "windforce_event_id"
)

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(timeFunc, 1, sqlTime)
	msqlite.MustRegisterDeterministicScalarFunction(durationFunc, 1, sqlDuration)
	msqlite.MustRegisterScalarFunction(eventIDFunc, 1, sqlEventID)
}

// sqlTime writes stored microseconds as encoding/json writes a UTC
// time.Time; NULL stays NULL.
func sqlTime(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case int64:
		return fromMicros(v).Format(time.RFC3339Nano), nil
	default:
		return nil, fmt.Errorf("%s: want an integer, got %T", timeFunc, v)
	}
}

// sqlDuration writes stored milliseconds as time.Duration.String does;
// NULL stays NULL (the job row of an event is gone: retention swept it).
func sqlDuration(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case int64:
		return (time.Duration(v) * time.Millisecond).String(), nil
	default:
		return nil, fmt.Errorf("%s: want an integer, got %T", durationFunc, v)
	}
}

// sqlEventID is a new event id (a UUIDv7) for an event at the stored
// microseconds.
func sqlEventID(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	v, ok := args[0].(int64)
	if !ok {
		return nil, fmt.Errorf("%s: want an integer, got %T", eventIDFunc, args[0])
	}
	id, err := events.NewID(fromMicros(v))
	if err != nil {
		return nil, err
	}
	return id.String(), nil
}

// EventsAfter reads the events after seq after, in seq order, on the
// reader pool (driver.EventExecutor). The one writer hands out seqs and
// commits in the same order, so a reader never sees a later event
// without the earlier ones.
func (e *executor) EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error) {
	rows, err := e.read(ctx, qEventsAfter, sql.Named("workspace", workspace), sql.Named("after", after),
		sql.Named("limit", limit))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanEvent)
}

// JobEvents writes p's event for each of its jobs, as they are now
// (driver.EventExecutor).
func (e *executor) JobEvents(ctx context.Context, p storedriver.JobEvents) error {
	if len(p.JobIDs) == 0 {
		return nil
	}
	return e.write(ctx, func(w *writeTx) error {
		return w.jobEvents(ctx, p.Type, p.JobIDs, micros(w.now(p.Now)))
	})
}

// SourceEvent writes p's event of one source (driver.EventExecutor).
func (e *executor) SourceEvent(ctx context.Context, p storedriver.SourceEvent) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qEventsSource, sql.Named("type", string(p.Type)), sql.Named("workspace", p.Workspace),
			sql.Named("subject", p.SourceID), sql.Named("time", micros(w.now(p.Time))), sql.Named("data", string(p.Data)))
		if err != nil {
			return fmt.Errorf("write %s event of source %s: %w", p.Type, p.SourceID, translate(err))
		}
		return nil
	})
}

// jobEvents writes an event of typ at now for each job of ids, in that
// order, for the jobs of the workspaces that have a sink: it reads their
// workspaces first (events_job_workspaces.sql), for the transitions that
// do not know them; see jobGroupEvents.
func (w *writeTx) jobEvents(ctx context.Context, typ events.Type, ids []uuid.UUID, now any) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := w.query(ctx, qEventsJobWorkspaces, sql.Named("ids", idsJSON(ids)))
	if err != nil {
		return fmt.Errorf("read the workspaces of %d jobs: %w", len(ids), translate(err))
	}
	pairs, err := collect(rows, func(rows *sql.Rows) (jobOf, error) {
		var j jobOf
		return j, rows.Scan(&j.workspace, &j.id)
	})
	if err != nil {
		return fmt.Errorf("read the workspaces of %d jobs: %w", len(ids), translate(err))
	}
	var g jobGroups
	for _, j := range pairs {
		g.add(j.workspace, j.id)
	}
	return w.jobGroupEvents(ctx, typ, g, now)
}

// jobOf is one job and its workspace.
type jobOf struct {
	workspace string
	id        uuid.UUID
}

// jobGroupEvents writes an event of typ at now for each job of g, one
// outbox row per workspace in g's order, each row's events in g's order,
// with its state as the job_event view shows it after this transaction's
// writes (events_jobs.sql; event_view builds their data when read,
// migration 0021). A workspace without a sink writes nothing. An empty typ
// is each job's finished event, by its status. now is stored
// microseconds, or nil for the time of the change the job's row shows
// (completion, start or creation).
func (w *writeTx) jobGroupEvents(ctx context.Context, typ events.Type, g jobGroups, now any) error {
	for _, ws := range g.order {
		ids := g.ids[ws]
		if _, err := w.exec(ctx, qEventsJobs, sql.Named("type", string(typ)), sql.Named("workspace", ws),
			sql.Named("ids", idsJSON(ids)), sql.Named("now", now)); err != nil {
			return fmt.Errorf("write %d job events of workspace %s: %w", len(ids), ws, translate(err))
		}
	}
	return nil
}
