package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/windforce/windforce/events/sink"
)

// The event sink queries (queries/sink_*.sql, delivery_list.sql).
const (
	qSinkInsert           query = "sink_insert"
	qSinkList             query = "sink_list"
	qSinkGet              query = "sink_get"
	qSinkUpdate           query = "sink_update"
	qSinkDelete           query = "sink_delete"
	qSinkDeleteDeliveries query = "sink_delete_deliveries"
	qDeliveryList         query = "delivery_list"
	qOutboxLastSeq        query = "outbox_last_seq"
	qDeliveryCounts       query = "delivery_counts"
)

// DeliveryCounts is driver.SinkExecutor.DeliveryCounts.
func (e *executor) DeliveryCounts(ctx context.Context, workspace, sinkID string) (map[sink.Status]int, error) {
	rows, err := e.read(ctx, qDeliveryCounts, sql.Named("workspace", workspace), sql.Named("sink_id", sinkID))
	if err != nil {
		return nil, translate(err)
	}
	type count struct {
		st string
		n  int
	}
	cs, err := collect(rows, func(r *sql.Rows) (count, error) {
		var c count
		return c, r.Scan(&c.st, &c.n)
	})
	if err != nil {
		return nil, err
	}
	out := map[sink.Status]int{}
	for _, c := range cs {
		out[sink.Status(c.st)] = c.n
	}
	return out, nil
}

// OutboxLastSeq is driver.SinkExecutor.OutboxLastSeq.
func (e *executor) OutboxLastSeq(ctx context.Context) (int64, error) {
	rows, err := e.read(ctx, qOutboxLastSeq)
	if err != nil {
		return 0, translate(err)
	}
	out, err := collect(rows, func(r *sql.Rows) (int64, error) {
		var n int64
		return n, r.Scan(&n)
	})
	if err != nil || len(out) == 0 {
		return 0, err
	}
	return out[0], nil
}

// SinkInsert is driver.SinkExecutor.SinkInsert.
func (e *executor) SinkInsert(ctx context.Context, s sink.Sink) error {
	types, err := stringsJSON(nonNil(s.Types))
	if err != nil {
		return err
	}
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSinkInsert,
			sql.Named("workspace", s.Workspace), sql.Named("id", s.ID), sql.Named("kind", string(s.Kind)),
			sql.Named("url", s.URL), sql.Named("subject", s.Subject), sql.Named("types", types),
			sql.Named("secret", s.Secret), sql.Named("enabled", boolInt(s.Enabled)),
			sql.Named("after_seq", s.AfterSeq), sql.Named("created_by", s.CreatedBy),
			sql.Named("now", micros(resolveNow(s.CreatedAt))))
		return translate(err)
	})
}

// SinkList is driver.SinkExecutor.SinkList.
func (e *executor) SinkList(ctx context.Context, workspace string) ([]sink.Sink, error) {
	rows, err := e.read(ctx, qSinkList, sql.Named("workspace", workspace))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanSink)
}

// SinkGet is driver.SinkExecutor.SinkGet.
func (e *executor) SinkGet(ctx context.Context, workspace, id string) (sink.Sink, bool, error) {
	rows, err := e.read(ctx, qSinkGet, sql.Named("workspace", workspace), sql.Named("id", id))
	if err != nil {
		return sink.Sink{}, false, translate(err)
	}
	out, err := collect(rows, scanSink)
	if err != nil || len(out) == 0 {
		return sink.Sink{}, false, err
	}
	return out[0], true, nil
}

// SinkLock is driver.SinkExecutor.SinkLock: inside a write transaction the
// one writer is the lock, so it reads as SinkGet does.
func (e *executor) SinkLock(ctx context.Context, workspace, id string) (sink.Sink, bool, error) {
	return e.SinkGet(ctx, workspace, id)
}

// SinkUpdate is driver.SinkExecutor.SinkUpdate.
func (e *executor) SinkUpdate(ctx context.Context, s sink.Sink) (bool, error) {
	types, err := stringsJSON(nonNil(s.Types))
	if err != nil {
		return false, err
	}
	var ok bool
	err = e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qSinkUpdate,
			sql.Named("workspace", s.Workspace), sql.Named("id", s.ID), sql.Named("url", s.URL),
			sql.Named("subject", s.Subject), sql.Named("types", types),
			sql.Named("enabled", boolInt(s.Enabled)), sql.Named("secret", s.Secret),
			sql.Named("now", micros(resolveNow(s.UpdatedAt))))
		ok, err = touched(res, err)
		return err
	})
	return ok, err
}

// SinkDelete is driver.SinkExecutor.SinkDelete: the deliveries, then the
// sink, in one write transaction.
func (e *executor) SinkDelete(ctx context.Context, workspace, id string) (bool, error) {
	var ok bool
	err := e.write(ctx, func(w *writeTx) error {
		args := []any{sql.Named("workspace", workspace), sql.Named("id", id)}
		if _, err := w.exec(ctx, qSinkDeleteDeliveries, args...); err != nil {
			return translate(err)
		}
		var err error
		ok, err = touched(w.exec(ctx, qSinkDelete, args...))
		return err
	})
	return ok, err
}

// DeliveryList is driver.SinkExecutor.DeliveryList.
func (e *executor) DeliveryList(ctx context.Context, workspace, sinkID string, f sink.DeliveryFilter) ([]sink.Delivery, error) {
	rows, err := e.read(ctx, qDeliveryList, sql.Named("workspace", workspace), sql.Named("sink_id", sinkID),
		sql.Named("status", string(f.Status)), sql.Named("before", f.Before), sql.Named("limit", f.Limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanDelivery)
}

// touched reports whether a statement changed a row.
func touched(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// nonNil is ss, or an empty list for nil (stored as [], not null).
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func scanSink(rows *sql.Rows) (sink.Sink, error) {
	var s sink.Sink
	var kind, types string
	var created, updated int64
	err := rows.Scan(&s.Workspace, &s.ID, &kind, &s.URL, &s.Subject, &types, &s.Secret, &s.Enabled,
		&s.AfterSeq, &s.CreatedBy, &created, &updated)
	if err != nil {
		return s, err
	}
	s.Kind, s.CreatedAt, s.UpdatedAt = sink.Kind(kind), fromMicros(created), fromMicros(updated)
	if err := json.Unmarshal([]byte(types), &s.Types); err != nil {
		return s, fmt.Errorf("decode types of sink %s: %w", s.ID, err)
	}
	return s, nil
}

func scanDelivery(rows *sql.Rows) (sink.Delivery, error) {
	var d sink.Delivery
	var status string
	var next, created int64
	var delivered, failed sql.NullInt64
	err := rows.Scan(&d.Workspace, &d.SinkID, &d.EventSeq, &d.EventID, &d.EventType, &d.Subject,
		&status, &d.Attempts, &next, &d.LastError, &created, &delivered, &failed)
	d.Status, d.NextAttemptAt, d.CreatedAt = sink.Status(status), fromMicros(next), fromMicros(created)
	d.DeliveredAt, d.FailedAt = nullTime(delivered), nullTime(failed)
	return d, err
}
