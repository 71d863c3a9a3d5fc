package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testHeartbeat checks invariant 3: a heartbeat renews the ping only for
// leases whose token still matches and reports the cancel mark.
func testHeartbeat(t *testing.T, newStore newStoreFunc) {
	t.Run("RenewsOwnedLeases", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(3)
		claimedAt := b.clock.Now()
		jobs := b.claim(spine.ClaimParams{Limit: 3, Now: claimedAt})
		if len(jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(jobs))
		}
		beat := b.clock.Advance(4 * time.Second)
		got := b.heartbeat(beat, lease(jobs[0]), lease(jobs[1]))
		if len(got) != 2 {
			t.Fatalf("heartbeat of 2 owned leases returned %d", len(got))
		}
		for _, j := range jobs[:2] {
			r, ok := got[j.ID]
			if !ok {
				t.Fatalf("owned lease of job %v missing from the heartbeat result", j.ID)
			}
			if r.CancelRequested {
				t.Fatalf("job %v reports a cancel mark nobody set", j.ID)
			}
			sameTimePtr(t, "ping after heartbeat", b.get(j.ID).Ping, beat)
		}
		sameTimePtr(t, "ping of a job left out of the heartbeat", b.get(jobs[2].ID).Ping, claimedAt)
	})

	t.Run("StaleTokenChangesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueue()
		old := b.claimOne(b.clock.Now())
		reapAt := b.clock.Advance(zombieTimeout + time.Second)
		if res := b.reap(reapAt); len(res.Requeued) != 1 {
			t.Fatalf("reap of a zombie: %+v, want it requeued", res)
		}
		newer := b.claimOne(reapAt)
		if newer.ClaimToken == old.ClaimToken {
			t.Fatal("a re-claim reused the previous claim token")
		}
		beat := b.clock.Advance(time.Second)
		if got := b.heartbeat(beat, lease(old)); len(got) != 0 {
			t.Fatalf("heartbeat with a stale token returned %+v, want nothing (the lease is lost)", got)
		}
		j := b.requireStatus(newer.ID, spine.StatusRunning, "re-claimed")
		sameTimePtr(t, "ping after a stale heartbeat (must stay the re-claim's)", j.Ping, reapAt)
		if j.Worker != defaultWorker {
			t.Fatalf("worker %q after a stale heartbeat", j.Worker)
		}

		got := b.heartbeat(beat, lease(old), lease(newer))
		if _, ok := got[newer.ID]; !ok || len(got) != 1 {
			t.Fatalf("heartbeat of a stale and a current lease of one job returned %+v, want only the current one", got)
		}
		sameTimePtr(t, "ping after the current owner's heartbeat", b.get(newer.ID).Ping, beat)
	})

	// A worker's heartbeat may name a job twice: a finished job is handed
	// to the batch completer before it leaves the running set. One
	// duplicate once made the whole Postgres statement fail ("ON CONFLICT
	// DO UPDATE command cannot affect row a second time"), so no running
	// job of that worker was renewed.
	t.Run("DuplicateLeases", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		jobs := b.claimAll(2, b.clock.Now())
		beat := b.clock.Advance(3 * time.Second)
		got := b.heartbeat(beat, lease(jobs[0]), lease(jobs[1]), lease(jobs[0]))
		if len(got) != 2 {
			t.Fatalf("heartbeat naming one lease twice returned %+v, want both jobs once", got)
		}
		for _, j := range jobs {
			sameTimePtr(t, "ping after a heartbeat with a duplicate lease", b.get(j.ID).Ping, beat)
		}
	})

	t.Run("LostLeasesAbsent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		jobs := b.claim(spine.ClaimParams{Limit: 2})
		done, live := jobs[0], jobs[1]
		b.complete(lease(done), b.clock.Advance(time.Second))
		unknown := spine.Lease{JobID: uuid.Must(uuid.NewV7()), ClaimToken: uuid.Must(uuid.NewV7())}
		forged := spine.Lease{JobID: live.ID, ClaimToken: uuid.Must(uuid.NewV7())}
		got := b.heartbeat(b.clock.Advance(time.Second), lease(done), unknown, forged, lease(live))
		if _, ok := got[live.ID]; !ok || len(got) != 1 {
			t.Fatalf("heartbeat returned %+v, want only the live lease %v", got, live.ID)
		}
	})

	t.Run("ReportsCancelMark", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		jobs := b.claim(spine.ClaimParams{Limit: 2})
		if len(jobs) != 2 {
			t.Fatalf("claimed %d jobs, want 2", len(jobs))
		}
		marked, other := jobs[0], jobs[1]
		if out := b.cancel(marked.ID, "alice", "stop it", b.clock.Now()); out.Status != spine.StatusRunning {
			t.Fatalf("cancel of a running job: status %q, want running (marked)", out.Status)
		}
		beat := b.clock.Advance(2 * time.Second)
		got := b.heartbeat(beat, lease(marked), lease(other))
		if !got[marked.ID].CancelRequested {
			t.Fatalf("heartbeat of a cancel-marked job: %+v, want CancelRequested", got[marked.ID])
		}
		if r, ok := got[other.ID]; !ok || r.CancelRequested {
			t.Fatalf("heartbeat of an unmarked job: %+v (present %v), want owned without a mark", r, ok)
		}
		sameTimePtr(t, "a marked job's ping is still renewed", b.get(marked.ID).Ping, beat)
	})
}
