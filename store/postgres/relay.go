package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/store/driver"
)

// The relay's queries (queries/relay_*.sql, delivery_*.sql, outbox_sweep.sql).
var (
	qRelayCursor     = mustQuery("relay_cursor")
	qRelayLockCursor = mustQuery("relay_lock_cursor")
	qRelayLockWait   = mustQuery("relay_lock_cursor_wait")
	qDeliveryRetry   = mustQuery("delivery_retry_now")
	qRelaySetCursor  = mustQuery("relay_set_cursor")
	qDeliveryInsert  = mustQuery("delivery_insert")
	qDeliveryClaim   = mustQuery("delivery_claim")
	qDeliverySettle  = mustQuery("delivery_settle")
	qDeliverySweep   = mustQuery("delivery_sweep")
	qOutboxSweep     = mustQuery("outbox_sweep")
)

// RelayCursor is driver.RelayExecutor.RelayCursor.
func (e *executor) RelayCursor(ctx context.Context) (int64, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var seq int64
	err := e.q.QueryRow(ctx, qRelayCursor).Scan(&seq)
	return seq, translate(err)
}

// RelayLockCursor is driver.RelayExecutor.RelayLockCursor.
func (e *executor) RelayLockCursor(ctx context.Context, wait bool) (int64, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	q := qRelayLockCursor
	if wait {
		q = qRelayLockWait
	}
	var seq int64
	err := e.q.QueryRow(ctx, q).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return seq, err == nil, translate(err)
}

// RelaySetCursor is driver.RelayExecutor.RelaySetCursor.
func (e *executor) RelaySetCursor(ctx context.Context, seq int64) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qRelaySetCursor, namedArgs{"seq": seq})
	return translate(err)
}

// DeliveryInsert is driver.RelayExecutor.DeliveryInsert.
func (e *executor) DeliveryInsert(ctx context.Context, ds []sink.Delivery, now time.Time) error {
	if len(ds) == 0 {
		return nil
	}
	n := len(ds)
	ws, sinks, types, subjects := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	seqs, ids := make([]int64, n), make([]uuid.UUID, n)
	for i, d := range ds {
		ws[i], sinks[i], types[i], subjects[i], seqs[i], ids[i] = d.Workspace, d.SinkID, d.EventType, d.Subject, d.EventSeq, d.EventID
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qDeliveryInsert, namedArgs{
		"workspaces": ws, "sink_ids": sinks, "seqs": seqs, "ids": ids, "types": types,
		"subjects": subjects, "now": timeArg(now),
	})
	return translate(err)
}

// DeliveryClaim is driver.RelayExecutor.DeliveryClaim.
func (e *executor) DeliveryClaim(ctx context.Context, p driver.DeliveryClaimParams) ([]sink.Claimed, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qDeliveryClaim, namedArgs{
		"workspace": p.Workspace, "sink_id": p.SinkID, "now": timeArg(p.Now), "lease": p.Lease,
		"lease_ms": p.LeaseFor.Milliseconds(), "limit": p.Limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sink.Claimed, error) {
		var c sink.Claimed
		var status string
		var delivered, failed *time.Time
		var data []byte
		err := row.Scan(&c.Workspace, &c.SinkID, &c.EventSeq, &c.EventID, &c.EventType, &c.Subject,
			&status, &c.Attempts, &c.NextAttemptAt, &c.LastError, &c.CreatedAt, &delivered, &failed,
			&c.Event.Time, &data)
		c.Status, c.DeliveredAt, c.FailedAt = sink.Status(status), ptrTime(delivered), ptrTime(failed)
		c.NextAttemptAt, c.CreatedAt = c.NextAttemptAt.UTC(), c.CreatedAt.UTC()
		c.Event.Seq, c.Event.ID, c.Event.Workspace = c.EventSeq, c.EventID, c.Workspace
		c.Event.Type, c.Event.Subject, c.Event.Time = events.Type(c.EventType), c.Subject, c.Event.Time.UTC()
		c.Event.Data = compactJSON(data)
		return c, err
	})
	if err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// DeliverySettle is driver.RelayExecutor.DeliverySettle.
func (e *executor) DeliverySettle(ctx context.Context, p driver.DeliverySettleParams) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qDeliverySettle, namedArgs{
		"workspace": p.Workspace, "sink_id": p.SinkID, "event_seq": p.EventSeq, "lease": p.Lease,
		"status": string(p.Status), "next_attempt_at": timeArg(p.NextAttemptAt),
		"last_error": p.LastError, "now": timeArg(p.Now),
	})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// DeliveryRetryNow is driver.RelayExecutor.DeliveryRetryNow.
func (e *executor) DeliveryRetryNow(ctx context.Context, workspace, sinkID string, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qDeliveryRetry, namedArgs{"workspace": workspace, "sink_id": sinkID, "now": timeArg(now)})
	return translate(err)
}

// DeliverySweep is driver.RelayExecutor.DeliverySweep.
func (e *executor) DeliverySweep(ctx context.Context, before time.Time, limit int) (int, error) {
	return e.sweepBatch(ctx, qDeliverySweep, before, limit)
}

// OutboxSweep is driver.RelayExecutor.OutboxSweep.
func (e *executor) OutboxSweep(ctx context.Context, before time.Time, limit int) (int, error) {
	return e.sweepBatch(ctx, qOutboxSweep, before, limit)
}

func (e *executor) sweepBatch(ctx context.Context, q string, before time.Time, limit int) (int, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, q, namedArgs{"before": before, "limit": limit})
	if err != nil {
		return 0, translate(err)
	}
	return int(tag.RowsAffected()), nil
}
