package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/events"
)

// What people look at of the events (queries/events_recent.sql).
var (
	qEventsRecent = mustQuery("events_recent")
)

// EventsRecent is driver.EventViewExecutor.EventsRecent.
func (e *executor) EventsRecent(ctx context.Context, workspace string, limit int) ([]events.Event, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qEventsRecent, namedArgs{"workspace": workspace, "limit": limit})
	if err != nil {
		return nil, translate(err)
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, translate(err)
	}
	return evs, nil
}

// scanEvent reads one event_outbox row (seq, id, workspace, type,
// subject, time, data).
func scanEvent(row pgx.CollectableRow) (events.Event, error) {
	var ev events.Event
	var typ string
	err := row.Scan(&ev.Seq, &ev.ID, &ev.Workspace, &typ, &ev.Subject, &ev.Time, &ev.Data)
	ev.Type, ev.Time = events.Type(typ), ev.Time.UTC()
	return ev, err
}
