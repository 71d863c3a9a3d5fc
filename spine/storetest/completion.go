package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testCompletion checks SubscribeCompletion: a waiter subscribed to a job
// is woken by every path that makes the job terminal (Complete,
// CompleteBatch, a last Fail, FailBatch, Release and Cancel of a waiting
// job, a canceled job's completion, both of the reaper's endings), and a
// waiter woken reads the job finished (the wake-up follows the commit).
// Wake-ups are hints and may be broad, so only delivery is checked.
func testCompletion(t *testing.T, newStore newStoreFunc) {
	t.Run("Complete", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		first, second := b.awaitCompletion(id), b.awaitCompletion(id)
		c := b.claimOne(b.clock.Now())
		b.complete(lease(c), b.clock.Now())
		b.requireWoken(first, id, spine.StatusSuccess, "Complete")
		b.requireWoken(second, id, spine.StatusSuccess, "Complete (second waiter)")
	})

	t.Run("CompleteBatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		// More jobs than one Postgres notification carries (200 ids).
		const n = 250
		ids := b.enqueueN(n)
		waits := make(map[uuid.UUID]<-chan spine.Finished, n)
		for _, id := range ids {
			waits[id] = b.awaitCompletion(id)
		}
		jobs := b.claimAll(n, b.clock.Now())
		marked := jobs[0].ID
		b.cancel(marked, "alice", "stop", b.clock.Now())
		ps := make([]spine.CompleteParams, len(jobs))
		for i, j := range jobs {
			ps[i] = spine.CompleteParams{Lease: lease(j), Result: batchResult(j.ID), Now: b.clock.Now()}
		}
		for i, out := range b.completeBatch(ps) {
			if out.Err != nil {
				t.Fatalf("CompleteBatch outcome %d: %v", i, out.Err)
			}
		}
		for id, ch := range waits {
			want := spine.StatusSuccess
			if id == marked {
				want = spine.StatusCanceled
			}
			b.requireWoken(ch, id, want, "CompleteBatch")
		}
	})

	t.Run("FailAndFailBatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		single, final, marked, retried := b.enqueue(), b.enqueue(), b.enqueue(withRetry(retry3)), b.enqueue(withRetry(retry3))
		waits := map[uuid.UUID]<-chan spine.Finished{}
		for _, id := range []uuid.UUID{single, final, marked} {
			waits[id] = b.awaitCompletion(id)
		}
		byID := map[uuid.UUID]spine.ClaimedJob{}
		for _, j := range b.claimAll(4, b.clock.Now()) {
			byID[j.ID] = j
		}
		if out := b.fail(lease(byID[single]), "only try", b.clock.Now()); out.Retried {
			t.Fatalf("Fail of the last attempt retried: %+v", out)
		}
		b.requireWoken(waits[single], single, spine.StatusFailure, "Fail of the last attempt")

		b.cancel(marked, "alice", "stop", b.clock.Now())
		var ps []spine.FailParams
		for _, id := range []uuid.UUID{final, marked, retried} {
			ps = append(ps, spine.FailParams{Lease: lease(byID[id]), Error: spine.JobError{Message: "boom", Kind: "exit"}, Now: b.clock.Now()})
		}
		outs, err := b.store.FailBatch(b.ctx, ps)
		if err != nil {
			t.Fatalf("FailBatch: %v", err)
		}
		if !outs[2].Retried {
			t.Fatalf("FailBatch with attempts left: %+v, want a retry", outs[2])
		}
		b.requireWoken(waits[final], final, spine.StatusFailure, "FailBatch of a last attempt")
		b.requireWoken(waits[marked], marked, spine.StatusCanceled, "FailBatch of a cancel-marked job")
	})

	t.Run("CancelAndRelease", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		waiting := b.enqueue(withPriority(-1)) // claimed last, so it stays waiting
		running, released := b.enqueue(), b.enqueue()
		waits := map[uuid.UUID]<-chan spine.Finished{}
		for _, id := range []uuid.UUID{waiting, running, released} {
			waits[id] = b.awaitCompletion(id)
		}
		byID := map[uuid.UUID]spine.ClaimedJob{}
		for _, j := range b.claim(spine.ClaimParams{Limit: 2}) {
			byID[j.ID] = j
		}
		if len(byID) != 2 || byID[running].ID != running || byID[released].ID != released {
			t.Fatalf("claimed %v, want %v and %v", byID, running, released)
		}
		b.cancel(waiting, "alice", "not needed", b.clock.Now())
		b.requireWoken(waits[waiting], waiting, spine.StatusCanceled, "Cancel of a waiting job")

		// A running job's mark is not its end: its worker's completion is.
		b.cancel(running, "alice", "stop", b.clock.Now())
		b.cancel(released, "alice", "stop", b.clock.Now())
		b.completeAs(lease(byID[running]), b.clock.Now(), spine.StatusCanceled)
		b.requireWoken(waits[running], running, spine.StatusCanceled, "Complete of a cancel-marked job")
		if err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(byID[released]), Now: b.clock.Now()}); err != nil {
			t.Fatalf("Release: %v", err)
		}
		b.requireWoken(waits[released], released, spine.StatusCanceled, "Release of a cancel-marked job")
	})

	t.Run("Reap", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		canceled, exhausted := b.enqueue(), b.enqueue()
		waits := map[uuid.UUID]<-chan spine.Finished{canceled: b.awaitCompletion(canceled), exhausted: b.awaitCompletion(exhausted)}
		b.claimAll(2, b.clock.Now())
		b.cancel(canceled, "alice", "stop", b.clock.Now())
		res := b.reapWith(spine.ReapParams{Now: b.clock.Advance(2 * zombieTimeout), ZombieTimeout: zombieTimeout, RestartLimit: 0})
		requireReaped(t, res, nil, []uuid.UUID{exhausted}, []uuid.UUID{canceled})
		b.requireWoken(waits[canceled], canceled, spine.StatusCanceled, "the reaper finishing a canceled zombie")
		b.requireWoken(waits[exhausted], exhausted, spine.StatusFailure, "the reaper failing a zombie past its restart limit")
	})

	t.Run("Unsubscribe", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		ch, stop := b.store.SubscribeCompletion(id)
		stop()
		stop() // idempotent
		kept := b.awaitCompletion(id)
		c := b.claimOne(b.clock.Now())
		if _, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(c), Result: json.RawMessage(`1`), Now: b.clock.Now()}); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		b.requireWoken(kept, id, spine.StatusSuccess, "Complete beside an ended subscription")
		select {
		case <-ch:
			t.Fatal("an ended subscription received a wake-up")
		default:
		}
	})
}

// awaitCompletion subscribes to id's completion for the rest of the test.
func (b *bundle) awaitCompletion(id uuid.UUID) <-chan spine.Finished {
	ch, stop := b.store.SubscribeCompletion(id)
	b.t.Cleanup(stop)
	return ch
}

// requireWoken waits for the wake-up on ch (failing after wakeDeadline)
// and then requires the job to read as want: a waiter woken by a
// completion finds it committed.
func (b *bundle) requireWoken(ch <-chan spine.Finished, id uuid.UUID, want spine.Status, after string) {
	b.t.Helper()
	timer := time.NewTimer(wakeDeadline)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		b.t.Fatalf("job %v: no completion wake-up within %v after %s", id, wakeDeadline, after)
	}
	b.requireStatus(id, want, "read right after its completion wake-up ("+after+")")
}
