package driver

import (
	"context"

	"github.com/windforce/windforce/events/sink"
)

// SinkExecutor keeps event sinks and reads their deliveries. Its lookups
// answer ok false for a missing row: that this is sink.ErrNotFound is the
// core's rule, written once.
type SinkExecutor interface {
	// SinkInsert stores s as given (a checked sink; a zero CreatedAt is
	// the database's clock, also for UpdatedAt). An id the workspace has
	// already is spine.ErrConflict.
	SinkInsert(ctx context.Context, s sink.Sink) error
	// SinkList reads the sinks of workspace, oldest first (created_at,
	// then id), or of every workspace when it is "".
	SinkList(ctx context.Context, workspace string) ([]sink.Sink, error)
	// SinkGet reads one sink; ok is false when there is none.
	SinkGet(ctx context.Context, workspace, id string) (s sink.Sink, ok bool, err error)
	// SinkLock reads one sink for an update in the same transaction (on
	// Postgres FOR UPDATE; on SQLite the one writer is the lock).
	SinkLock(ctx context.Context, workspace, id string) (s sink.Sink, ok bool, err error)
	// SinkUpdate writes s's url, subject, types, enabled and secret, and
	// sets updated_at (a zero UpdatedAt is the database's clock); ok is
	// false when there is no such sink.
	SinkUpdate(ctx context.Context, s sink.Sink) (ok bool, err error)
	// SinkDelete deletes a sink and all its deliveries; ok is false when
	// there was no such sink.
	SinkDelete(ctx context.Context, workspace, id string) (ok bool, err error)
	// DeliveryCounts counts a sink's deliveries per status (a status
	// without any is absent).
	DeliveryCounts(ctx context.Context, workspace, sinkID string) (map[sink.Status]int, error)
	// OutboxLastSeq reads the highest seq of event_outbox (0 when empty):
	// a sink created now receives the events after it.
	OutboxLastSeq(ctx context.Context) (int64, error)
	// DeliveryList reads a page of a sink's deliveries, the newest event
	// first (f.Limit positive, f.Status "" or valid).
	DeliveryList(ctx context.Context, workspace, sinkID string, f sink.DeliveryFilter) ([]sink.Delivery, error)
}
