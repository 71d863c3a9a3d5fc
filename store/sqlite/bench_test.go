package sqlite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
)

// benchStore opens a migrated store for a benchmark.
func benchStore(b *testing.B) *Driver {
	b.Helper()
	s, err := Open(context.Background(), testdb.SQLitePath(b), Options{Logger: quiet})
	if err != nil {
		b.Fatalf("open: %v", err)
	}
	b.Cleanup(s.Close)
	if err := s.Migrate(context.Background()); err != nil {
		b.Fatalf("migrate: %v", err)
	}
	return s
}

// BenchmarkEnqueue is one job per transaction (one fsync each).
func BenchmarkEnqueue(b *testing.B) {
	s := benchStore(b)
	for b.Loop() {
		enqueue(b, s, job("default"))
	}
}

// BenchmarkEnqueueBatch100 is 100 jobs per transaction; ns/op is per job.
func BenchmarkEnqueueBatch100(b *testing.B) {
	s := benchStore(b)
	ps := make([]spine.EnqueueParams, 100)
	for b.Loop() {
		for i := range ps {
			ps[i] = job("default")
		}
		if _, err := s.EnqueueBatch(context.Background(), ps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/job")
}

// BenchmarkClaimComplete claims 10 jobs at a time from a deep queue and
// completes each; ns/job is the cost of one job's way through the spine.
func BenchmarkClaimComplete(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	now := time.Now()
	enqueueN(b, s, "default", 20000, now)
	done := 0
	for b.Loop() {
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 10, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		if len(jobs) == 0 {
			b.StopTimer()
			enqueueN(b, s, "default", 20000, now)
			b.StartTimer()
			continue
		}
		for _, j := range jobs {
			if _, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}, Result: json.RawMessage(`{}`), Now: now}); err != nil {
				b.Fatal(err)
			}
			done++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/job")
}

// BenchmarkCompletionWake is the time from a completion's commit to a
// waiter (?wait) woken in process and holding the finished job (see
// storetest.BenchCompletionWake for the figures it reports).
func BenchmarkCompletionWake(b *testing.B) {
	storetest.BenchCompletionWake(b, benchStore(b))
}

// schemaJob is job on the default tag with the pin's schemas set to in and
// out.
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
// schemas, one per transaction; db-bytes/job is what each adds to the file.
func BenchmarkEnqueueLargeSchema(b *testing.B) {
	benchEnqueueSchemas(b, schemaJob(storetest.LargeSchema("in", 1<<20), storetest.LargeSchema("out", 1<<20)), 1)
}

// BenchmarkEnqueueBatch20LargeSchema is BenchmarkEnqueueLargeSchema with 20
// jobs per EnqueueBatch.
func BenchmarkEnqueueBatch20LargeSchema(b *testing.B) {
	benchEnqueueSchemas(b, schemaJob(storetest.LargeSchema("in", 1<<20), storetest.LargeSchema("out", 1<<20)), 20)
}

func benchEnqueueSchemas(b *testing.B, p spine.EnqueueParams, batch int) {
	s := benchStore(b)
	ps := make([]spine.EnqueueParams, batch)
	for i := range ps {
		ps[i] = p
	}
	before := fileBytes(b, s)
	for b.Loop() {
		if _, err := s.EnqueueBatch(context.Background(), ps); err != nil {
			b.Fatal(err)
		}
	}
	jobs := float64(b.N * batch)
	b.ReportMetric(jobs/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(fileBytes(b, s)-before)/jobs, "db-bytes/job")
}

// fileBytes is the pages the database uses (free pages excluded).
func fileBytes(b *testing.B, s *Driver) int64 {
	b.Helper()
	var pages, free, size int64
	db := s.DB()
	for q, v := range map[string]*int64{"page_count": &pages, "freelist_count": &free, "page_size": &size} {
		if err := db.QueryRowContext(context.Background(), "PRAGMA "+q).Scan(v); err != nil {
			b.Fatal(err)
		}
	}
	return (pages - free) * size
}
