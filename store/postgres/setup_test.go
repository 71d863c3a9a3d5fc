package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver/drivertest"
)

// openStore opens a Store on a fresh schema, not migrated, closed at
// cleanup (before testdb drops the schema).
func openStore(t *testing.T) (*Driver, string) {
	t.Helper()
	return openStoreConns(t, 6)
}

// openStoreConns is openStore with a pool of conns connections.
func openStoreConns(t *testing.T, conns int32) (*Driver, string) {
	t.Helper()
	url, schema := testdb.PostgresSchema(t)
	s, err := Open(context.Background(), url, Options{Schema: schema, MaxConns: conns})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s, schema
}

// newStore opens a migrated Store on a fresh schema.
func newStore(t *testing.T) *Driver {
	t.Helper()
	s, _ := openStore(t)
	migrated(t, s)
	return s
}

// migrated migrates s or fails the test.
func migrated(t *testing.T, s *Driver) {
	t.Helper()
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// job is a valid enqueue request on tag.
func job(tag string) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace:   "ws",
		TriggerKind: spine.TriggerAPI,
		Input:       json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2},
		},
	}
}

// prepared is p checked and filled as the core's enqueue does it.
func prepared(t testing.TB, p spine.EnqueueParams) spine.EnqueueParams {
	t.Helper()
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		t.Fatalf("prepare enqueue: %v", err)
	}
	return p
}

// enqueue inserts p (prepared) and wakes its tag, or fails the test.
func enqueue(t testing.TB, s *Driver, p spine.EnqueueParams) spine.EnqueueResult {
	t.Helper()
	res, inserted, err := s.Executor().EnqueueInsert(context.Background(), prepared(t, p), true)
	if err != nil || !inserted {
		t.Fatalf("enqueue: %v (inserted %v)", err, inserted)
	}
	return res
}

// claimOne claims exactly one job on tag or fails the test.
func claimOne(t *testing.T, s *Driver, tag string, now time.Time) spine.ClaimedJob {
	t.Helper()
	jobs, err := s.Executor().Claim(context.Background(), spine.ClaimParams{Worker: "w1", Tags: []string{tag}, Limit: 1, Now: now})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if len(jobs) != 1 {
		t.Fatalf("claim: got %d jobs, want 1", len(jobs))
	}
	return jobs[0]
}

// getJob reads a job or fails the test.
func getJob(t *testing.T, s *Driver, id spine.EnqueueResult) spine.Job {
	t.Helper()
	j, err := s.Executor().GetJob(context.Background(), "ws", id.ID)
	if err != nil {
		t.Fatalf("get job: %v", err)
	}
	return j
}

// noWake asserts that nothing is pending on ch after a notification sent
// now would have arrived: a marker notification on another tag, observed
// by a second subscriber, proves the listener got past that point.
func noWake[T any](t *testing.T, s *Driver, ch <-chan T, what string) {
	t.Helper()
	marker, stop := s.Subscribe([]string{"marker"})
	defer stop()
	if _, err := s.pool.Exec(context.Background(), "SELECT pg_notify($1, 'marker')", s.channel); err != nil {
		t.Fatalf("notify marker: %v", err)
	}
	drivertest.WaitWake(t, marker, "for the marker")
	select {
	case <-ch:
		t.Fatalf("unexpected wake-up %s", what)
	default:
	}
}

// claimNow is a zero claim time: the database clock, so freshly enqueued
// jobs are due.
func claimNow() time.Time { return time.Time{} }

func isErr(err, target error) bool { return errors.Is(err, target) }

func lease(c spine.ClaimedJob) spine.Lease {
	return spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken}
}

// appendParams is a log append by c's owner.
func appendParams(c spine.ClaimedJob, data string) spine.AppendLogParams {
	return spine.AppendLogParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken}, Data: data}
}
