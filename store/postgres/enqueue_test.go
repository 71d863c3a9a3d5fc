package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
)

// The enqueue's behaviour (one notification per tag in a batch, the typed
// errors) is tested over the core on both databases (store/enqueue_test.go).

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
	// requeue_job_lock.sql locks the same row FOR UPDATE.
	if _, _, err := s.Executor().RequeueJobLock(ctx, "ws", res.ID); err == nil {
		t.Fatal("a lock behind a held lock succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the lock gave up after %v, want about the 200ms query timeout", d)
	}
}
