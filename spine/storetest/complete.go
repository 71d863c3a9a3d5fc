package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// testComplete checks invariant 5 for success: completion is fenced on the
// claim token and writes status, result and times in one go.
func testComplete(t *testing.T, newStore newStoreFunc) {
	t.Run("WritesSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		started := b.clock.Advance(time.Second)
		c := b.claim(spine.ClaimParams{Worker: "worker-9", Now: started})[0]
		done := b.clock.Advance(1500 * time.Millisecond)
		result := json.RawMessage(`{"greeting":"hello world","n":[1,2]}`)
		st, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(c), Result: result, Now: done})
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if st != spine.StatusSuccess {
			t.Fatalf("Complete: status %q, want success", st)
		}
		j := b.requireStatus(id, spine.StatusSuccess, "completed")
		jsonEqual(t, "stored result", j.Result, result)
		sameTimePtr(t, "started_at", j.StartedAt, started)
		sameTimePtr(t, "completed_at", j.CompletedAt, done)
		if d := j.CompletedAt.Sub(*j.StartedAt); d != 1500*time.Millisecond {
			t.Fatalf("duration %v, want 1.5s", d)
		}
		if j.Attempt != 1 || j.Restarts != 0 || j.Worker != "worker-9" || j.Error != nil {
			t.Fatalf("completed job: attempt %d restarts %d worker %q error %v; want 1, 0, worker-9, none",
				j.Attempt, j.Restarts, j.Worker, j.Error)
		}
		requireNilTime(t, "ping of a finished job (job_runtime row deleted)", j.Ping)
		requirePin(t, "pin of a finished job", j.Pin, fullPin())
		b.requireEmptyQueue("a completed job left its queue row")
		b.claimNone(done.Add(time.Hour), "the only job is finished")
	})

	t.Run("KeepsAttemptAndRestarts", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		out := b.fail(lease(b.claimOne(b.clock.Now())), "first attempt", b.clock.Now())
		now := b.clock.Advance(time.Minute)
		if !out.Retried || out.ScheduledFor.After(now) {
			t.Fatalf("fail with attempts left: %+v", out)
		}
		b.claimOne(now)
		now = b.clock.Advance(zombieTimeout + time.Second)
		b.reap(now)
		c := b.claimOne(now)
		b.complete(lease(c), b.clock.Advance(time.Second))
		j := b.requireStatus(id, spine.StatusSuccess, "completed on attempt 2 after a restart")
		if j.Attempt != 2 || j.Restarts != 1 {
			t.Fatalf("completed job: attempt %d restarts %d, want 2 and 1", j.Attempt, j.Restarts)
		}
	})

	t.Run("StaleTokenWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		old := b.claim(spine.ClaimParams{Worker: "worker-old"})[0]
		reapAt := b.clock.Advance(zombieTimeout + time.Second)
		b.reap(reapAt)
		newer := b.claim(spine.ClaimParams{Worker: "worker-new", Now: reapAt})[0]

		_, err := b.store.Complete(b.ctx, spine.CompleteParams{
			Lease: lease(old), Result: json.RawMessage(`{"from":"old"}`), Now: b.clock.Advance(time.Second)})
		requireErrorIs(t, err, spine.ErrNotOwner, "Complete with the token of a reaped claim")
		j := b.requireStatus(id, spine.StatusRunning, "a stale Complete must write nothing")
		if j.Worker != "worker-new" {
			t.Fatalf("worker %q after a stale Complete, want worker-new", j.Worker)
		}

		st, err := b.store.Complete(b.ctx, spine.CompleteParams{
			Lease: lease(newer), Result: json.RawMessage(`{"from":"new"}`), Now: b.clock.Advance(time.Second)})
		if err != nil || st != spine.StatusSuccess {
			t.Fatalf("Complete by the current owner: %q, %v; want success", st, err)
		}
		_, err = b.store.Complete(b.ctx, spine.CompleteParams{
			Lease: lease(old), Result: json.RawMessage(`{"from":"old"}`), Now: b.clock.Advance(time.Second)})
		requireErrorIs(t, err, spine.ErrNotOwner, "Complete with a stale token after the job finished")
		j = b.requireStatus(id, spine.StatusSuccess, "finished by the current owner")
		jsonEqual(t, "result kept", j.Result, json.RawMessage(`{"from":"new"}`))
		if j.Worker != "worker-new" {
			t.Fatalf("finished job's worker %q, want worker-new", j.Worker)
		}
	})

	t.Run("SecondCompleteRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		b.complete(lease(c), b.clock.Advance(time.Second))
		_, err := b.store.Complete(b.ctx, spine.CompleteParams{
			Lease: lease(c), Result: json.RawMessage(`{"twice":true}`), Now: b.clock.Advance(time.Second)})
		requireErrorIs(t, err, spine.ErrNotOwner, "second Complete with the same token")
		_, err = b.store.Fail(b.ctx, spine.FailParams{Lease: lease(c), Error: spine.JobError{Message: "late"}, Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotOwner, "Fail after Complete")
		j := b.requireStatus(id, spine.StatusSuccess, "first completion stands")
		jsonEqual(t, "result of the first completion", j.Result, json.RawMessage(`{"ok":true}`))
	})

	t.Run("InvalidResultKeepsJobOwned", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		for name, res := range map[string]json.RawMessage{
			"not JSON": json.RawMessage(`{"greeting":`),
			"NUL":      json.RawMessage(`{"greeting":"a\u0000b"}`),
		} {
			_, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(c), Result: res, Now: b.clock.Now()})
			requireErrorIs(t, err, spine.ErrInvalid, "Complete with a "+name+" result")
		}
		b.requireStatus(id, spine.StatusRunning, "a refused result must leave the job running")
		if got := b.heartbeat(b.clock.Now(), lease(c)); len(got) != 1 {
			t.Fatal("after a refused result the worker no longer owns its job")
		}
		b.complete(lease(c), b.clock.Advance(time.Second))
	})
}
