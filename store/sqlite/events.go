package sqlite

import (
	"context"
	"database/sql"

	"github.com/windforce/windforce/events"
)

// The events outbox's queries (queries/events_*.sql).
const (
	qEventsAfter query = "events_after"
)

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
	return collect(rows, func(rows *sql.Rows) (events.Event, error) {
		var ev events.Event
		var at int64
		var data string
		err := rows.Scan(&ev.Seq, &ev.ID, &ev.Workspace, &ev.Type, &ev.Subject, &at, &data)
		ev.Time, ev.Data = fromMicros(at), []byte(data)
		return ev, err
	})
}
