package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// requeuer is the single-job requeue (DESIGN §4) every store offers next
// to spine.Store; the suite checks its refusals.
type requeuer interface {
	Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error)
}

// testMessages pins the exact texts the API answers with (409 bodies) and
// the reaper stores, so that they are the same words on every database:
// the rules and messages are spine's (spine.CancelRule, ReopenRule,
// RequeueRule, ReapRule), never a store's own copy.
func testMessages(t *testing.T, newStore newStoreFunc) {
	t.Run("CancelOfFinished", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		for status, id := range b.finishedJobs() {
			_, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: id, By: "bob", Now: b.clock.Now()})
			requireExactError(t, err, spine.ErrConflict,
				"cancel job "+id.String()+": job state conflict: cannot cancel a job that already finished with status "+string(status))
		}
	})

	t.Run("ReopenRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		jobs := b.finishedJobs()
		b.enqueue()
		running := b.claimOne(b.clock.Now()).ID
		queued := b.enqueue()
		for _, c := range []struct {
			id    uuid.UUID
			force bool
			text  string
		}{
			{queued, true, "cannot reopen a job that is queued"},
			{running, true, "cannot reopen a job that is running"},
			{jobs[spine.StatusSuccess], true, "cannot reopen a job that finished with status success"},
			{jobs[spine.StatusCanceled], false, "the job was canceled; reopening it needs force"},
		} {
			err := b.store.Reopen(b.ctx, spine.ReopenParams{Workspace: testWorkspace, JobID: c.id, By: "operator", Force: c.force, Now: b.clock.Now()})
			requireExactError(t, err, spine.ErrConflict, "reopen job "+c.id.String()+": job state conflict: "+c.text)
		}
	})

	t.Run("RequeueRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r, ok := b.store.(requeuer)
		if !ok {
			t.Fatalf("%T has no Requeue(ctx, workspace, id, actor)", b.store)
		}
		jobs := b.finishedJobs()
		b.enqueue()
		running := b.claimOne(b.clock.Now()).ID
		for _, c := range []struct {
			id   uuid.UUID
			text string
		}{
			{running, "cannot requeue a running job; only a waiting job can be requeued"},
			{jobs[spine.StatusSuccess], "cannot requeue a job that already finished with status success"},
			{jobs[spine.StatusCanceled], "cannot requeue a job that already finished with status canceled"},
		} {
			_, err := r.Requeue(b.ctx, testWorkspace, c.id, "operator")
			requireExactError(t, err, spine.ErrConflict, "requeue job "+c.id.String()+": job state conflict: "+c.text)
		}
	})

	t.Run("ReaperTexts", func(t *testing.T) {
		t.Parallel()
		testReaperTexts(t, newStore)
	})
}

// testReaperTexts reaps one job through the restart limit and requires the
// exact last_error of each requeue and the error of the final failure.
func testReaperTexts(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	id := b.enqueue()
	for restart := 1; restart <= restartLimit; restart++ {
		b.claim(spine.ClaimParams{Worker: "worker-dead"})
		requireReaped(t, b.reap(b.clock.Advance(2*zombieTimeout)), []uuid.UUID{id}, nil, nil)
		j := b.requireStatus(id, spine.StatusQueued, "requeued by the reaper")
		requireJobError(t, "last_error after restart", j.LastError, spine.JobError{
			Message: "worker worker-dead stopped heartbeating; requeued (restart " + strconv.Itoa(restart) + " of 3)",
			Kind:    "zombie",
		})
	}
	c := b.claimOne(b.clock.Now())
	// A last ping with a fraction that ends in a zero shows the format:
	// RFC 3339 in UTC, trailing zeros of the fraction dropped.
	now := b.clock.Now()
	ping := b.clock.Advance(now.Truncate(time.Second).Add(time.Second + 120*time.Millisecond).Sub(now))
	b.heartbeat(ping, lease(c))
	requireReaped(t, b.reap(b.clock.Advance(2*zombieTimeout)), nil, []uuid.UUID{id}, nil)
	j := b.requireStatus(id, spine.StatusFailure, "past the restart limit")
	requireJobError(t, "error at the restart limit", j.Error, spine.JobError{
		Message: "restart limit 3 reached: worker worker-1 stopped heartbeating (last ping " +
			ping.UTC().Format("2006-01-02T15:04:05") + ".12Z)",
		Kind: "restart_limit",
	})
}

// finishedJobs makes one success, one failure and one canceled job and
// returns their ids by status.
func (b *bundle) finishedJobs() map[spine.Status]uuid.UUID {
	b.t.Helper()
	b.enqueueN(3)
	jobs := b.claim(spine.ClaimParams{Limit: 3})
	if len(jobs) != 3 {
		b.t.Fatalf("claimed %d jobs, want 3", len(jobs))
	}
	now := b.clock.Advance(time.Second)
	b.complete(lease(jobs[0]), now)
	b.fail(lease(jobs[1]), "broken", now)
	b.cancel(jobs[2].ID, "alice", "stop", now)
	b.completeAs(lease(jobs[2]), now, spine.StatusCanceled)
	return map[spine.Status]uuid.UUID{
		spine.StatusSuccess: jobs[0].ID, spine.StatusFailure: jobs[1].ID, spine.StatusCanceled: jobs[2].ID,
	}
}

// requireExactError requires err to wrap target and to read exactly text:
// the API answers it as is.
func requireExactError(t *testing.T, err, target error, text string) {
	t.Helper()
	requireErrorIs(t, err, target, text)
	if err.Error() != text {
		t.Fatalf("error text:\n got %q\nwant %q", err, text)
	}
}

// requireJobError requires a stored job error to be exactly want.
func requireJobError(t *testing.T, what string, got *spine.JobError, want spine.JobError) {
	t.Helper()
	if got == nil || *got != want {
		t.Fatalf("%s: %+v, want %+v", what, got, want)
	}
}
