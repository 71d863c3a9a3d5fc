package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// The reaper's writes repeat the whole guard (river#1302): what the lock
// query read may be stale by the time they run, and a job that heartbeated,
// completed or was claimed again meanwhile must be left alone. The writes
// are driven here with deliberately stale reads.
func TestReapWritesRecheckTheGuard(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	beating := enqueue(t, s, job("default"))
	done := enqueue(t, s, job("default"))
	reclaimed := enqueue(t, s, job("default"))
	marked := enqueue(t, s, job("default"))
	t0 := time.Now().UTC().Add(time.Second) // all four are due
	p := spine.ReapParams{Now: t0.Add(2 * time.Minute), ZombieTimeout: time.Minute, RestartLimit: 3}
	claims := map[spine.EnqueueResult]spine.ClaimedJob{}
	for _, r := range []spine.EnqueueResult{beating, done, reclaimed, marked} {
		claims[r] = claimOne(t, s, "default", t0)
		if claims[r].ID != r.ID {
			t.Fatalf("claimed %s, want %s", claims[r].ID, r.ID)
		}
	}
	// What a reaper read at p.Now: all four stale, none canceled.
	var reads []stale
	for _, r := range []spine.EnqueueResult{beating, done, reclaimed, marked} {
		reads = append(reads, stale{id: r.ID, token: claims[r].ClaimToken, worker: "w1"})
	}
	// Meanwhile: one heartbeats, one completes, one is reaped and claimed
	// again by another worker, one is marked canceled.
	hb, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: []spine.Lease{lease(claims[beating])}, Now: p.Now})
	if err != nil || len(hb) != 1 {
		t.Fatalf("heartbeat: %v %v", hb, err)
	}
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(claims[done]), Result: json.RawMessage(`1`), Now: p.Now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE job_queue SET claim_token = gen_random_uuid(), worker = 'w2' WHERE job_id = $1`, reclaimed.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE job_runtime SET ping = $2 WHERE job_id = $1`, reclaimed.ID, p.Now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: "ws", JobID: marked.ID, By: "op", Now: p.Now}); err != nil {
		t.Fatal(err)
	}

	err = s.inTx(ctx, func(tx pgx.Tx) error {
		requeued, err := s.reapRequeue(ctx, tx, p, reads)
		if err != nil {
			return err
		}
		if len(requeued) != 0 {
			t.Errorf("requeued %v from stale reads, want none", requeued)
		}
		p.RestartLimit = 0 // now every read would be past the limit: finish them
		failed, canceled, err := s.reapFinish(ctx, tx, p, reads)
		if err != nil {
			return err
		}
		// Only the cancel-marked job still matches the guard it was read
		// with (same token, stale ping) — but its read said "not canceled",
		// and the write re-checks the mark itself: it finishes canceled.
		if len(failed) != 0 || len(canceled) != 1 || canceled[0] != marked.ID {
			t.Errorf("finished failed %v canceled %v, want only %s canceled", failed, canceled, marked.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[spine.EnqueueResult]spine.Status{
		beating: spine.StatusRunning, done: spine.StatusSuccess, reclaimed: spine.StatusRunning, marked: spine.StatusCanceled,
	} {
		if got := getJob(t, s, r).Status; got != want {
			t.Errorf("job %s: status %s, want %s", r.ID, got, want)
		}
	}
}
