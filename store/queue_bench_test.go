package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// benchDrivers open a fresh, migrated core per benchmark on each database.
var benchDrivers = []struct {
	name string
	open func(b *testing.B) *Store
}{
	{"postgres", func(b *testing.B) *Store {
		url, schema := testdb.PostgresSchema(b)
		d, err := postgres.Open(b.Context(), url, postgres.Options{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatalf("open postgres: %v", err)
		}
		return benchMigrated(b, New(d))
	}},
	{"sqlite", func(b *testing.B) *Store {
		d, err := sqlite.Open(b.Context(), testdb.SQLitePath(b), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatalf("open sqlite: %v", err)
		}
		return benchMigrated(b, New(d))
	}},
}

func benchMigrated(b *testing.B, s *Store) *Store {
	b.Helper()
	b.Cleanup(s.Close)
	if err := s.Migrate(context.Background()); err != nil {
		b.Fatalf("migrate: %v", err)
	}
	return s
}

// benchJob is a job on the default tag with one attempt.
func benchJob(now time.Time) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace: "ws", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{"n":1}`), Now: now,
		Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: "default", Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, Factor: 2}},
	}
}

// benchFill enqueues n jobs in batches of 500.
func benchFill(b *testing.B, s *Store, n int, now time.Time) {
	b.Helper()
	ps := make([]spine.EnqueueParams, 500)
	for i := range ps {
		ps[i] = benchJob(now)
	}
	for ; n > 0; n -= len(ps) {
		if _, err := s.EnqueueBatch(context.Background(), ps[:min(n, len(ps))]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchClaimFinish claims limit jobs per iteration through the core and
// finishes them with finish; ns/job is one job's way through the spine.
func benchClaimFinish(b *testing.B, limit int, finish func(ctx context.Context, s *Store, jobs []spine.ClaimedJob) error) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			s := d.open(b)
			now := time.Now()
			benchFill(b, s, b.N*limit+limit, now)
			claim := spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: limit, Now: now}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				jobs, err := s.Claim(ctx, claim)
				if err != nil || len(jobs) != limit {
					b.Fatalf("claim: %d jobs, %v", len(jobs), err)
				}
				if err := finish(ctx, s, jobs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*limit), "ns/job")
		})
	}
}

// BenchmarkClaimComplete claims one job and completes it, per iteration.
func BenchmarkClaimComplete(b *testing.B) {
	benchClaimFinish(b, 1, func(ctx context.Context, s *Store, jobs []spine.ClaimedJob) error {
		_, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken},
			Result: json.RawMessage(`{"ok":true}`), Now: time.Now()})
		return err
	})
}

// BenchmarkClaimCompleteBatch claims 20 jobs and completes them in one
// batch, per iteration.
func BenchmarkClaimCompleteBatch(b *testing.B) {
	benchClaimFinish(b, 20, func(ctx context.Context, s *Store, jobs []spine.ClaimedJob) error {
		ps := make([]spine.CompleteParams, len(jobs))
		for i, j := range jobs {
			ps[i] = spine.CompleteParams{Lease: spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}, Result: json.RawMessage(`{}`)}
		}
		outs, err := s.CompleteBatch(ctx, ps)
		for _, o := range outs {
			if err == nil {
				err = o.Err
			}
		}
		return err
	})
}

// BenchmarkClaimHeartbeatFailBatch claims 20 jobs, heartbeats them and
// fails them in one batch (their one attempt ends them), per iteration.
func BenchmarkClaimHeartbeatFailBatch(b *testing.B) {
	benchClaimFinish(b, 20, func(ctx context.Context, s *Store, jobs []spine.ClaimedJob) error {
		leases := make([]spine.Lease, len(jobs))
		ps := make([]spine.FailParams, len(jobs))
		for i, j := range jobs {
			leases[i] = spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}
			ps[i] = spine.FailParams{Lease: leases[i], Error: spine.JobError{Message: "no"}}
		}
		if _, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: leases}); err != nil {
			return err
		}
		outs, err := s.FailBatch(ctx, ps)
		for _, o := range outs {
			if err == nil {
				err = o.Err
			}
		}
		return err
	})
}
