package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testReopen checks invariant 7: an operator may run a failed (or, forced,
// a canceled) job again under the same id and pin; any other state is a
// conflict; every reopen is audited.
func testReopen(t *testing.T, newStore newStoreFunc) {
	t.Run("FailureRunsAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		p := b.params(withRetry(retry3), withPriority(6), withTag("ops"), withInput(`{"name":"again"}`))
		wantPin := p.Pin
		res, err := b.store.Enqueue(b.ctx, p)
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		id := res.ID
		// Fail it through the restart limit so attempt, restarts and the
		// error all need clearing.
		claimOps := spine.ClaimParams{Tags: []string{"ops"}}
		for range restartLimit {
			claimOps.Now = b.clock.Now()
			b.claim(claimOps)
			b.reap(b.clock.Advance(2 * zombieTimeout))
		}
		claimOps.Now = b.clock.Now()
		b.claim(claimOps)
		b.reap(b.clock.Advance(2 * zombieTimeout))
		b.requireStatus(id, spine.StatusFailure, "past the restart limit")

		now := b.clock.Advance(time.Minute)
		if err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: id, By: "operator", Reason: "fixed the bug", Now: now}); err != nil {
			t.Fatalf("Reopen of a failed job: %v", err)
		}
		j := b.requireStatus(id, spine.StatusQueued, "reopened")
		requirePin(t, "reopened job", j.Pin, wantPin)
		jsonEqual(t, "reopened input", j.Input, p.Input)
		if j.Attempt != 1 || j.Restarts != 0 || j.Priority != 6 || j.Worker != "" || j.Error != nil || j.LastError != nil {
			t.Fatalf("reopened job: attempt %d restarts %d priority %d worker %q error %v last_error %v; want 1, 0, 6, none",
				j.Attempt, j.Restarts, j.Priority, j.Worker, j.Error, j.LastError)
		}
		sameTime(t, "scheduled_for of a reopened job", j.ScheduledFor, now)
		requireNilTime(t, "completed_at of a reopened job", j.CompletedAt)
		requireNilTime(t, "started_at of a reopened job", j.StartedAt)
		requireAudit(t, b, id, auditWant{"reopen", "operator", "fixed the bug", now})

		c := b.claim(spine.ClaimParams{Tags: []string{"ops"}, Now: now})
		if len(c) != 1 || c[0].ID != id || c[0].Attempt != 1 || c[0].Restarts != 0 {
			t.Fatalf("claim after reopen: %+v, want the same job at attempt 1, restarts 0", c)
		}
		b.complete(lease(c[0]), b.clock.Advance(time.Second))
		b.requireStatus(id, spine.StatusSuccess, "the reopened run succeeded")
	})

	t.Run("OtherStatesConflict", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		jobs := b.claim(spine.ClaimParams{Limit: 2})
		b.complete(lease(jobs[0]), b.clock.Now())
		succeeded, running := jobs[0].ID, jobs[1].ID
		queued := b.enqueue()
		for _, tc := range []struct {
			id     uuid.UUID
			status spine.Status
		}{{succeeded, spine.StatusSuccess}, {running, spine.StatusRunning}, {queued, spine.StatusQueued}} {
			for _, force := range []bool{false, true} {
				err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: tc.id, By: "operator", Force: force, Now: b.clock.Now()})
				requireErrorIs(t, err, spine.ErrConflict, "Reopen (force "+strconv.FormatBool(force)+") of a "+string(tc.status)+" job")
				b.requireStatus(tc.id, tc.status, "a refused reopen changes nothing")
				if a := b.audit(tc.id); len(a) != 0 {
					t.Fatalf("a refused reopen wrote audit rows: %+v", a)
				}
			}
		}
	})

	t.Run("CanceledNeedsForce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		canceledAt := b.clock.Now()
		b.cancel(id, "alice", "oops", canceledAt)
		err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: id, By: "operator", Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrConflict, "Reopen of a canceled job without force")
		b.requireStatus(id, spine.StatusCanceled, "a refused reopen changes nothing")

		now := b.clock.Advance(time.Minute)
		if err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: id, By: "operator", Reason: "forced", Force: true, Now: now}); err != nil {
			t.Fatalf("forced Reopen of a canceled job: %v", err)
		}
		j := b.requireStatus(id, spine.StatusQueued, "reopened with force")
		if j.CanceledBy != "" || j.CanceledReason != "" {
			t.Fatalf("reopened job still carries the cancel: by %q reason %q", j.CanceledBy, j.CanceledReason)
		}
		requireAudit(t, b, id, auditWant{"cancel", "alice", "oops", canceledAt}, auditWant{"reopen", "operator", "forced", now})
		c := b.claimOne(now)
		if c.ID != id {
			t.Fatalf("claimed %v after reopen, want %v", c.ID, id)
		}
		if got := b.heartbeat(now, lease(c)); got[id].CancelRequested {
			t.Fatal("a reopened job reports the old cancel mark")
		}
	})

	t.Run("UnknownOrOtherWorkspace", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		b.fail(lease(b.claimOne(b.clock.Now())), "broken", b.clock.Now())
		err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: uuid.Must(uuid.NewV7()), By: "operator", Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotFound, "Reopen of an unknown job")
		err = b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: otherWS, JobID: id, By: "operator", Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotFound, "Reopen from another workspace")
		b.requireStatus(id, spine.StatusFailure, "a reopen from another workspace changes nothing")
	})
}
