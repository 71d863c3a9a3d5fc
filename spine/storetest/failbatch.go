package storetest

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// testFailBatch checks FailBatch: each failure in a batch is recorded
// exactly as Fail would record it (a retry with backoff, a final failure,
// canceled when marked), fenced on its own claim token; a lost or repeated
// lease answers for itself only and writes nothing.
func testFailBatch(t *testing.T, newStore newStoreFunc) {
	t.Run("EachAsFailWould", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		retried := b.enqueue(withRetry(retry3))
		final := b.enqueue()
		marked := b.enqueue(withRetry(retry3))
		lost := b.enqueue()
		jobs := b.claimAll(4, b.clock.Now())
		byID := map[string]spine.ClaimedJob{}
		for _, j := range jobs {
			byID[j.ID.String()] = j
		}
		b.cancel(marked, "alice", "enough", b.clock.Now())
		stale := lease(byID[lost.String()])
		stale.ClaimToken = lease(byID[retried.String()]).ClaimToken
		now := b.clock.Advance(time.Second)
		fail := func(l spine.Lease, msg string) spine.FailParams {
			return spine.FailParams{Lease: l, Error: spine.JobError{Message: msg, Kind: "exit"}, Now: now}
		}
		ps := []spine.FailParams{
			fail(lease(byID[retried.String()]), "first try"),
			fail(lease(byID[final.String()]), "only try"),
			fail(lease(byID[marked.String()]), "stopped"),
			fail(stale, "not mine"),
			fail(lease(byID[final.String()]), "again"),
		}
		outs, err := b.store.FailBatch(b.ctx, ps)
		if err != nil {
			t.Fatalf("FailBatch: %v", err)
		}
		if len(outs) != len(ps) {
			t.Fatalf("FailBatch returned %d outcomes for %d requests", len(outs), len(ps))
		}
		for i, out := range outs {
			if out.JobID != ps[i].JobID {
				t.Fatalf("outcome %d is for job %v, want %v", i, out.JobID, ps[i].JobID)
			}
		}
		lo, hi := spine.RetryDelayRange(retry3, 1)
		if o := outs[0]; o.Err != nil || !o.Retried || o.NextAttempt != 2 ||
			o.ScheduledFor.Before(now.Add(lo).Add(-time.Millisecond)) || o.ScheduledFor.After(now.Add(hi).Add(time.Millisecond)) {
			t.Fatalf("failure with attempts left: %+v, want a retry as attempt 2 in [%v, %v] from now", o, lo, hi)
		}
		if o := outs[1]; o.Err != nil || o.Retried || o.Status != spine.StatusFailure {
			t.Fatalf("failure of the only attempt: %+v, want status failure", o)
		}
		if o := outs[2]; o.Err != nil || o.Retried || o.Status != spine.StatusCanceled {
			t.Fatalf("failure of a cancel-marked job: %+v, want canceled (the mark wins over a retry)", o)
		}
		requireErrorIs(t, outs[3].Err, spine.ErrNotOwner, "a stale lease in a batch")
		requireErrorIs(t, outs[4].Err, spine.ErrNotOwner, "a lease repeated in a batch")

		j := b.requireStatus(retried, spine.StatusQueued, "retried in a batch")
		if j.Attempt != 2 || j.LastError == nil || j.LastError.Message != "first try" {
			t.Fatalf("retried job: attempt %d last_error %+v", j.Attempt, j.LastError)
		}
		j = b.requireStatus(final, spine.StatusFailure, "failed in a batch")
		if j.Error == nil || j.Error.Message != "only try" {
			t.Fatalf("failed job's error %+v, want the first request's, not the repeat's", j.Error)
		}
		b.requireStatus(marked, spine.StatusCanceled, "a marked job failed in a batch")
		j = b.requireStatus(lost, spine.StatusRunning, "a stale lease must write nothing")
		if j.Error != nil || j.LastError != nil {
			t.Fatalf("job behind a stale lease got an error: %+v / %+v", j.Error, j.LastError)
		}
	})

	// A reaped job's old lease and its new owner's lease in one batch: the
	// stale one is refused, the current one recorded.
	t.Run("StaleAndCurrentLeaseOfOneJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		old := b.claimOne(b.clock.Now())
		reapAt := b.clock.Advance(zombieTimeout + time.Second)
		b.reap(reapAt)
		newer := b.claimOne(reapAt)
		outs, err := b.store.FailBatch(b.ctx, []spine.FailParams{
			{Lease: lease(old), Error: spine.JobError{Message: "stale"}, Now: reapAt},
			{Lease: lease(newer), Error: spine.JobError{Message: "current"}, Now: reapAt},
		})
		if err != nil {
			t.Fatalf("FailBatch: %v", err)
		}
		requireErrorIs(t, outs[0].Err, spine.ErrNotOwner, "the reaped claim's lease")
		if outs[1].Err != nil || outs[1].Status != spine.StatusFailure {
			t.Fatalf("the current owner's failure: %+v, want status failure", outs[1])
		}
		if j := b.requireStatus(id, spine.StatusFailure, "failed by its current owner"); j.Error == nil || j.Error.Message != "current" {
			t.Fatalf("stored error %+v, want the current owner's", j.Error)
		}
	})

	t.Run("EmptyAndAllLost", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		if outs, err := b.store.FailBatch(b.ctx, nil); err != nil || len(outs) != 0 {
			t.Fatalf("FailBatch(nil) = %v, %v", outs, err)
		}
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		b.complete(lease(c), b.clock.Advance(time.Second))
		outs, err := b.store.FailBatch(b.ctx, []spine.FailParams{{Lease: lease(c), Error: spine.JobError{Message: "late"}}})
		if err != nil {
			t.Fatalf("FailBatch of a finished job: %v", err)
		}
		requireErrorIs(t, outs[0].Err, spine.ErrNotOwner, "failing a job already completed")
		b.requireStatus(id, spine.StatusSuccess, "a late failure must not touch a completed job")
	})
}
