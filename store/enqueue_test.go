package store

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver/drivertest"
	"github.com/windforce/windforce/store/postgres"
)

// jobChannel is the Postgres channel the driver of s notifies tags on
// (windforce_job_<schema>).
func jobChannel(t *testing.T, d *postgres.Driver) string {
	t.Helper()
	var schema string
	if err := d.Pool().QueryRow(t.Context(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	ch := "windforce_job_" + schema
	return ch[:min(len(ch), 63)]
}

// A batch sends one notification per distinct tag, not one per job
// (oban#956: per-row notifications made batch inserts quadratic), the
// coalesced jobs' included. Postgres only: SQLite's wake-ups are a set
// of tags by construction.
func TestEnqueueBatchNotifiesEachTagOnce(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	d := s.Driver().(*postgres.Driver)
	ctx := t.Context()
	channel := jobChannel(t, d)
	conn, err := pgx.ConnectConfig(ctx, d.Pool().Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	batch := make([]spine.EnqueueParams, 50)
	for i := range batch {
		batch[i] = pinJob([]string{"x", "y"}[i%2])
		if i%10 == 0 {
			batch[i].CoalesceKey = "k" // coalesced ones notify with the batch too
		}
	}
	if _, err := s.EnqueueBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, "SELECT pg_notify($1, 'end')", channel); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for {
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if err != nil {
			t.Fatalf("wait for notifications: %v (so far %v)", err, got)
		}
		if n.Payload == "end" {
			break
		}
		got[n.Payload]++
	}
	if len(got) != 2 || got["x"] != 1 || got["y"] != 1 {
		t.Fatalf("notifications per tag: %v, want x:1 y:1", got)
	}
}

// Database errors become the spine's typed errors at the seam.
func TestEnqueueTranslatesDriverErrors(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		p := pinJob("default")
		first := mustEnqueue(t, s, p)

		p.ID = first.ID
		if _, err := s.Enqueue(ctx, p); !errors.Is(err, spine.ErrConflict) {
			t.Errorf("duplicate id: %v, want ErrConflict", err)
		}
		p = pinJob("default")
		p.Pin.Timeout = -time.Second
		if _, err := s.Enqueue(ctx, p); !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("negative timeout: %v, want ErrInvalid", err)
		}
		if _, ok := s.Driver().(*postgres.Driver); ok {
			// SQLite keeps a schema's text as given (TEXT, no check).
			p = pinJob("default")
			p.Pin.InputSchema = json.RawMessage(`{not json`)
			if _, err := s.Enqueue(ctx, p); !errors.Is(err, spine.ErrInvalid) {
				t.Errorf("bad schema JSON: %v, want ErrInvalid", err)
			}
		}
	})
}

// An invalid request in EnqueueBatch writes nothing; a duplicate id is a
// conflict and rolls the whole batch back.
func TestEnqueueBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		first := mustEnqueue(t, s, pinJob("default"))

		dup := pinJob("default")
		dup.ID = first.ID
		keyed := pinJob("default")
		keyed.CoalesceKey = "k"
		_, err := s.EnqueueBatch(ctx, []spine.EnqueueParams{pinJob("default"), keyed, dup})
		if !errors.Is(err, spine.ErrConflict) {
			t.Fatalf("batch with a duplicate id: %v, want ErrConflict", err)
		}
		bad := pinJob("default")
		bad.Workspace = ""
		if _, err := s.EnqueueBatch(ctx, []spine.EnqueueParams{pinJob("default"), bad}); !errors.Is(err, spine.ErrInvalid) {
			t.Fatalf("batch with an invalid request: %v, want ErrInvalid", err)
		}
		if n := sqlInt(t, s, "SELECT count(*) FROM job"); n != 1 {
			t.Fatalf("%d job rows after failed batches, want 1", n)
		}
	})
}

// Concurrent enqueues of one coalesce key all succeed and end in one
// waiting job holding every request (invariant 10): each enqueue that
// loses the race to insert folds into the winner's job instead of failing.
// On SQLite the fold and the insert of an enqueue on the pool are two
// write transactions, so this is the path where the insert finds the key
// taken.
func TestEnqueueCoalesceRace(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		const n = 8
		results := make([]spine.EnqueueResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				p := pinJob("default")
				p.CoalesceKey = "k"
				results[i], errs[i] = s.Enqueue(t.Context(), p)
			})
		}
		wg.Wait()
		var top int64
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("enqueue %d: %v", i, errs[i])
			}
			if results[i].ID != results[0].ID {
				t.Fatalf("enqueues of one key made jobs %s and %s", results[0].ID, results[i].ID)
			}
			top = max(top, results[i].Generation)
		}
		if top != n {
			t.Fatalf("the job's generation is %d after %d requests", top, n)
		}
		if c := sqlInt(t, s, "SELECT count(*) FROM job_queue"); c != 1 {
			t.Fatalf("%d waiting jobs, want 1", c)
		}
	})
}

// noWake asserts no wake-up is pending on ch once one sent now would have
// arrived: on Postgres a marker notification seen by a second subscriber
// proves the listener got past that point; SQLite wakes in process, at
// once.
func noWake[T any](t *testing.T, s *Store, ch <-chan T, what string) {
	t.Helper()
	if d, ok := s.Driver().(*postgres.Driver); ok {
		marker, stop := s.Subscribe([]string{"marker"})
		defer stop()
		if _, err := d.Pool().Exec(t.Context(), "SELECT pg_notify($1, 'marker')", jobChannel(t, d)); err != nil {
			t.Fatalf("notify marker: %v", err)
		}
		drivertest.WaitWake(t, marker, "for the marker")
	}
	select {
	case <-ch:
		t.Fatalf("unexpected wake-up %s", what)
	default:
	}
}

// TestEnqueueActionNeedsItsNames: a request without workspace, app or
// action is spine.ErrInvalid with one text on both databases, before the
// catalog is read, and writes no row.
func TestEnqueueActionNeedsItsNames(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		for _, r := range []catalog.EnqueueRequest{
			{App: "a", Action: "b"}, {Workspace: "ws", Action: "b"}, {Workspace: "ws", App: "a"},
		} {
			_, err := s.EnqueueAction(t.Context(), r)
			if !errors.Is(err, spine.ErrInvalid) || err.Error() != "enqueue: invalid request: workspace, app and action are required" {
				t.Errorf("EnqueueAction(%+v) = %v, want the ErrInvalid naming the three", r, err)
			}
		}
		if counts, err := s.CountJobs(t.Context(), "ws"); err != nil || counts[spine.StatusQueued] != 0 {
			t.Fatalf("jobs after refused requests: %v, %v", counts, err)
		}
	})
}
