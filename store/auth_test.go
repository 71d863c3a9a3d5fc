package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// TestTokensLeaseLive: a job's claim token is its live lease only while
// the job runs under that claim, in its own workspace.
func TestTokensLeaseLive(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		now := time.Now()
		res, err := s.Enqueue(ctx, spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{}`),
			Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: "t", Timeout: time.Minute, Retry: spine.DefaultRetry}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		live := func(ws string, id, claim uuid.UUID) bool {
			t.Helper()
			ok, err := s.LeaseLive(ctx, ws, id, claim)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if live("ws", res.ID, uuid.Nil) {
			t.Fatal("a waiting job has a live lease")
		}
		claimed, err := s.Claim(ctx, spine.ClaimParams{Worker: "w1", Tags: []string{"t"}, Limit: 1, Now: now})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		c := claimed[0]
		if !live("ws", c.ID, c.ClaimToken) {
			t.Fatal("the running job's claim is not its live lease")
		}
		if live("other", c.ID, c.ClaimToken) || live("ws", c.ID, uuid.New()) || live("ws", uuid.New(), c.ClaimToken) {
			t.Fatal("a lease is live in another workspace, with another token or for another job")
		}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken}, Now: now}); err != nil {
			t.Fatal(err)
		}
		if live("ws", c.ID, c.ClaimToken) {
			t.Fatal("a finished job's claim is still a live lease")
		}
	})
}
