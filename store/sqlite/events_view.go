package sqlite

import (
	"context"
	"database/sql"

	"github.com/windforce/windforce/events"
)

// What people look at of the events (queries/events_recent.sql).
const (
	qEventsRecent query = "events_recent"
)

// EventsRecent is driver.EventViewExecutor.EventsRecent, on the reader
// pool.
func (e *executor) EventsRecent(ctx context.Context, workspace string, limit int) ([]events.Event, error) {
	rows, err := e.read(ctx, qEventsRecent, sql.Named("workspace", workspace), sql.Named("limit", limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanEvent)
}

// scanEvent reads one event_outbox row (seq, id, workspace, type,
// subject, time, data).
func scanEvent(rows *sql.Rows) (events.Event, error) {
	var ev events.Event
	var at int64
	var data string
	err := rows.Scan(&ev.Seq, &ev.ID, &ev.Workspace, &ev.Type, &ev.Subject, &at, &data)
	ev.Time, ev.Data = fromMicros(at), []byte(data)
	return ev, err
}
