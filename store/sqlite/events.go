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
	return collect(rows, scanEvent)
}
