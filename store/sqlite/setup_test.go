package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// quiet drops the store's log lines in tests.
var quiet = slog.New(slog.DiscardHandler)

// job is a valid enqueue request on tag.
func job(tag string) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace:   "ws",
		TriggerKind: spine.TriggerAPI,
		Input:       json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, Factor: 2},
		},
	}
}

// enqueue inserts p (checked and filled as the core would) and wakes its
// tag, or fails the test.
func enqueue(t testing.TB, s *Driver, p spine.EnqueueParams) spine.EnqueueResult {
	t.Helper()
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	res, inserted, err := s.Executor().EnqueueInsert(context.Background(), p, true)
	if err != nil || !inserted {
		t.Fatalf("enqueue: %v (inserted %v)", err, inserted)
	}
	return res
}

// enqueueN enqueues n jobs on tag in one batch, scheduled at now.
func enqueueN(t testing.TB, s *Driver, tag string, n int, now time.Time) {
	t.Helper()
	ps := make([]spine.EnqueueParams, n)
	for i := range ps {
		var err error
		p := job(tag)
		p.Now = now
		if ps[i], err = spine.PrepareEnqueue(p, time.Time{}); err != nil {
			t.Fatalf("enqueue batch: %v", err)
		}
	}
	err := s.Executor().Tx(context.Background(), func(ex driver.Executor) error {
		return ex.EnqueueInsertBatch(context.Background(), ps, []string{tag})
	})
	if err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
}

// pragma reads one PRAGMA's value through db.
func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

// count runs a count query on the writer.
func count(t *testing.T, s *Driver, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// woken reports whether ch holds a wake-up, without waiting.
func woken[T any](ch <-chan T) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
