package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
)

// A batch sends one notification per distinct tag, not one per job
// (oban#956: per-row notifications made batch inserts quadratic).
func TestEnqueueBatchNotifiesEachTagOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	batch := make([]spine.EnqueueParams, 50)
	for i := range batch {
		batch[i] = job([]string{"x", "y"}[i%2])
		if i%10 == 0 {
			batch[i].CoalesceKey = "k" // coalesced ones notify with the batch too
		}
	}
	if _, err := s.EnqueueBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, 'end')", s.channel); err != nil {
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

// Driver errors become spine's typed errors at the seam.
func TestEnqueueTranslatesDriverErrors(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	p := job("default")
	first := enqueue(t, s, p)

	p.ID = first.ID
	if _, err := s.Enqueue(context.Background(), p); !isErr(err, spine.ErrConflict) {
		t.Errorf("duplicate id: %v, want ErrConflict", err)
	}
	p = job("default")
	p.Pin.InputSchema = json.RawMessage(`{not json`)
	if _, err := s.Enqueue(context.Background(), p); !isErr(err, spine.ErrInvalid) {
		t.Errorf("bad schema JSON: %v, want ErrInvalid", err)
	}
	p = job("default")
	p.Pin.Timeout = -time.Second
	if _, err := s.Enqueue(context.Background(), p); !isErr(err, spine.ErrInvalid) {
		t.Errorf("negative timeout: %v, want ErrInvalid", err)
	}
}

// The query timeout bounds an operation stuck behind a lock.
func TestQueryTimeoutBoundsAnOperation(t *testing.T) {
	t.Parallel()
	url, schema := testdb.PostgresSchema(t)
	ctx := context.Background()
	s, err := Open(ctx, url, Options{Schema: schema, MaxConns: 4, QueryTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	res := enqueue(t, s, job("default"))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT 1 FROM job_queue WHERE job_id = $1 FOR UPDATE", res.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Executor().CancelLock(ctx, "ws", res.ID)
	if err == nil {
		t.Fatal("cancel behind a held lock succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel gave up after %v, want about the 200ms query timeout", d)
	}
}
