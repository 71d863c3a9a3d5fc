package driver

import (
	"context"

	"github.com/windforce/windforce/events"
)

// EventExecutor reads the events outbox (event_outbox, DESIGN §9). The
// writes are part of each state change's own operations, in its
// transaction.
type EventExecutor interface {
	// EventsAfter reads up to limit events with seq > after, in seq order,
	// of workspace (every workspace when it is ""). It answers only a
	// prefix that is final: no transaction still in flight can commit an
	// event below the last one it returns, so a reader that goes on
	// after the last seq it got never misses one (queries/events_after.sql).
	// limit is positive (the core checks it).
	EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error)
}
