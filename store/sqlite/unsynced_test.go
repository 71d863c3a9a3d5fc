package sqlite

import (
	"context"
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
