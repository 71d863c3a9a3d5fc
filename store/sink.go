package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/store/driver"
)

var _ sink.Store = (*Store)(nil)

// maxDeliveryPage bounds a page of ListDeliveries.
const maxDeliveryPage = 1000

// CreateSink is sink.Store.CreateSink: Prepare's checks and defaults, then
// one insert that records the outbox position the sink starts after.
func (s *Store) CreateSink(ctx context.Context, sk sink.Sink) (sink.Sink, error) {
	if sk.Workspace == "" {
		return sink.Sink{}, fmt.Errorf("create event sink: %w: no workspace", sink.ErrInvalid)
	}
	if _, err := sink.Prepare(&sk); err != nil {
		return sink.Sink{}, fmt.Errorf("create event sink: %w", err)
	}
	sk.Enabled = true
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		after, err := ex.OutboxLastSeq(ctx)
		if err != nil {
			return fmt.Errorf("read the outbox position: %w", err)
		}
		sk.AfterSeq = after
		return ex.SinkInsert(ctx, sk)
	})
	if err != nil {
		return sink.Sink{}, fmt.Errorf("create event sink %s: %w", sk.ID, err)
	}
	return s.GetSink(ctx, sk.Workspace, sk.ID)
}

// ListSinks is sink.Store.ListSinks.
func (s *Store) ListSinks(ctx context.Context, workspace string) ([]sink.Sink, error) {
	out, err := s.ex.SinkList(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list event sinks: %w", err)
	}
	return out, nil
}

// GetSink is sink.Store.GetSink.
func (s *Store) GetSink(ctx context.Context, workspace, id string) (sink.Sink, error) {
	sk, ok, err := s.ex.SinkGet(ctx, workspace, id)
	if err != nil {
		return sink.Sink{}, fmt.Errorf("read event sink %s: %w", id, err)
	}
	if !ok {
		return sink.Sink{}, sinkNotFound(workspace, id)
	}
	return sk, nil
}

// UpdateSink is sink.Store.UpdateSink: lock, apply and check the patch,
// write, in one transaction.
func (s *Store) UpdateSink(ctx context.Context, workspace, id string, p sink.Patch) (sink.Sink, error) {
	var out sink.Sink
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		sk, ok, err := ex.SinkLock(ctx, workspace, id)
		if err != nil {
			return err
		}
		if !ok {
			return sinkNotFound(workspace, id)
		}
		if err := sink.Apply(&sk, p); err != nil {
			return err
		}
		if _, err := ex.SinkUpdate(ctx, sk); err != nil {
			return err
		}
		out = sk
		return nil
	})
	if err != nil {
		return sink.Sink{}, fmt.Errorf("update event sink %s: %w", id, err)
	}
	return s.GetSink(ctx, out.Workspace, out.ID)
}

// DeleteSink is sink.Store.DeleteSink.
//
// It waits for the fan-out cursor's lock first, so no fan-out that read
// the sink can still commit deliveries of it afterwards.
func (s *Store) DeleteSink(ctx context.Context, workspace, id string) error {
	var ok bool
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		if _, _, err := ex.RelayLockCursor(ctx, true); err != nil {
			return err
		}
		var err error
		ok, err = ex.SinkDelete(ctx, workspace, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete event sink %s: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("delete event sink: %w", sinkNotFound(workspace, id))
	}
	return nil
}

// ListDeliveries is sink.Store.ListDeliveries.
func (s *Store) ListDeliveries(ctx context.Context, workspace, sinkID string, f sink.DeliveryFilter) ([]sink.Delivery, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, fmt.Errorf("list deliveries: %w: status %q: pending, delivered or failed", sink.ErrInvalid, f.Status)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	f.Limit = min(f.Limit, maxDeliveryPage)
	if _, err := s.GetSink(ctx, workspace, sinkID); err != nil {
		return nil, err
	}
	out, err := s.ex.DeliveryList(ctx, workspace, sinkID, f)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of event sink %s: %w", sinkID, err)
	}
	return out, nil
}

// DeliveryCounts is sink.Store.DeliveryCounts.
func (s *Store) DeliveryCounts(ctx context.Context, workspace, sinkID string) (map[sink.Status]int, error) {
	if _, err := s.GetSink(ctx, workspace, sinkID); err != nil {
		return nil, err
	}
	out, err := s.ex.DeliveryCounts(ctx, workspace, sinkID)
	if err != nil {
		return nil, fmt.Errorf("count deliveries of event sink %s: %w", sinkID, err)
	}
	return out, nil
}

// sinkNotFound is sink.ErrNotFound naming the sink.
func sinkNotFound(workspace, id string) error {
	return fmt.Errorf("%w: no event sink %q in workspace %q", sink.ErrNotFound, id, workspace)
}
