package sqlite

import (
	"context"
	sqldriver "database/sql/driver"
	"path/filepath"
	"slices"
	"testing"

	"github.com/windforce/windforce/spine"
)

// TestClaimCommitsUnsynced: the claim is the one queue write committed
// without a sync (Driver.writeUnsynced); the enqueue before it and the
// completion after it are synced, and the writer connection is FULL again
// for every transaction after the claim.
func TestClaimCommitsUnsynced(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	var commits []bool
	s.onCommit = func(synced bool) { commits = append(commits, synced) }
	enqueue(t, s, job("u"))
	claimed, err := s.Executor().Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"u"}, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %d jobs", err, len(claimed))
	}
	if got := pragma(t, s.DB(), "synchronous"); got != "2" {
		t.Fatalf("after the claim the writer's synchronous is %s, want 2 (FULL)", got)
	}
	lease := spine.Lease{JobID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken}
	if _, err := s.Executor().CompleteBatch(ctx, []spine.CompleteParams{{Lease: lease, Result: []byte(`1`)}}); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if want := []bool{true, false, true}; !slices.Equal(commits, want) {
		t.Fatalf("commits synced %v, want %v (enqueue, claim, completion)", commits, want)
	}
}

// TestUnsyncedEnqueue: an enqueue asked to be unsynced (a ?wait's, without
// a coalesce key) commits without a sync, a coalesced one and any other
// enqueue with one; Sync then flushes the log, and finds nothing to do
// before the log exists.
func TestUnsyncedEnqueue(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var commits []bool
	s.onCommit = func(synced bool) { commits = append(commits, synced) }
	unsynced := job("u")
	unsynced.Unsynced = true
	enqueue(t, s, unsynced)
	coalesced := unsynced
	coalesced.CoalesceKey = "k"
	enqueue(t, s, coalesced)
	enqueue(t, s, job("u"))
	if want := []bool{false, true, true}; !slices.Equal(commits, want) {
		t.Fatalf("commits synced %v, want %v (unsynced, coalesced, plain)", commits, want)
	}
	if err := s.Executor().Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	gone := &Driver{wal: filepath.Join(t.TempDir(), "none-wal")}
	if err := gone.Executor().Sync(context.Background()); err != nil {
		t.Fatalf("Sync without a log: %v", err)
	}
}

// TestCloseAfterTheWriterWasReplaced: the pool may discard the writer
// connection the synchronous pragmas were prepared on (a cancelled
// transaction does); the next unsynced write prepares them afresh and
// Close does not finalize the old ones on the closed connection.
func TestCloseAfterTheWriterWasReplaced(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	discard := func() {
		conn, err := s.writer.Conn(ctx)
		if err != nil {
			t.Fatalf("writer connection: %v", err)
		}
		defer conn.Close()
		_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn })
	}
	enqueue(t, s, job("u")) // a claim, unsynced, prepares them below
	if _, err := s.Executor().Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"u"}, Limit: 1}); err != nil {
		t.Fatalf("claim: %v", err)
	}
	discard()
	enqueue(t, s, job("u"))
	if _, err := s.Executor().Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"u"}, Limit: 1}); err != nil {
		t.Fatalf("claim on the fresh writer: %v", err)
	}
	if got := pragma(t, s.DB(), "synchronous"); got != "2" {
		t.Fatalf("on the fresh writer synchronous is %s, want 2 (FULL)", got)
	}
	discard()
	s.Close() // panicked here, finalizing on the discarded connection
}
