package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/store/driver"
)

// The relay's queries (queries/relay_*.sql, delivery_*.sql, outbox_sweep.sql).
const (
	qRelayCursor         query = "relay_cursor"
	qRelaySetCursor      query = "relay_set_cursor"
	qDeliveryInsert      query = "delivery_insert"
	qDeliveryClaimPick   query = "delivery_claim_pick"
	qDeliveryClaimEvents query = "delivery_claim_events"
	qDeliveryClaimLease  query = "delivery_claim_lease"
	qDeliverySettle      query = "delivery_settle"
	qDeliveryRetryNow    query = "delivery_retry_now"
	qDeliverySweep       query = "delivery_sweep"
	qOutboxSweep         query = "outbox_sweep"
)

// RelayCursor is driver.RelayExecutor.RelayCursor.
func (e *executor) RelayCursor(ctx context.Context) (int64, error) {
	rows, err := e.read(ctx, qRelayCursor)
	if err != nil {
		return 0, translate(err)
	}
	out, err := collect(rows, scanInt64)
	if err != nil || len(out) == 0 {
		return 0, err
	}
	return out[0], nil
}

// RelayLockCursor is driver.RelayExecutor.RelayLockCursor: the one writer
// is the lock, so it reads the cursor, always ok.
func (e *executor) RelayLockCursor(ctx context.Context, _ bool) (int64, bool, error) {
	var seq int64
	err := e.write(ctx, func(w *writeTx) error {
		return translate(w.queryRow(ctx, qRelayCursor).Scan(&seq))
	})
	return seq, err == nil, err
}

// RelaySetCursor is driver.RelayExecutor.RelaySetCursor.
func (e *executor) RelaySetCursor(ctx context.Context, seq int64) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qRelaySetCursor, sql.Named("seq", seq))
		return translate(err)
	})
}

// DeliveryInsert is driver.RelayExecutor.DeliveryInsert.
func (e *executor) DeliveryInsert(ctx context.Context, ds []sink.Delivery, now time.Time) error {
	if len(ds) == 0 {
		return nil
	}
	rows := make([][]any, len(ds))
	for i, d := range ds {
		rows[i] = []any{d.Workspace, d.SinkID, d.EventSeq, d.EventID.String(), d.EventType, d.Subject}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("encode deliveries: %w", err)
	}
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qDeliveryInsert, sql.Named("deliveries", string(b)),
			sql.Named("now", micros(resolveNow(now))))
		return translate(err)
	})
}

// DeliveryClaim is driver.RelayExecutor.DeliveryClaim: the pick, the
// read of the picked deliveries' events and the lease in one write
// transaction. A delivery whose event is gone is not claimed (the sweep
// keeps every event a delivery names).
func (e *executor) DeliveryClaim(ctx context.Context, p driver.DeliveryClaimParams) ([]sink.Claimed, error) {
	now := resolveNow(p.Now)
	var out []sink.Claimed
	err := e.write(ctx, func(w *writeTx) error {
		rows, err := w.query(ctx, qDeliveryClaimPick, sql.Named("workspace", p.Workspace),
			sql.Named("sink_id", p.SinkID), sql.Named("now", micros(now)), sql.Named("limit", p.Limit))
		if err != nil {
			return translate(err)
		}
		if out, err = collect(rows, scanClaimed); err != nil || len(out) == 0 {
			return translate(err)
		}
		if out, err = w.claimedEvents(ctx, out); err != nil || len(out) == 0 {
			return err
		}
		seqs := make([]int64, len(out))
		for i := range out {
			out[i].Attempts++
			seqs[i] = out[i].EventSeq
		}
		list, err := json.Marshal(seqs)
		if err != nil {
			return fmt.Errorf("encode seqs: %w", err)
		}
		_, err = w.exec(ctx, qDeliveryClaimLease, sql.Named("workspace", p.Workspace),
			sql.Named("sink_id", p.SinkID), sql.Named("seqs", string(list)), sql.Named("lease", p.Lease.String()),
			sql.Named("leased_until", micros(now.Add(p.LeaseFor))))
		return translate(err)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimedEvents fills each picked delivery's event (delivery_claim_events:
// each outbox row holding one expanded once) and keeps those that have
// one, in their order.
func (w *writeTx) claimedEvents(ctx context.Context, cs []sink.Claimed) ([]sink.Claimed, error) {
	seqs := make([]int64, len(cs))
	for i, c := range cs {
		seqs[i] = c.EventSeq
	}
	list, err := json.Marshal(seqs)
	if err != nil {
		return nil, fmt.Errorf("encode seqs: %w", err)
	}
	rows, err := w.query(ctx, qDeliveryClaimEvents, sql.Named("seqs", string(list)))
	if err != nil {
		return nil, fmt.Errorf("read claimed events: %w", translate(err))
	}
	evs, err := collect(rows, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("read claimed events: %w", translate(err))
	}
	bySeq := make(map[int64]events.Event, len(evs))
	for _, ev := range evs {
		bySeq[ev.Seq] = ev
	}
	kept := cs[:0]
	for _, c := range cs {
		ev, ok := bySeq[c.EventSeq]
		if !ok {
			continue
		}
		// the delivery's own columns, as it was made, and the event's time
		// and data
		c.Event = events.Event{Seq: c.EventSeq, ID: c.EventID, Workspace: c.Workspace,
			Type: events.Type(c.EventType), Subject: c.Subject, Time: ev.Time, Data: ev.Data}
		kept = append(kept, c)
	}
	return kept, nil
}

// DeliverySettle is driver.RelayExecutor.DeliverySettle.
func (e *executor) DeliverySettle(ctx context.Context, p driver.DeliverySettleParams) (bool, error) {
	var next any
	if !p.NextAttemptAt.IsZero() {
		next = micros(p.NextAttemptAt)
	}
	var ok bool
	err := e.write(ctx, func(w *writeTx) error {
		var err error
		ok, err = touched(w.exec(ctx, qDeliverySettle, sql.Named("workspace", p.Workspace),
			sql.Named("sink_id", p.SinkID), sql.Named("event_seq", p.EventSeq), sql.Named("lease", p.Lease.String()),
			sql.Named("status", string(p.Status)), sql.Named("next_attempt_at", next),
			sql.Named("last_error", p.LastError), sql.Named("now", micros(resolveNow(p.Now)))))
		return err
	})
	return ok, err
}

// DeliveryRetryNow is driver.RelayExecutor.DeliveryRetryNow.
func (e *executor) DeliveryRetryNow(ctx context.Context, workspace, sinkID string, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qDeliveryRetryNow, sql.Named("workspace", workspace), sql.Named("sink_id", sinkID),
			sql.Named("now", micros(resolveNow(now))))
		return translate(err)
	})
}

// DeliverySweep is driver.RelayExecutor.DeliverySweep.
func (e *executor) DeliverySweep(ctx context.Context, before time.Time, limit int) (int, error) {
	return e.sweepBatch(ctx, qDeliverySweep, before, limit)
}

// OutboxSweep is driver.RelayExecutor.OutboxSweep.
func (e *executor) OutboxSweep(ctx context.Context, before time.Time, limit int) (int, error) {
	return e.sweepBatch(ctx, qOutboxSweep, before, limit)
}

func (e *executor) sweepBatch(ctx context.Context, q query, before time.Time, limit int) (int, error) {
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, q, sql.Named("before", micros(before)), sql.Named("limit", limit))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

func scanInt64(rows *sql.Rows) (int64, error) {
	var n int64
	return n, rows.Scan(&n)
}

// scanClaimed reads one delivery_claim_pick row; claimedEvents adds its
// event.
func scanClaimed(rows *sql.Rows) (sink.Claimed, error) {
	var c sink.Claimed
	var status string
	var next, created int64
	var delivered, failed sql.NullInt64
	err := rows.Scan(&c.Workspace, &c.SinkID, &c.EventSeq, &c.EventID, &c.EventType, &c.Subject,
		&status, &c.Attempts, &next, &c.LastError, &created, &delivered, &failed)
	c.Status, c.NextAttemptAt, c.CreatedAt = sink.Status(status), fromMicros(next), fromMicros(created)
	c.DeliveredAt, c.FailedAt = nullTime(delivered), nullTime(failed)
	return c, err
}
