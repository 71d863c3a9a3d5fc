package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/store/driver"
)

// batchRecorder keeps the SQL of every batched statement (pgx.BatchTracer).
type batchRecorder struct {
	mu  sync.Mutex
	sql []string
}

func (r *batchRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (r *batchRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *batchRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (r *batchRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
func (r *batchRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sql = append(r.sql, d.SQL)
}

func (r *batchRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sql
	r.sql = nil
	return out
}

// TestUnsyncedEnqueue: an Unsynced enqueue on the pool is one batch whose
// implicit transaction commits without waiting for the flush, and the
// setting ends with it; a synced one and one in a caller's transaction
// are the plain statement. Sync flushes the WAL past them.
func TestUnsyncedEnqueue(t *testing.T) {
	t.Parallel()
	url, schema := testdb.PostgresSchema(t)
	rec := &batchRecorder{}
	s, err := Open(context.Background(), url, Options{Schema: schema, MaxConns: 1, Tracer: rec})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	migrated(t, s)
	ctx := t.Context()
	rec.take()

	p := job("unsynced")
	p.Unsynced = true
	res := enqueue(t, s, p)
	// (pgx sends enqueue.sql with its named arguments rewritten.)
	if got := rec.take(); len(got) != 2 || got[0] != asyncCommit || !strings.HasPrefix(got[1], "-- Enqueue inserts one job") {
		t.Fatalf("unsynced enqueue sent the batch %q, want asyncCommit then enqueue.sql", got)
	}
	if j := getJob(t, s, res); j.Status != "queued" {
		t.Fatalf("unsynced job: %s, want queued", j.Status)
	}
	var setting string
	if err := s.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&setting); err != nil || setting != "on" {
		t.Fatalf("synchronous_commit after the unsynced enqueue (the one connection): %q, %v; want on", setting, err)
	}

	enqueue(t, s, job("unsynced")) // synced: no batch
	err = s.Executor().Tx(ctx, func(ex driver.Executor) error {
		_, _, err := ex.EnqueueInsert(ctx, prepared(t, p), true)
		return err
	})
	if err != nil {
		t.Fatalf("unsynced enqueue in a transaction: %v", err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("synced enqueues sent batches %q, want none", got)
	}

	var before string
	if err := s.pool.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := s.Executor().Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	var flushed bool
	if err := s.pool.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn", before).Scan(&flushed); err != nil || !flushed {
		t.Fatalf("WAL flushed past %s after Sync: %v, %v", before, flushed, err)
	}
}
