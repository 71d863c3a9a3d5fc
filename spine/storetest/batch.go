package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testCompleteBatch checks CompleteBatch: every job in a batch is completed
// exactly as Complete would (invariant 5), fenced on its own claim token
// and all-or-nothing per job; a lost lease or a refused result answers for
// its own job only and never blocks the others.
func testCompleteBatch(t *testing.T, newStore newStoreFunc) {
	t.Run("CompletesEveryJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ids := b.enqueueN(5)
		started := b.clock.Advance(time.Second)
		jobs := b.claim(spine.ClaimParams{Worker: "worker-7", Limit: 5, Now: started})
		if len(jobs) != 5 {
			t.Fatalf("claimed %d jobs, want 5", len(jobs))
		}
		done := b.clock.Advance(250 * time.Millisecond)
		ps := make([]spine.CompleteParams, len(jobs))
		for i, j := range jobs {
			ps[i] = spine.CompleteParams{Lease: lease(j), Result: batchResult(j.ID), Now: done}
		}
		outs := b.completeBatch(ps)
		for i, out := range outs {
			if out.Err != nil || out.Status != spine.StatusSuccess || out.JobID != jobs[i].ID {
				t.Fatalf("outcome %d: %+v, want success of %v", i, out, jobs[i].ID)
			}
		}
		for _, id := range ids {
			j := b.requireStatus(id, spine.StatusSuccess, "completed in a batch")
			jsonEqual(t, "stored result", j.Result, batchResult(id))
			sameTimePtr(t, "started_at", j.StartedAt, started)
			sameTimePtr(t, "completed_at", j.CompletedAt, done)
			requireNilTime(t, "ping of a finished job", j.Ping)
			if j.Worker != "worker-7" || j.Attempt != 1 || j.Error != nil {
				t.Fatalf("job %v: worker %q attempt %d error %v", id, j.Worker, j.Attempt, j.Error)
			}
		}
		b.requireEmptyQueue("a batch completion left queue rows")
	})

	t.Run("StaleTokenOnlyFailsItsOwnJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(3)
		now := b.clock.Now()
		jobs := b.claim(spine.ClaimParams{Limit: 3, Now: now})
		if len(jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(jobs))
		}
		// jobs[1] is reaped and claimed by another owner: its first owner's
		// token is stale. jobs[0] and jobs[2] keep heartbeating.
		later := b.clock.Advance(zombieTimeout / 2)
		b.heartbeat(later, lease(jobs[0]), lease(jobs[2]))
		later = b.clock.Advance(zombieTimeout/2 + time.Second)
		if res := b.reap(later); len(res.Requeued) != 1 || res.Requeued[0] != jobs[1].ID {
			t.Fatalf("reap requeued %v, want only %v", res.Requeued, jobs[1].ID)
		}
		other := b.claim(spine.ClaimParams{Worker: "worker-2", Now: later})
		if len(other) != 1 || other[0].ID != jobs[1].ID {
			t.Fatalf("second owner claimed %v, want %v", claimedIDs(other), jobs[1].ID)
		}
		forged := spine.Lease{JobID: jobs[2].ID, ClaimToken: uuid.New()}
		ps := []spine.CompleteParams{
			{Lease: lease(jobs[0]), Result: batchResult(jobs[0].ID), Now: later},
			{Lease: lease(jobs[1]), Result: json.RawMessage(`"stale"`), Now: later},
			{Lease: forged, Result: json.RawMessage(`"forged"`), Now: later},
			{Lease: lease(jobs[2]), Result: batchResult(jobs[2].ID), Now: later},
		}
		outs := b.completeBatch(ps)
		requireErrorIs(t, outs[1].Err, spine.ErrNotOwner, "the stale owner's completion in a batch")
		requireErrorIs(t, outs[2].Err, spine.ErrNotOwner, "a forged token in a batch")
		for _, i := range []int{0, 3} {
			if outs[i].Err != nil || outs[i].Status != spine.StatusSuccess {
				t.Fatalf("outcome %d: %+v, want success beside a stale lease", i, outs[i])
			}
			j := b.requireStatus(ps[i].JobID, spine.StatusSuccess, "completed beside a stale lease")
			jsonEqual(t, "stored result", j.Result, ps[i].Result)
		}
		j := b.requireStatus(jobs[1].ID, spine.StatusRunning, "a stale completion must not touch the new owner's job")
		if j.Worker != "worker-2" || j.Result != nil {
			t.Fatalf("reclaimed job: worker %q result %s, want worker-2 and no result", j.Worker, j.Result)
		}
		b.complete(lease(other[0]), b.clock.Advance(time.Second))
	})

	t.Run("CancelMarkWinsAndRefusedResultStaysOwned", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(3)
		now := b.clock.Now()
		jobs := b.claim(spine.ClaimParams{Limit: 3, Now: now})
		if len(jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(jobs))
		}
		if out := b.cancel(jobs[0].ID, "ada", "stop", now); out.Status != spine.StatusRunning {
			t.Fatalf("cancel of a running job: %q, want running (marked)", out.Status)
		}
		done := b.clock.Advance(time.Second)
		outs := b.completeBatch([]spine.CompleteParams{
			{Lease: lease(jobs[0]), Result: json.RawMessage(`{"ok":true}`), Now: done},
			{Lease: lease(jobs[1]), Result: json.RawMessage(`{"broken"`), Now: done},
			{Lease: lease(jobs[2]), Result: json.RawMessage(`{"ok":true}`), Now: done},
			{Lease: lease(jobs[2]), Result: json.RawMessage(`{"again":true}`), Now: done},
		})
		if outs[0].Err != nil || outs[0].Status != spine.StatusCanceled {
			t.Fatalf("marked job's outcome %+v, want canceled", outs[0])
		}
		b.requireStatus(jobs[0].ID, spine.StatusCanceled, "a marked job completes canceled (invariant 6)")
		requireErrorIs(t, outs[1].Err, spine.ErrInvalid, "a result that is not JSON")
		b.requireStatus(jobs[1].ID, spine.StatusRunning, "a refused result writes nothing")
		if outs[2].Err != nil || outs[2].Status != spine.StatusSuccess {
			t.Fatalf("outcome 2: %+v, want success", outs[2])
		}
		requireErrorIs(t, outs[3].Err, spine.ErrNotOwner, "a lease repeated in the batch")
		j := b.requireStatus(jobs[2].ID, spine.StatusSuccess, "completed once")
		jsonEqual(t, "result of the first completion", j.Result, json.RawMessage(`{"ok":true}`))
		b.complete(lease(jobs[1]), b.clock.Advance(time.Second))
	})

	t.Run("EmptyAndAllLost", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		if outs := b.completeBatch(nil); len(outs) != 0 {
			t.Fatalf("empty batch: %d outcomes", len(outs))
		}
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		outs := b.completeBatch([]spine.CompleteParams{{Lease: spine.Lease{JobID: id, ClaimToken: uuid.New()}}})
		requireErrorIs(t, outs[0].Err, spine.ErrNotOwner, "a batch of one forged lease")
		b.requireStatus(id, spine.StatusRunning, "a forged lease changes nothing")
		b.complete(lease(c), b.clock.Now())
	})
}

// completeBatch runs CompleteBatch and requires one outcome per request.
func (b *bundle) completeBatch(ps []spine.CompleteParams) []spine.CompleteOutcome {
	b.t.Helper()
	outs, err := b.store.CompleteBatch(b.ctx, ps)
	if err != nil {
		b.t.Fatalf("CompleteBatch of %d: %v", len(ps), err)
	}
	if len(outs) != len(ps) {
		b.t.Fatalf("CompleteBatch of %d returned %d outcomes", len(ps), len(outs))
	}
	return outs
}

// batchResult is a result that names its job, so a mix-up shows.
func batchResult(id uuid.UUID) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"job":%q}`, id))
}
