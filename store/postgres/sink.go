package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/events/sink"
)

// The event sink queries (queries/sink_*.sql, delivery_list.sql).
var (
	qSinkInsert   = mustQuery("sink_insert")
	qSinkList     = mustQuery("sink_list")
	qSinkGet      = mustQuery("sink_get")
	qSinkLock     = mustQuery("sink_lock")
	qSinkUpdate   = mustQuery("sink_update")
	qSinkDelete   = mustQuery("sink_delete")
	qDeliveryList = mustQuery("delivery_list")
	qOutboxLast   = mustQuery("outbox_last_seq")
	qDeliveryCnt  = mustQuery("delivery_counts")
)

// DeliveryCounts is driver.SinkExecutor.DeliveryCounts.
func (e *executor) DeliveryCounts(ctx context.Context, workspace, sinkID string) (map[sink.Status]int, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qDeliveryCnt, namedArgs{"workspace": workspace, "sink_id": sinkID})
	if err != nil {
		return nil, translate(err)
	}
	out := map[sink.Status]int{}
	var st string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&st, &n}, func() error {
		out[sink.Status(st)] = n
		return nil
	})
	return out, translate(err)
}

// OutboxLastSeq is driver.SinkExecutor.OutboxLastSeq.
func (e *executor) OutboxLastSeq(ctx context.Context) (int64, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var seq int64
	err := e.q.QueryRow(ctx, qOutboxLast).Scan(&seq)
	return seq, translate(err)
}

// SinkInsert is driver.SinkExecutor.SinkInsert.
func (e *executor) SinkInsert(ctx context.Context, s sink.Sink) error {
	types, err := typesArg(s.Types)
	if err != nil {
		return err
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err = e.q.Exec(ctx, qSinkInsert, namedArgs{
		"workspace": s.Workspace, "id": s.ID, "kind": string(s.Kind), "url": s.URL,
		"subject": s.Subject, "types": types, "secret": s.Secret, "enabled": s.Enabled,
		"after_seq": s.AfterSeq, "created_by": s.CreatedBy, "now": timeArg(s.CreatedAt),
	})
	return translate(err)
}

// SinkList is driver.SinkExecutor.SinkList.
func (e *executor) SinkList(ctx context.Context, workspace string) ([]sink.Sink, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSinkList, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanSink)
	return out, translate(err)
}

// SinkGet is driver.SinkExecutor.SinkGet.
func (e *executor) SinkGet(ctx context.Context, workspace, id string) (sink.Sink, bool, error) {
	return e.sinkOne(ctx, qSinkGet, workspace, id)
}

// SinkLock is driver.SinkExecutor.SinkLock.
func (e *executor) SinkLock(ctx context.Context, workspace, id string) (sink.Sink, bool, error) {
	return e.sinkOne(ctx, qSinkLock, workspace, id)
}

func (e *executor) sinkOne(ctx context.Context, q, workspace, id string) (sink.Sink, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, q, namedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return sink.Sink{}, false, translate(err)
	}
	s, err := pgx.CollectExactlyOneRow(rows, scanSink)
	if errors.Is(err, pgx.ErrNoRows) {
		return sink.Sink{}, false, nil
	}
	return s, err == nil, translate(err)
}

// SinkUpdate is driver.SinkExecutor.SinkUpdate.
func (e *executor) SinkUpdate(ctx context.Context, s sink.Sink) (bool, error) {
	types, err := typesArg(s.Types)
	if err != nil {
		return false, err
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qSinkUpdate, namedArgs{
		"workspace": s.Workspace, "id": s.ID, "url": s.URL, "subject": s.Subject,
		"types": types, "enabled": s.Enabled, "secret": s.Secret, "now": timeArg(s.UpdatedAt),
	})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// SinkDelete is driver.SinkExecutor.SinkDelete.
func (e *executor) SinkDelete(ctx context.Context, workspace, id string) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qSinkDelete, namedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// DeliveryList is driver.SinkExecutor.DeliveryList.
func (e *executor) DeliveryList(ctx context.Context, workspace, sinkID string, f sink.DeliveryFilter) ([]sink.Delivery, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qDeliveryList, namedArgs{
		"workspace": workspace, "sink_id": sinkID, "status": string(f.Status),
		"before": f.Before, "limit": f.Limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	return out, translate(err)
}

// typesArg encodes a sink's event types for the jsonb column ([] for none).
func typesArg(types []string) (string, error) {
	if types == nil {
		types = []string{}
	}
	b, err := json.Marshal(types)
	if err != nil {
		return "", fmt.Errorf("encode sink types: %w", err)
	}
	return string(b), nil
}

func scanSink(row pgx.CollectableRow) (sink.Sink, error) {
	var s sink.Sink
	var kind string
	var types []byte
	err := row.Scan(&s.Workspace, &s.ID, &kind, &s.URL, &s.Subject, &types, &s.Secret, &s.Enabled,
		&s.AfterSeq, &s.CreatedBy, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return s, err
	}
	s.Kind = sink.Kind(kind)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	if err := json.Unmarshal(types, &s.Types); err != nil {
		return s, fmt.Errorf("decode types of sink %s: %w", s.ID, err)
	}
	return s, nil
}

func scanDelivery(row pgx.CollectableRow) (sink.Delivery, error) {
	var d sink.Delivery
	var status string
	var delivered, failed *time.Time
	err := row.Scan(&d.Workspace, &d.SinkID, &d.EventSeq, &d.EventID, &d.EventType, &d.Subject,
		&status, &d.Attempts, &d.NextAttemptAt, &d.LastError, &d.CreatedAt, &delivered, &failed)
	d.Status, d.DeliveredAt, d.FailedAt = sink.Status(status), ptrTime(delivered), ptrTime(failed)
	d.NextAttemptAt, d.CreatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC()
	return d, err
}
