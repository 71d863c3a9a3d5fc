package storetest

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// wakeDeadline bounds how long a wake-up may take to arrive. Wake-ups are
// hints, but a store that never sends them leaves workers polling.
const wakeDeadline = 5 * time.Second

// testWakeup checks that Subscribe delivers a wake-up soon after work
// appears on a subscribed tag: enqueue, batch enqueue, retry, release and
// reopen. Hints may be broad, so only delivery is checked.
func testWakeup(t *testing.T, newStore newStoreFunc) {
	t.Run("Enqueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ch := b.subscribe("a")
		b.enqueue(withTag("a"))
		waitWake(t, ch, "Enqueue on tag a")
	})

	t.Run("EnqueueBatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		chX := b.subscribe("x")
		chY := b.subscribe("y")
		_, err := b.store.EnqueueBatch(b.ctx, []spine.EnqueueParams{
			b.params(withTag("x")), b.params(withTag("y")), b.params(withTag("x")),
		})
		if err != nil {
			t.Fatalf("EnqueueBatch: %v", err)
		}
		waitWake(t, chX, "EnqueueBatch with tag x")
		waitWake(t, chY, "EnqueueBatch with tag y")
	})

	t.Run("RetryReleaseReopen", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ch := b.subscribe("w")
		w := spine.ClaimParams{Tags: []string{"w"}}
		claimW := func(now time.Time) spine.ClaimedJob {
			t.Helper()
			w.Now = now
			jobs := b.claim(w)
			if len(jobs) != 1 {
				t.Fatalf("claim on w: %d jobs, want 1", len(jobs))
			}
			return jobs[0]
		}
		id := b.enqueue(withTag("w"), withRetry(spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2}))
		waitWake(t, ch, "Enqueue")

		out := b.fail(lease(claimW(b.clock.Now())), "first", b.clock.Now())
		if !out.Retried {
			t.Fatalf("Fail with attempts left: %+v, want a retry", out)
		}
		waitWake(t, ch, "Fail with a retry")

		now := b.clock.Advance(time.Minute)
		c := claimW(now)
		if err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(c), Now: now}); err != nil {
			t.Fatalf("Release: %v", err)
		}
		waitWake(t, ch, "Release")

		b.fail(lease(claimW(now)), "second", now)
		b.requireStatus(id, spine.StatusFailure, "both attempts failed")
		if err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: id, By: "operator", Now: now}); err != nil {
			t.Fatalf("Reopen: %v", err)
		}
		waitWake(t, ch, "Reopen")
	})
}

// subscribe subscribes to tags for the rest of the test.
func (b *bundle) subscribe(tags ...string) <-chan struct{} {
	ch, stop := b.store.Subscribe(tags)
	b.t.Cleanup(stop)
	return ch
}

// waitWake waits for one wake-up on ch, failing t after wakeDeadline.
func waitWake(t *testing.T, ch <-chan struct{}, after string) {
	t.Helper()
	timer := time.NewTimer(wakeDeadline)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("no wake-up within %v after %s", wakeDeadline, after)
	}
}
