package postgres

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
)

// The benchmarks measure the hot path one caller at a time, so they show
// round trips and statement cost rather than the machine's parallelism:
// go test -run '^$' -bench . ./store/postgres/

func BenchmarkEnqueue(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	p := job("default")
	for b.Loop() {
		if _, err := s.Enqueue(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkEnqueueBatch100(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	ps := make([]spine.EnqueueParams, 100)
	for i := range ps {
		ps[i] = job("default")
	}
	for b.Loop() {
		if _, err := s.EnqueueBatch(ctx, ps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkClaimComplete claims and completes one job per iteration from a
// queue filled beforehand.
func BenchmarkClaimComplete(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	ps := make([]spine.EnqueueParams, 500)
	for i := range ps {
		ps[i] = job("default")
	}
	for range b.N/len(ps) + 1 {
		if _, err := s.EnqueueBatch(ctx, ps); err != nil {
			b.Fatal(err)
		}
	}
	claim := spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 1}
	b.ResetTimer()
	for range b.N {
		jobs, err := s.Claim(ctx, claim)
		if err != nil || len(jobs) != 1 {
			b.Fatalf("claim: %v %d", err, len(jobs))
		}
		c := jobs[0]
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(c), Result: json.RawMessage(`{"ok":true}`)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

func newBenchStore(b *testing.B) *Driver {
	b.Helper()
	url, schema := testdb.PostgresSchema(b)
	s, err := Open(context.Background(), url, Options{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if err := s.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCompletionWake is the time from a completion's commit to a
// waiter (?wait) woken through LISTEN/NOTIFY and holding the finished job
// (see storetest.BenchCompletionWake for the figures it reports).
func BenchmarkCompletionWake(b *testing.B) {
	storetest.BenchCompletionWake(b, newBenchStore(b))
}

// schemaJob is job on tag with the pin's schemas set to in and out.
func schemaJob(in, out json.RawMessage) spine.EnqueueParams {
	p := job("default")
	p.Pin.InputSchema, p.Pin.OutputSchema = in, out
	return p
}

// BenchmarkEnqueueSmallSchemas is BenchmarkEnqueue with the small input and
// output schemas most actions have.
func BenchmarkEnqueueSmallSchemas(b *testing.B) {
	benchEnqueueSchemas(b, schemaJob(json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		json.RawMessage(`{"type":"object","required":["greeting"]}`)), 1)
}

// BenchmarkEnqueueLargeSchema enqueues jobs pinning 1 MiB input and output
// schemas, one per call; db-bytes/job is what each adds to the database.
func BenchmarkEnqueueLargeSchema(b *testing.B) {
	benchEnqueueSchemas(b, schemaJob(storetest.LargeSchema("in", 1<<20), storetest.LargeSchema("out", 1<<20)), 1)
}

// BenchmarkEnqueueBatch20LargeSchema is BenchmarkEnqueueLargeSchema with 20
// jobs per EnqueueBatch.
func BenchmarkEnqueueBatch20LargeSchema(b *testing.B) {
	benchEnqueueSchemas(b, schemaJob(storetest.LargeSchema("in", 1<<20), storetest.LargeSchema("out", 1<<20)), 20)
}

func benchEnqueueSchemas(b *testing.B, p spine.EnqueueParams, batch int) {
	s := newBenchStore(b)
	ctx := context.Background()
	ps := make([]spine.EnqueueParams, batch)
	for i := range ps {
		ps[i] = p
	}
	before := databaseBytes(b, s)
	for b.Loop() {
		if _, err := s.EnqueueBatch(ctx, ps); err != nil {
			b.Fatal(err)
		}
	}
	jobs := float64(b.N * batch)
	b.ReportMetric(jobs/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(databaseBytes(b, s)-before)/jobs, "db-bytes/job")
}

// databaseBytes is the size of the store's schema: tables, TOAST and
// indexes.
func databaseBytes(b *testing.B, s *Driver) int64 {
	b.Helper()
	var n int64
	err := s.pool.QueryRow(context.Background(), `
		SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
