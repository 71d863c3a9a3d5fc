package sink

import (
	"context"

	"github.com/windforce/windforce/spine"
)

// ErrNotFound means the workspace has no such sink. It matches
// spine.ErrNotFound, so the API answers 404.
var ErrNotFound = spine.NotFound("event sink not found")

// Store keeps sinks and reads their deliveries; the store core (package
// store) implements it on both databases.
type Store interface {
	// CreateSink checks s (Prepare: defaults, a generated id and webhook
	// secret) and stores it, enabled, receiving the events written after
	// this call; it returns the sink as stored, secret included. A refused
	// sink matches ErrInvalid and stores nothing; an id the workspace
	// already has is spine.ErrConflict.
	CreateSink(ctx context.Context, s Sink) (Sink, error)
	// ListSinks returns the workspace's sinks, oldest first.
	ListSinks(ctx context.Context, workspace string) ([]Sink, error)
	// GetSink returns one sink; ErrNotFound when missing.
	GetSink(ctx context.Context, workspace, id string) (Sink, error)
	// UpdateSink applies p to a sink in one transaction and returns it as
	// stored; ErrInvalid (nothing changed) or ErrNotFound.
	UpdateSink(ctx context.Context, workspace, id string, p Patch) (Sink, error)
	// DeleteSink removes a sink and its deliveries; ErrNotFound when
	// missing.
	DeleteSink(ctx context.Context, workspace, id string) error
	// ListDeliveries returns a page of a sink's deliveries, newest event
	// first; ErrNotFound when the sink is missing.
	ListDeliveries(ctx context.Context, workspace, sinkID string, f DeliveryFilter) ([]Delivery, error)
	// DeliveryCounts counts a sink's deliveries per status (a status with
	// none is absent); ErrNotFound when the sink is missing.
	DeliveryCounts(ctx context.Context, workspace, sinkID string) (map[Status]int, error)
}
