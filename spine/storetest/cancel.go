package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testCancel checks invariant 6: cancel is terminal. A waiting job ends at
// once; a running one is marked, and every way it can end then ends
// canceled.
func testCancel(t *testing.T, newStore newStoreFunc) {
	t.Run("WaitingEndsAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		future := b.enqueue(withScheduledFor(b.clock.Now().Add(time.Hour)))
		now := b.clock.Advance(time.Second)
		if out := b.cancel(id, "alice", "no longer needed", now); out.Status != spine.StatusCanceled {
			t.Fatalf("cancel of a waiting job: status %q, want canceled", out.Status)
		}
		j := b.requireStatus(id, spine.StatusCanceled, "canceled while waiting")
		if j.CanceledBy != "alice" || j.CanceledReason != "no longer needed" {
			t.Fatalf("canceled job: by %q reason %q, want alice / no longer needed", j.CanceledBy, j.CanceledReason)
		}
		sameTimePtr(t, "completed_at", j.CompletedAt, now)
		requireNilTime(t, "started_at of a job canceled before it ran", j.StartedAt)
		requireAudit(t, b, id, auditWant{"cancel", "alice", "no longer needed", now})

		if out := b.cancel(future, "bob", "", now); out.Status != spine.StatusCanceled {
			t.Fatalf("cancel of a scheduled job: status %q, want canceled", out.Status)
		}
		b.claimNone(now.Add(2*time.Hour), "both jobs were canceled")
		b.requireEmptyQueue("canceled jobs left queue rows")
	})

	t.Run("RunningIsMarkedThenEndsCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		now := b.clock.Advance(time.Second)
		if out := b.cancel(id, "alice", "stop", now); out.Status != spine.StatusRunning {
			t.Fatalf("cancel of a running job: status %q, want running (marked)", out.Status)
		}
		j := b.requireStatus(id, spine.StatusRunning, "marked, its worker has not stopped yet")
		if j.CanceledBy != "alice" || j.CanceledReason != "stop" {
			t.Fatalf("marked job: by %q reason %q, want alice / stop", j.CanceledBy, j.CanceledReason)
		}
		// A second cancel keeps the first mark but is still audited.
		if out := b.cancel(id, "bob", "me too", now); out.Status != spine.StatusRunning {
			t.Fatalf("second cancel of a running job: status %q, want running", out.Status)
		}
		if j := b.get(id); j.CanceledBy != "alice" || j.CanceledReason != "stop" {
			t.Fatalf("second cancel replaced the mark: by %q reason %q, want alice / stop", j.CanceledBy, j.CanceledReason)
		}
		requireAudit(t, b, id, auditWant{"cancel", "alice", "stop", now}, auditWant{"cancel", "bob", "me too", now})

		if got := b.heartbeat(b.clock.Now(), lease(c)); !got[id].CancelRequested {
			t.Fatalf("heartbeat of a marked job: %+v, want CancelRequested", got)
		}
		done := b.clock.Advance(time.Second)
		st, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(c), Result: json.RawMessage(`{"ok":true}`), Now: done})
		if err != nil || st != spine.StatusCanceled {
			t.Fatalf("Complete of a marked job: %q, %v; want canceled", st, err)
		}
		j = b.requireStatus(id, spine.StatusCanceled, "completed after the mark")
		if j.CanceledBy != "alice" || j.CanceledReason != "stop" {
			t.Fatalf("canceled job: by %q reason %q, want alice / stop", j.CanceledBy, j.CanceledReason)
		}
		sameTimePtr(t, "completed_at", j.CompletedAt, done)
		sameTimePtr(t, "started_at kept", j.StartedAt, c.StartedAt)
	})

	t.Run("FailOfMarkedJobDoesNotRetry", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		c := b.claimOne(b.clock.Now())
		b.cancel(id, "alice", "stop", b.clock.Now())
		out, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(c), Error: spine.JobError{Message: "killed"}, Now: b.clock.Advance(time.Second)})
		if err != nil {
			t.Fatalf("Fail of a marked job: %v", err)
		}
		if out.Retried || out.Status != spine.StatusCanceled {
			t.Fatalf("Fail of a marked job with attempts left: %+v, want not retried, status canceled", out)
		}
		b.requireStatus(id, spine.StatusCanceled, "cancel wins over a retry")
		b.claimNone(b.clock.Now().Add(24*time.Hour), "a canceled job never comes back")
	})

	t.Run("ReleaseOfMarkedJobEndsCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		c := b.claimOne(b.clock.Now())
		b.cancel(id, "alice", "stop", b.clock.Now())
		if err := b.store.Release(b.ctx, spine.ReleaseParams{Lease: lease(c), Now: b.clock.Advance(time.Second)}); err != nil {
			t.Fatalf("Release of a marked job: %v", err)
		}
		b.requireStatus(id, spine.StatusCanceled, "released after the mark")
		b.claimNone(b.clock.Now().Add(time.Hour), "a canceled job never comes back")
	})

	t.Run("FinishedConflicts", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(3)
		jobs := b.claim(spine.ClaimParams{Limit: 3})
		now := b.clock.Advance(time.Second)
		b.complete(lease(jobs[0]), now)
		b.fail(lease(jobs[1]), "broken", now)
		b.cancel(jobs[2].ID, "alice", "stop", now)
		b.completeAs(lease(jobs[2]), now, spine.StatusCanceled)
		for _, tc := range []struct {
			id     uuid.UUID
			status spine.Status
		}{{jobs[0].ID, spine.StatusSuccess}, {jobs[1].ID, spine.StatusFailure}, {jobs[2].ID, spine.StatusCanceled}} {
			_, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: tc.id, By: "bob", Now: now})
			requireErrorIs(t, err, spine.ErrConflict, "Cancel of a "+string(tc.status)+" job")
			if !strings.Contains(err.Error(), string(tc.status)) {
				t.Fatalf("Cancel of a %s job: error %q does not say the status", tc.status, err)
			}
			b.requireStatus(tc.id, tc.status, "a refused cancel changes nothing")
		}
		if j := b.get(jobs[2].ID); j.CanceledBy != "alice" {
			t.Fatalf("a refused cancel changed canceled_by to %q", j.CanceledBy)
		}
	})

	t.Run("UnknownOrOtherWorkspace", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		_, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: uuid.Must(uuid.NewV7()), By: "x", Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotFound, "Cancel of an unknown job")
		_, err = b.store.Cancel(b.ctx, spine.CancelParams{Workspace: otherWS, JobID: id, By: "x", Now: b.clock.Now()})
		requireErrorIs(t, err, spine.ErrNotFound, "Cancel from another workspace")
		b.requireStatus(id, spine.StatusQueued, "a cancel from another workspace changes nothing")
		if a := b.audit(id); len(a) != 0 {
			t.Fatalf("a refused cancel wrote audit rows: %+v", a)
		}
	})

	t.Run("EmptyByIsUnknown", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		now := b.clock.Now()
		b.cancel(id, "", "why not", now)
		if j := b.requireStatus(id, spine.StatusCanceled, "canceled"); j.CanceledBy != "unknown" {
			t.Fatalf("cancel without a name: canceled_by %q, want unknown", j.CanceledBy)
		}
		requireAudit(t, b, id, auditWant{"cancel", "unknown", "why not", now})
	})
}

// auditWant is one expected audit row.
type auditWant struct {
	action, by, reason string
	at                 time.Time
}

// audit reads a job's audit trail.
func (b *bundle) audit(id uuid.UUID) []spine.AuditEntry {
	b.t.Helper()
	a, err := b.store.Audit(b.ctx, id)
	if err != nil {
		b.t.Fatalf("Audit(%v): %v", id, err)
	}
	return a
}

// requireAudit requires a job's audit trail to be exactly want, oldest
// first.
func requireAudit(t *testing.T, b *bundle, id uuid.UUID, want ...auditWant) {
	t.Helper()
	got := b.audit(id)
	if len(got) != len(want) {
		t.Fatalf("audit of %v: %d rows %+v, want %d", id, len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.JobID != id || g.Action != w.action || g.By != w.by || g.Reason != w.reason {
			t.Fatalf("audit row %d of %v: %+v, want action %q by %q reason %q", i, id, g, w.action, w.by, w.reason)
		}
		sameTime(t, "audit time", g.At, w.at)
	}
}
