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

func newBenchStore(b *testing.B) *Store {
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
