package driver

import (
	"context"

	"github.com/windforce/windforce/events"
)

// EventViewExecutor reads what people look at of the events: the newest
// events of a workspace (the API's ?after=now, the console's Events
// page). Readers that go on from a seq use EventExecutor.EventsAfter.
type EventViewExecutor interface {
	// EventsRecent reads the newest limit events of workspace, newest
	// first (limit positive; queries/events_recent.sql).
	EventsRecent(ctx context.Context, workspace string, limit int) ([]events.Event, error)
}
