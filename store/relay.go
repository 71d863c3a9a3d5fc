package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/store/driver"
)

// maxLastError bounds the error text a delivery keeps.
const maxLastError = 1000

// FanOut makes the deliveries of up to limit outbox events after the
// fan-out cursor, one per event and enabled sink of its workspace that
// wants its type and was created before it, and moves the cursor past
// them, in one transaction: a crash before the commit redoes the pass, a
// crash after loses nothing. It returns how many events it passed; 0 when
// there were none or another server's fan-out holds the cursor.
//
// The events are read before the transaction (EventsAfter answers only
// a final prefix, so the cursor never passes an event still to commit);
// the transaction then checks the cursor did not move meanwhile and reads
// the sinks under its lock, which a sink's delete waits for.
func (s *Store) FanOut(ctx context.Context, now time.Time, limit int) (int, error) {
	cursor, err := s.ex.RelayCursor(ctx)
	if err != nil {
		return 0, fmt.Errorf("fan out events: read the cursor: %w", err)
	}
	evs, err := s.EventsAfter(ctx, "", cursor, limit)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	passed := 0
	err = s.ex.Tx(ctx, func(ex driver.Executor) error {
		cur, ok, err := ex.RelayLockCursor(ctx, false)
		if err != nil || !ok || cur != cursor {
			return err // another server's fan-out has or had the pass
		}
		sinks, err := ex.SinkList(ctx, "")
		if err != nil {
			return err
		}
		if err := ex.DeliveryInsert(ctx, deliveriesOf(evs, sinks), now); err != nil {
			return err
		}
		passed = len(evs)
		return ex.RelaySetCursor(ctx, evs[len(evs)-1].Seq)
	})
	if err != nil {
		return 0, fmt.Errorf("fan out events after %d: %w", cursor, err)
	}
	return passed, nil
}

// deliveriesOf is one delivery per event and sink that receives it.
func deliveriesOf(evs []events.Event, sinks []sink.Sink) []sink.Delivery {
	byWorkspace := map[string][]sink.Sink{}
	for _, sk := range sinks {
		if sk.Enabled {
			byWorkspace[sk.Workspace] = append(byWorkspace[sk.Workspace], sk)
		}
	}
	var out []sink.Delivery
	for _, ev := range evs {
		for _, sk := range byWorkspace[ev.Workspace] {
			if ev.Seq > sk.AfterSeq && sk.Wants(string(ev.Type)) {
				out = append(out, sink.Delivery{Workspace: ev.Workspace, SinkID: sk.ID, EventSeq: ev.Seq,
					EventID: ev.ID, EventType: string(ev.Type), Subject: ev.Subject})
			}
		}
	}
	return out
}

// ClaimDeliveries leases up to limit due deliveries of one sink for one
// attempt each under lease, for leaseFor from now (zero: the database's
// clock), in seq order and never two pending events of one subject at
// once (driver.RelayExecutor.DeliveryClaim).
func (s *Store) ClaimDeliveries(ctx context.Context, workspace, sinkID string, now time.Time, lease uuid.UUID, leaseFor time.Duration, limit int) ([]sink.Claimed, error) {
	if limit <= 0 || leaseFor <= 0 {
		return nil, fmt.Errorf("claim deliveries: limit %d and lease %s must be positive", limit, leaseFor)
	}
	out, err := s.ex.DeliveryClaim(ctx, driver.DeliveryClaimParams{
		Workspace: workspace, SinkID: sinkID, Now: now, Lease: lease, LeaseFor: leaseFor, Limit: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries of event sink %s: %w", sinkID, err)
	}
	return out, nil
}

// SettleDelivery ends the attempt of c under lease: delivered when sendErr
// is nil; otherwise, by sink.Retry, pending again after its backoff, or
// failed for good once the next attempt would fall past sink.MaxAge. now
// is the relay's clock (zero: the database's, and time.Now for the
// backoff). It returns the status written; a lease that ran out and was
// taken by another attempt writes nothing and answers "" (that attempt
// settles the delivery).
func (s *Store) SettleDelivery(ctx context.Context, c sink.Claimed, lease uuid.UUID, now time.Time, sendErr error) (sink.Status, error) {
	p := driver.DeliverySettleParams{Workspace: c.Workspace, SinkID: c.SinkID, EventSeq: c.EventSeq,
		Lease: lease, Status: sink.StatusDelivered, Now: now}
	if sendErr != nil {
		p.LastError = truncate(sendErr.Error(), maxLastError)
		wall := now
		if wall.IsZero() {
			wall = time.Now()
		}
		next, failed := sink.Retry(c.CreatedAt, wall, c.Attempts)
		p.Status, p.NextAttemptAt = sink.StatusPending, next
		if failed {
			p.Status = sink.StatusFailed
		}
	}
	ok, err := s.ex.DeliverySettle(ctx, p)
	if err != nil {
		return "", fmt.Errorf("settle delivery %d to event sink %s: %w", c.EventSeq, c.SinkID, err)
	}
	if !ok {
		return "", nil
	}
	return p.Status, nil
}

// RetryDeliveriesNow makes a sink's deliveries that wait out a backoff
// due at now (zero: the database's clock): the sink is reachable again.
func (s *Store) RetryDeliveriesNow(ctx context.Context, workspace, sinkID string, now time.Time) error {
	if err := s.ex.DeliveryRetryNow(ctx, workspace, sinkID, now); err != nil {
		return fmt.Errorf("retry deliveries of event sink %s now: %w", sinkID, err)
	}
	return nil
}

// sweepEvents deletes, in batches, settled deliveries settled before
// before, then the outbox events before before that no delivery names
// any more (part of Sweep, as finished jobs are).
func (s *Store) sweepEvents(ctx context.Context, before time.Time, batch int) error {
	for _, step := range []struct {
		what string
		op   func(context.Context, time.Time, int) (int, error)
	}{{"settled deliveries", s.ex.DeliverySweep}, {"delivered events", s.ex.OutboxSweep}} {
		for {
			n, err := step.op(ctx, before, batch)
			if err != nil {
				return fmt.Errorf("sweep %s: %w", step.what, err)
			}
			if n < batch {
				break
			}
		}
	}
	return nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
