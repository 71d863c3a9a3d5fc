package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
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

	t.Run("OtherPinDoesNotFold", func(t *testing.T) {
		t.Parallel()
		testCoalesceKeepsPin(t, newStore)
	})

	t.Run("SupersededAndGenerationKept", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		first := b.enqueueResult(withKey("k"), withInput(`{"n":1}`))
		b.enqueueResult(withKey("k"), withInput(`{"n":2}`))
		c := b.claimOne(b.clock.Now())
		if c.Generation != 2 {
			t.Fatalf("claimed generation %d, want 2", c.Generation)
		}
		if j := b.get(first.ID); j.SupersededBy != uuid.Nil {
			t.Fatalf("running job superseded by %v before any newer request", j.SupersededBy)
		}
		b.clock.Advance(time.Millisecond)
		second := b.enqueueResult(withKey("k"), withInput(`{"n":3}`), withNow(b.clock.Now()))
		b.clock.Advance(time.Millisecond)
		other := b.enqueueResult(withKey("other"), withNow(b.clock.Now()))
		if j := b.get(first.ID); j.SupersededBy != second.ID {
			t.Fatalf("running job superseded by %v, want the newer request %v", j.SupersededBy, second.ID)
		}
		b.complete(lease(c), b.clock.Now())
		j := b.requireStatus(first.ID, spine.StatusSuccess, "completed")
		if j.Generation != 2 || j.SupersededBy != second.ID {
			t.Fatalf("finished job: generation %d superseded by %v, want 2 and %v", j.Generation, j.SupersededBy, second.ID)
		}
		for _, id := range []uuid.UUID{second.ID, other.ID} {
			if j := b.get(id); j.SupersededBy != uuid.Nil {
				t.Fatalf("job %v superseded by %v, want none (newest of its key)", id, j.SupersededBy)
			}
		}
		if j := b.get(b.enqueue()); j.SupersededBy != uuid.Nil {
			t.Fatalf("job without a key superseded by %v", j.SupersededBy)
		}
	})
}

// testCoalesceKeepsPin checks that a request is folded only into a
// waiting job pinned as it is: when any part of the pin moved (a
// redeploy), the waiting job keeps its pin and input and runs, and the
// request is a new job that takes the key over.
func testCoalesceKeepsPin(t *testing.T, newStore newStoreFunc) {
	changes := map[string]func(*spine.Pin){
		"commit":        func(p *spine.Pin) { p.CommitSHA = "fedcba9876543210fedcba9876543210fedcba98" },
		"source":        func(p *spine.Pin) { p.GitSourceID = "src-other" },
		"input schema":  func(p *spine.Pin) { p.InputSchema = json.RawMessage(`{"type":"object","required":["name"]}`) },
		"no out schema": func(p *spine.Pin) { p.OutputSchema = nil },
		"entrypoint":    func(p *spine.Pin) { p.Entrypoint = "src/other.ts" },
		"runtime":       func(p *spine.Pin) { p.Runtime = "python" },
		"tag":           func(p *spine.Pin) { p.Tag = "gpu" },
		"timeout":       func(p *spine.Pin) { p.Timeout = time.Minute },
		"retry":         func(p *spine.Pin) { p.Retry = retry3 },
		"limits":        func(p *spine.Pin) { p.Limits.CPU = 2 },
		"no limits":     func(p *spine.Pin) { p.Limits = spine.Limits{} },
		"env value":     func(p *spine.Pin) { p.Env = []spine.EnvVar{p.Env[0], {Name: "TOKEN", Value: "api_token"}} },
		"env added":     func(p *spine.Pin) { p.Env = append([]spine.EnvVar{{Name: "A", Value: "1"}}, p.Env...) },
		"no env":        func(p *spine.Pin) { p.Env = nil },
		"warm":          func(p *spine.Pin) { p.Warm = &spine.Warm{MaxJobs: 50, Idle: time.Minute} },
		"cold":          func(p *spine.Pin) { p.Warm = nil },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, newStore)
			oldPin, newPin := fullPin(), fullPin()
			change(&newPin)
			old := b.enqueueResult(withKey("k"), withInput(`{"v":"A1"}`))
			b.enqueueResult(withKey("k"), withInput(`{"v":"A2"}`))
			b.clock.Advance(time.Millisecond)
			moved := b.enqueueResult(withKey("k"), withPin(newPin), withInput(`{"v":"B1"}`), withNow(b.clock.Now()))
			if moved.ID == old.ID || moved.Coalesced || moved.Generation != 1 {
				t.Fatalf("enqueue with a new pin: %+v, want a new job beside %v at generation 1", moved, old.ID)
			}
			j := b.requireStatus(old.ID, spine.StatusQueued, "the old job still waits")
			jsonEqual(t, "the old job's input", j.Input, json.RawMessage(`{"v":"A2"}`))
			if !reflect.DeepEqual(normalPin(j.Pin), normalPin(oldPin)) || j.Generation != 2 {
				t.Fatalf("old job: pin %+v generation %d, want its own pin %+v at generation 2", j.Pin, j.Generation, oldPin)
			}
			if j.SupersededBy != moved.ID {
				t.Fatalf("old job superseded by %v, want %v", j.SupersededBy, moved.ID)
			}
			again := b.enqueueResult(withKey("k"), withPin(newPin), withInput(`{"v":"B2"}`), withNow(b.clock.Now()))
			if again.ID != moved.ID || !again.Coalesced || again.Generation != 2 {
				t.Fatalf("second enqueue with the new pin: %+v, want folded into %v at generation 2", again, moved.ID)
			}
			jsonEqual(t, "the old job's input after the new pin's fold", b.get(old.ID).Input, json.RawMessage(`{"v":"A2"}`))
			nj := b.get(moved.ID)
			jsonEqual(t, "the new job's input", nj.Input, json.RawMessage(`{"v":"B2"}`))
			if !reflect.DeepEqual(normalPin(nj.Pin), normalPin(newPin)) {
				t.Fatalf("new job pin %+v, want %+v", nj.Pin, newPin)
			}
			// Rolling back to the old pin does not revive the old job: the
			// key's holder is the new one, so the request is a third job.
			b.clock.Advance(time.Millisecond)
			back := b.enqueueResult(withKey("k"), withInput(`{"v":"A3"}`), withNow(b.clock.Now()))
			if back.ID == old.ID || back.ID == moved.ID || back.Coalesced {
				t.Fatalf("enqueue with the old pin again: %+v, want a third job", back)
			}
			jsonEqual(t, "the old job's input after the roll back", b.get(old.ID).Input, json.RawMessage(`{"v":"A2"}`))
			tags := []string{spine.DefaultTag}
			if newPin.Tag != spine.DefaultTag {
				tags = append(tags, newPin.Tag)
			}
			claimed := map[uuid.UUID]string{}
			for _, c := range b.claim(spine.ClaimParams{Tags: tags, Limit: 10}) {
				claimed[c.ID] = string(c.Input)
			}
			if len(claimed) != 3 {
				t.Fatalf("claimed %d jobs (%v), want all three: each pin runs", len(claimed), claimed)
			}
		})
	}
}

// normalPin drops the JSON formatting a store may change, so pins compare
// by content.
func normalPin(p spine.Pin) spine.Pin {
	for _, s := range []*json.RawMessage{&p.InputSchema, &p.OutputSchema} {
		if len(*s) == 0 {
			*s = nil
			continue
		}
		var v any
		if err := json.Unmarshal(*s, &v); err == nil {
			*s, _ = json.Marshal(v)
		}
	}
	return p
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
