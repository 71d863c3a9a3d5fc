package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// The enqueue benchmarks measure the hot path one caller at a time through
// the core, once per database, so they show round trips and statement
// cost rather than the machine's parallelism:
// go test -run '^$' -bench Enqueue ./store/

// benchEnqueueJob is a job on the default tag without schemas, enqueued
// at the database's clock.
func benchEnqueueJob() spine.EnqueueParams { return benchJob(time.Time{}) }

// BenchmarkEnqueue is one job per call: on Postgres one statement (insert
// and notify), on SQLite one transaction.
func BenchmarkEnqueue(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			ctx := context.Background()
			p := benchEnqueueJob()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Enqueue(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchmarkEnqueueBatch100 is 100 jobs per EnqueueBatch (one transaction);
// ns/job is per job.
func BenchmarkEnqueueBatch100(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			ctx := context.Background()
			ps := make([]spine.EnqueueParams, 100)
			for i := range ps {
				ps[i] = benchEnqueueJob()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.EnqueueBatch(ctx, ps); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/job")
		})
	}
}

// BenchmarkCompletionWake is the time from a completion's commit to a
// waiter (?wait) woken (through LISTEN/NOTIFY on Postgres, in process on
// SQLite) and holding the finished job (see storetest.BenchCompletionWake
// for the figures it reports).
func BenchmarkCompletionWake(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			storetest.BenchCompletionWake(b, d.open(b))
		})
	}
}

// schemaJob is a job on the default tag with the pin's schemas set to in
// and out.
func schemaJob(in, out json.RawMessage) spine.EnqueueParams {
	p := benchEnqueueJob()
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
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
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
		})
	}
}

// databaseBytes is what the store's data takes: on Postgres the schema's
// tables with their TOAST and indexes, on SQLite the pages the file uses
// (free pages excluded).
func databaseBytes(b *testing.B, s *Store) int64 {
	b.Helper()
	ctx := context.Background()
	var n int64
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		err := d.Pool().QueryRow(ctx, `
			SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
			WHERE ns.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
	case *sqlite.Driver:
		err := d.DB().QueryRowContext(ctx, `SELECT (page_count - freelist_count) * page_size
			FROM pragma_page_count, pragma_freelist_count, pragma_page_size`).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
	default:
		b.Fatalf("databaseBytes: unknown driver %T", d)
	}
	return n
}
