package storetest

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// testFail checks invariant 5 for failures: a failed attempt with attempts
// left goes back to waiting with exponential backoff; the last one
// finishes the job as failure; a stale owner changes nothing.
func testFail(t *testing.T, newStore newStoreFunc) {
	t.Run("RetriesWithBackoffThenFails", func(t *testing.T) {
		t.Parallel()
		testRetrySchedule(t, newStore)
	})

	t.Run("NoRetryByDefault", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue() // the pin's policy: one attempt
		c := b.claimOne(b.clock.Now())
		now := b.clock.Advance(time.Second)
		out, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(c),
			Error: spine.JobError{Message: "exit status 3", Stack: "at main.ts:10", Kind: "exit"}, Now: now})
		if err != nil {
			t.Fatalf("Fail: %v", err)
		}
		if out.Retried || out.Status != spine.StatusFailure {
			t.Fatalf("Fail of the only attempt: %+v, want not retried, status failure", out)
		}
		j := b.requireStatus(id, spine.StatusFailure, "only attempt failed")
		if j.Error == nil || *j.Error != (spine.JobError{Message: "exit status 3", Stack: "at main.ts:10", Kind: "exit"}) {
			t.Fatalf("stored error %+v, want message, stack and kind as given", j.Error)
		}
		sameTimePtr(t, "completed_at", j.CompletedAt, now)
		requireNilTime(t, "ping of a failed job", j.Ping)
		b.requireEmptyQueue("a failed job left its queue row")
	})

	t.Run("OtherOwnerUnaffected", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		old := b.claimOne(b.clock.Now())
		reapAt := b.clock.Advance(zombieTimeout + time.Second)
		b.reap(reapAt)
		newer := b.claimOne(reapAt)
		_, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(old), Error: spine.JobError{Message: "stale"}, Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotOwner, "Fail with the token of a reaped claim")
		j := b.requireStatus(id, spine.StatusRunning, "a stale Fail must write nothing")
		if j.Attempt != 1 || j.LastError == nil || j.LastError.Kind != "zombie" {
			t.Fatalf("after a stale Fail: attempt %d last_error %+v; want attempt 1 and the reaper's error", j.Attempt, j.LastError)
		}
		b.complete(lease(newer), b.clock.Advance(time.Second))
	})
}

// testRetrySchedule walks a job with {MaxAttempts 3, Backoff 5s, Factor 5}
// through three failed attempts.
func testRetrySchedule(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	id := b.enqueue(withRetry(retry3))
	first := b.claimOne(b.clock.Now())
	stale := lease(first)

	cur := first
	for attempt := 1; attempt <= 2; attempt++ {
		failedAt := b.clock.Advance(2 * time.Second)
		out := b.fail(lease(cur), "boom", failedAt)
		lo, hi := spine.RetryDelayRange(retry3, attempt)
		if !out.Retried || out.NextAttempt != attempt+1 {
			t.Fatalf("Fail of attempt %d of 3: %+v, want retried as attempt %d", attempt, out, attempt+1)
		}
		inRange(t, "retry time", out.ScheduledFor, failedAt.Add(lo), failedAt.Add(hi))
		_, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(cur), Error: spine.JobError{Message: "again"}, Now: failedAt})
		requireErrorIs(t, err, spine.ErrNotOwner, "a second Fail of a job already back to waiting")

		j := b.requireStatus(id, spine.StatusQueued, "waiting for its retry")
		if j.Attempt != attempt+1 || j.Restarts != 0 || j.Worker != "" {
			t.Fatalf("after failed attempt %d: attempt %d restarts %d worker %q; want %d, 0, none",
				attempt, j.Attempt, j.Restarts, j.Worker, attempt+1)
		}
		sameTime(t, "stored scheduled_for", j.ScheduledFor, out.ScheduledFor)
		requireNilTime(t, "started_at of a job waiting for a retry", j.StartedAt)
		requireNilTime(t, "ping of a job waiting for a retry", j.Ping)
		if j.LastError == nil || j.LastError.Message != "boom" {
			t.Fatalf("last_error after a failed attempt: %+v, want message boom", j.LastError)
		}

		b.claimNone(j.ScheduledFor.Add(-time.Millisecond), "1ms before the retry time")
		due := j.ScheduledFor.Add(time.Millisecond)
		b.clock.Advance(due.Sub(b.clock.Now()))
		cur = b.claimOne(due)
		if cur.ID != id || cur.Attempt != attempt+1 {
			t.Fatalf("retry claim: job %v attempt %d, want %v attempt %d", cur.ID, cur.Attempt, id, attempt+1)
		}
	}

	failedAt := b.clock.Advance(2 * time.Second)
	out, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(cur),
		Error: spine.JobError{Message: "boom for good", Stack: "trace", Kind: "throw"}, Now: failedAt})
	if err != nil {
		t.Fatalf("Fail of the last attempt: %v", err)
	}
	if out.Retried || out.Status != spine.StatusFailure {
		t.Fatalf("Fail of attempt 3 of 3: %+v, want not retried, status failure", out)
	}
	j := b.requireStatus(id, spine.StatusFailure, "attempts used up")
	requireErrorMessage(t, "final error", j.Error, "boom for good")
	if j.Attempt != 3 || j.Error.Kind != "throw" || j.Error.Stack != "trace" {
		t.Fatalf("failed job: attempt %d error %+v; want attempt 3 with kind and stack", j.Attempt, j.Error)
	}
	sameTimePtr(t, "completed_at", j.CompletedAt, failedAt)

	_, err = b.store.Fail(b.ctx, spine.FailParams{Lease: stale, Error: spine.JobError{Message: "late"}, Now: b.clock.Now()})
	requireErrorIs(t, err, spine.ErrNotOwner, "late Fail with attempt 1's token")
	requireErrorMessage(t, "error after a late Fail", b.requireStatus(id, spine.StatusFailure, "late Fail").Error, "boom for good")
}
