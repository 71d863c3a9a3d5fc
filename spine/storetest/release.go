package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// testRelease checks that a draining worker gives a job back without
// charging an attempt or a restart, and loses its lease doing so.
func testRelease(t *testing.T, newStore newStoreFunc) {
	t.Run("BackToWaitingUncharged", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		// Bring the job to attempt 2 and restart 1 first, so "unchanged"
		// cannot pass by resetting to the initial values.
		out := b.fail(lease(b.claimOne(b.clock.Now())), "first", b.clock.Now())
		now := b.clock.Advance(out.ScheduledFor.Sub(b.clock.Now()) + time.Second)
		b.claimOne(now)
		now = b.clock.Advance(zombieTimeout + time.Second)
		if res := b.reap(now); len(res.Requeued) != 1 {
			t.Fatalf("reap: %+v, want the zombie requeued", res)
		}
		c := b.claimOne(now)
		if c.Attempt != 2 || c.Restarts != 1 {
			t.Fatalf("claimed with attempt %d restarts %d, want 2 and 1", c.Attempt, c.Restarts)
		}

		releasedAt := b.clock.Advance(3 * time.Second)
		if err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(c), Now: releasedAt}); err != nil {
			t.Fatalf("Release: %v", err)
		}
		j := b.requireStatus(id, spine.StatusQueued, "released")
		if j.Attempt != 2 || j.Restarts != 1 || j.Worker != "" {
			t.Fatalf("released job: attempt %d restarts %d worker %q; want 2, 1, none", j.Attempt, j.Restarts, j.Worker)
		}
		sameTime(t, "scheduled_for of a released job", j.ScheduledFor, releasedAt)
		requireNilTime(t, "started_at of a released job", j.StartedAt)
		requireNilTime(t, "ping of a released job", j.Ping)

		err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(c), Now: releasedAt})
		requireErrorIs(t, err, spine.ErrNotOwner, "second Release with the same token")
		_, err = b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(c), Result: json.RawMessage(`1`), Now: releasedAt})
		requireErrorIs(t, err, spine.ErrNotOwner, "Complete after Release")
		if got := b.heartbeat(releasedAt, lease(c)); len(got) != 0 {
			t.Fatalf("heartbeat after Release returned %+v, want the lease lost", got)
		}

		again := b.claimOne(releasedAt)
		if again.ID != id || again.ClaimToken == c.ClaimToken || again.Attempt != 2 || again.Restarts != 1 {
			t.Fatalf("re-claim after Release: %+v; want the same job, a new token, attempt 2, restarts 1", again)
		}
	})

	t.Run("StaleTokenRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		old := b.claimOne(b.clock.Now())
		now := b.clock.Advance(zombieTimeout + time.Second)
		b.reap(now)
		newer := b.claimOne(now)
		err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(old), Now: now})
		requireErrorIs(t, err, spine.ErrNotOwner, "Release with the token of a reaped claim")
		if j := b.requireStatus(id, spine.StatusRunning, "stale Release writes nothing"); j.Worker != defaultWorker {
			t.Fatalf("worker %q after a stale Release", j.Worker)
		}
		b.complete(lease(newer), b.clock.Advance(time.Second))
	})
}
