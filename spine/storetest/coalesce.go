package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testCoalesce checks invariant 10: at most one waiting job per
// (workspace, app, action, coalesce key); a new request while one waits
// replaces its input; while one runs, one follow-up may wait.
func testCoalesce(t *testing.T, newStore newStoreFunc) {
	t.Run("LatestInputWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		var first uuid.UUID
		for gen := int64(1); gen <= 3; gen++ {
			res := b.enqueueResult(withKey("k"), withInput(fmt.Sprintf(`{"gen":%d}`, gen)))
			if gen == 1 {
				first = res.ID
			}
			if res.ID != first || res.Generation != gen || res.Coalesced != (gen > 1) {
				t.Fatalf("enqueue %d with one key: %+v, want id %v generation %d coalesced %v", gen, res, first, gen, gen > 1)
			}
		}
		j := b.requireStatus(first, spine.StatusQueued, "coalesced")
		jsonEqual(t, "coalesced input", j.Input, json.RawMessage(`{"gen":3}`))
		if j.Generation != 3 || j.CoalesceKey != "k" {
			t.Fatalf("coalesced job: generation %d key %q, want 3 and k", j.Generation, j.CoalesceKey)
		}
		c := b.claim(spine.ClaimParams{Limit: 10})
		if len(c) != 1 || c[0].ID != first || c[0].Generation != 3 {
			t.Fatalf("claim after coalescing: %+v, want the one job at generation 3", c)
		}
		jsonEqual(t, "claimed input", c[0].Input, json.RawMessage(`{"gen":3}`))
	})

	t.Run("OneFollowUpWhileRunning", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		first := b.enqueueResult(withKey("k"), withInput(`{"run":1}`)).ID
		c := b.claimOne(b.clock.Now())

		follow := b.enqueueResult(withKey("k"), withInput(`{"run":2}`))
		if follow.ID == first || follow.Coalesced || follow.Generation != 1 {
			t.Fatalf("enqueue while the keyed job runs: %+v, want a new job at generation 1", follow)
		}
		again := b.enqueueResult(withKey("k"), withInput(`{"run":3}`))
		if again.ID != follow.ID || !again.Coalesced || again.Generation != 2 {
			t.Fatalf("second enqueue while the keyed job runs: %+v, want coalesced into %v at generation 2", again, follow.ID)
		}
		jsonEqual(t, "the running job's input is untouched", b.get(first).Input, json.RawMessage(`{"run":1}`))
		jsonEqual(t, "the follow-up's input", b.get(follow.ID).Input, json.RawMessage(`{"run":3}`))
		b.requireStatus(first, spine.StatusRunning, "still running")

		// Once the follow-up runs too, the next request starts a third job.
		b.complete(lease(c), b.clock.Now())
		c2 := b.claimOne(b.clock.Now())
		if c2.ID != follow.ID {
			t.Fatalf("claimed %v, want the follow-up %v", c2.ID, follow.ID)
		}
		third := b.enqueueResult(withKey("k"))
		if third.ID == first || third.ID == follow.ID || third.Coalesced {
			t.Fatalf("enqueue after the follow-up was claimed: %+v, want a new job", third)
		}
	})

	t.Run("DistinctScopesDoNotCoalesce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ids := []uuid.UUID{
			b.enqueueResult(withKey("k")).ID,
			b.enqueueResult(withKey("k2")).ID,
			b.enqueueResult(withKey("k"), withAction("other-action")).ID,
			b.enqueueResult(withKey("k"), withApp("other-app")).ID,
			b.enqueueResult(withKey("k"), withWorkspace(otherWS)).ID,
			b.enqueueResult().ID,
			b.enqueueResult().ID,
		}
		requireDistinct(t, ids)
		if j := b.get(ids[0]); j.Generation != 1 {
			t.Fatalf("keyed job generation %d after unrelated enqueues, want 1", j.Generation)
		}
	})

	t.Run("CancelFreesTheKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		first := b.enqueueResult(withKey("k")).ID
		b.cancel(first, "alice", "", b.clock.Now())
		next := b.enqueueResult(withKey("k"))
		if next.ID == first || next.Coalesced {
			t.Fatalf("enqueue after the keyed job was canceled: %+v, want a new job", next)
		}
		b.requireStatus(first, spine.StatusCanceled, "a canceled job stays canceled")
	})

	t.Run("WithinOneBatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		res, err := b.store.EnqueueBatch(b.ctx, []spine.EnqueueParams{
			b.params(withKey("k"), withInput(`{"i":1}`)),
			b.params(withKey("k"), withInput(`{"i":2}`)),
		})
		if err != nil {
			t.Fatalf("EnqueueBatch: %v", err)
		}
		if len(res) != 2 || res[1].ID != res[0].ID || !res[1].Coalesced || res[1].Generation != 2 {
			t.Fatalf("batch of two requests with one key: %+v, want the second coalesced into the first", res)
		}
		jsonEqual(t, "batch-coalesced input", b.get(res[0].ID).Input, json.RawMessage(`{"i":2}`))
	})

	t.Run("ConcurrentEnqueuesOneRow", func(t *testing.T) {
		t.Parallel()
		testConcurrentCoalesce(t, newStore)
	})
}

// testConcurrentCoalesce races 8 goroutines × 20 enqueues of one key: one
// waiting row must hold them all, each request counted once.
func testConcurrentCoalesce(t *testing.T, newStore newStoreFunc) {
	const goroutines, each = 8, 20
	b := setup(t, newStore)
	now := b.clock.Now()
	var (
		mu   sync.Mutex
		ids  = map[uuid.UUID]int{}
		gens = map[int64]int{}
		wg   sync.WaitGroup
		errs = make(chan error, goroutines)
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := b.params(withKey("k"), withNow(now), withInput(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)))
				res, err := b.store.Enqueue(b.ctx, p)
				if err != nil {
					errs <- fmt.Errorf("goroutine %d enqueue %d: %w", g, i, err)
					return
				}
				mu.Lock()
				ids[res.ID]++
				gens[res.Generation]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(ids) != 1 {
		t.Fatalf("%d concurrent enqueues of one key made %d jobs, want 1", goroutines*each, len(ids))
	}
	for gen := int64(1); gen <= goroutines*each; gen++ {
		if gens[gen] != 1 {
			t.Fatalf("generation %d returned %d times, want once (every request counted once)", gen, gens[gen])
		}
	}
	var id uuid.UUID
	for only := range ids {
		id = only
	}
	if j := b.get(id); j.Generation != goroutines*each {
		t.Fatalf("coalesced job generation %d, want %d", j.Generation, goroutines*each)
	}
	if c := b.claim(spine.ClaimParams{Limit: 1000, Now: now.Add(time.Second)}); len(c) != 1 {
		t.Fatalf("%d waiting jobs after concurrent coalescing, want 1", len(c))
	}
}

// enqueueResult enqueues one job and returns the whole result.
func (b *bundle) enqueueResult(opts ...jobOption) spine.EnqueueResult {
	b.t.Helper()
	res, err := b.store.Enqueue(b.ctx, b.params(opts...))
	if err != nil {
		b.t.Fatalf("Enqueue: %v", err)
	}
	return res
}
