package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testSweep checks invariant 8: retention deletes finished jobs older than
// the cut-off, with their logs and audit rows, in bounded batches, and
// never touches a waiting or running job.
func testSweep(t *testing.T, newStore newStoreFunc) {
	t.Run("OnlyOldFinishedJobs", func(t *testing.T) {
		t.Parallel()
		testSweepMixed(t, newStore)
	})

	t.Run("Batches", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ old, batch int }{{5, 2}, {5, 1}, {5, 5}, {3, 0}} {
			t.Run(fmt.Sprintf("old%d_batch%d", tc.old, tc.batch), func(t *testing.T) {
				t.Parallel()
				b := setup(t, newStore)
				base := b.clock.Now()
				ids := b.finishN(tc.old, base)
				kept := b.finishN(1, base.Add(2*time.Hour))
				p := spine.SweepParams{Before: base.Add(time.Hour), BatchSize: tc.batch}
				n, err := b.store.Sweep(b.ctx, p)
				if err != nil {
					t.Fatalf("Sweep(batch %d): %v", tc.batch, err)
				}
				if n != tc.old {
					t.Fatalf("Sweep(batch %d) over %d old jobs returned %d", tc.batch, tc.old, n)
				}
				for _, id := range ids {
					b.requireGone(id, "swept")
				}
				b.requireStatus(kept[0], spine.StatusSuccess, "newer than the cut-off")
				if n, err := b.store.Sweep(b.ctx, p); err != nil || n != 0 {
					t.Fatalf("second Sweep: %d, %v; want 0, nil", n, err)
				}
			})
		}
	})
}

// testSweepMixed sweeps a store holding old and new finished jobs, an old
// waiting job, an old running job and a job finished exactly at the
// cut-off.
func testSweepMixed(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	base := b.clock.Now()
	cutoff := base.Add(10 * time.Hour)

	oldOK := b.enqueue()
	c := b.claimOne(base)
	b.appendLog(lease(c), "old output", base)
	b.complete(lease(c), base.Add(time.Minute))
	oldFailed := b.enqueue()
	b.fail(lease(b.claimOne(base)), "broken", base.Add(time.Minute))
	oldCanceled := b.enqueue()
	b.cancel(oldCanceled, "alice", "", base.Add(time.Minute))

	running := b.enqueue()
	live := b.claimOne(base)
	b.appendLog(lease(live), "still running", base)
	waiting := b.enqueue(withTag("idle"), withScheduledFor(base))

	atCutoff := b.finishN(1, cutoff)[0]
	newer := b.finishN(1, cutoff.Add(time.Hour))[0]

	n, err := b.store.Sweep(b.ctx, spine.SweepParams{Before: cutoff, BatchSize: 2})
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if n != 3 {
		t.Fatalf("Sweep deleted %d jobs, want the 3 finished before the cut-off", n)
	}
	for _, id := range []uuid.UUID{oldOK, oldFailed, oldCanceled} {
		b.requireGone(id, "finished before the cut-off")
		if logs := b.logs(id, 0); len(logs) != 0 {
			t.Fatalf("swept job %v kept %d log chunks", id, len(logs))
		}
		if a := b.audit(id); len(a) != 0 {
			t.Fatalf("swept job %v kept %d audit rows", id, len(a))
		}
	}
	b.requireStatus(atCutoff, spine.StatusSuccess, "completed exactly at the cut-off (not before it)")
	b.requireStatus(newer, spine.StatusSuccess, "completed after the cut-off")
	b.requireStatus(waiting, spine.StatusQueued, "an old waiting job is never swept")
	b.requireStatus(running, spine.StatusRunning, "an old running job is never swept")
	if logs := b.logs(running, 0); len(logs) != 1 {
		t.Fatalf("running job has %d log chunks after the sweep, want 1", len(logs))
	}
	if got := b.heartbeat(cutoff, lease(live)); len(got) != 1 {
		t.Fatal("the sweep took the running job's lease")
	}
	b.complete(lease(live), cutoff)
}

// finishN enqueues, claims and completes n jobs on tag "done", completing
// them at completedAt, and returns their ids.
func (b *bundle) finishN(n int, completedAt time.Time) []uuid.UUID {
	b.t.Helper()
	b.enqueueN(n, withTag("done"), withNow(completedAt.Add(-time.Minute)))
	jobs := b.claim(spine.ClaimParams{Tags: []string{"done"}, Limit: n, Now: completedAt.Add(-time.Second)})
	if len(jobs) != n {
		b.t.Fatalf("claimed %d of %d jobs to finish", len(jobs), n)
	}
	ids := make([]uuid.UUID, n)
	for i, j := range jobs {
		b.complete(lease(j), completedAt)
		ids[i] = j.ID
	}
	return ids
}
