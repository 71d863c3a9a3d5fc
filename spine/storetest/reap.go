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

// testReap checks invariant 4: jobs of dead workers are requeued up to the
// restart limit, then failed; canceled ones end canceled; live, waiting and
// finished jobs are never touched, and no job is handled twice.
func testReap(t *testing.T, newStore newStoreFunc) {
	t.Run("RequeuesZombie", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		old := b.claim(spine.ClaimParams{Worker: "worker-dead"})[0]
		now := b.clock.Advance(zombieTimeout + time.Millisecond)
		res := b.reap(now)
		requireReaped(t, res, []uuid.UUID{id}, nil, nil)

		j := b.requireStatus(id, spine.StatusQueued, "requeued by the reaper")
		if j.Restarts != 1 || j.Attempt != 1 || j.Worker != "" {
			t.Fatalf("requeued job: restarts %d attempt %d worker %q; want 1, 1 (not charged), none", j.Restarts, j.Attempt, j.Worker)
		}
		requireNilTime(t, "started_at of a requeued job", j.StartedAt)
		requireNilTime(t, "ping of a requeued job", j.Ping)
		sameTime(t, "scheduled_for of a requeued job", j.ScheduledFor, now)
		requireErrorMessage(t, "reaper's last_error", j.LastError, "worker-dead")
		if j.LastError.Kind != "zombie" {
			t.Fatalf("reaper's last_error kind %q, want zombie", j.LastError.Kind)
		}

		c := b.claim(spine.ClaimParams{Worker: "worker-live", Now: now})
		if len(c) != 1 || c[0].ID != id || c[0].Restarts != 1 || c[0].Attempt != 1 || c[0].ClaimToken == old.ClaimToken {
			t.Fatalf("re-claim of a requeued job: %+v; want it with restarts 1, attempt 1, a new token", c)
		}
		_, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(old), Result: json.RawMessage(`1`), Now: now})
		requireErrorIs(t, err, spine.ErrNotOwner, "Complete by the reaped worker")
		b.complete(lease(c[0]), b.clock.Advance(time.Second))
	})

	t.Run("FreshPingUntouched", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		claimedAt := b.clock.Now()
		jobs := b.claim(spine.ClaimParams{Limit: 2, Now: claimedAt})
		beating, boundary := jobs[0], jobs[1]
		b.heartbeat(claimedAt.Add(50*time.Second), lease(beating))
		// boundary's ping is exactly zombieTimeout old: not yet older.
		now := claimedAt.Add(zombieTimeout)
		if res := b.reap(now); len(res.Requeued)+len(res.Failed)+len(res.Canceled) != 0 {
			t.Fatalf("reap at exactly the timeout handled %+v, want nothing", res)
		}
		now = now.Add(time.Millisecond)
		requireReaped(t, b.reap(now), []uuid.UUID{boundary.ID}, nil, nil)
		j := b.requireStatus(beating.ID, spine.StatusRunning, "a job with a fresh ping")
		if j.Worker != defaultWorker || j.Restarts != 0 {
			t.Fatalf("reaper touched a live job: worker %q restarts %d", j.Worker, j.Restarts)
		}
		b.complete(lease(beating), now)
	})

	t.Run("RestartLimitEndsInFailure", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		for restart := 1; restart <= restartLimit; restart++ {
			c := b.claimOne(b.clock.Now())
			if c.Restarts != restart-1 {
				t.Fatalf("claim %d: restarts %d, want %d", restart, c.Restarts, restart-1)
			}
			requireReaped(t, b.reap(b.clock.Advance(2*zombieTimeout)), []uuid.UUID{id}, nil, nil)
		}
		b.claim(spine.ClaimParams{Worker: "worker-oom"})
		now := b.clock.Advance(2 * zombieTimeout)
		requireReaped(t, b.reap(now), nil, []uuid.UUID{id}, nil)
		j := b.requireStatus(id, spine.StatusFailure, "past the restart limit")
		requireErrorMessage(t, "restart-limit failure", j.Error, "restart limit", fmt.Sprint(restartLimit), "worker-oom")
		if j.Error.Kind != "restart_limit" || j.Attempt != 1 {
			t.Fatalf("restart-limit failure: kind %q attempt %d, want restart_limit and 1 (retries not used)", j.Error.Kind, j.Attempt)
		}
		sameTimePtr(t, "completed_at", j.CompletedAt, now)
		b.claimNone(now.Add(time.Hour), "a job past its restart limit is finished")
	})

	t.Run("ZeroRestartLimitFailsAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		b.claimOne(b.clock.Now())
		res := b.reapWith(spine.ReapParams{Now: b.clock.Advance(2 * zombieTimeout), ZombieTimeout: zombieTimeout, RestartLimit: 0})
		requireReaped(t, res, nil, []uuid.UUID{id}, nil)
		b.requireStatus(id, spine.StatusFailure, "restart limit 0")
	})

	t.Run("CanceledZombieEndsCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue(withRetry(retry3))
		c := b.claimOne(b.clock.Now())
		b.cancel(id, "alice", "stop", b.clock.Advance(time.Second))
		now := b.clock.Advance(2 * zombieTimeout)
		requireReaped(t, b.reap(now), nil, nil, []uuid.UUID{id})
		j := b.requireStatus(id, spine.StatusCanceled, "a marked zombie")
		if j.CanceledBy != "alice" || j.CanceledReason != "stop" {
			t.Fatalf("reaped canceled job: by %q reason %q, want alice / stop", j.CanceledBy, j.CanceledReason)
		}
		sameTimePtr(t, "started_at kept", j.StartedAt, c.StartedAt)
		b.claimNone(now.Add(time.Hour), "a canceled zombie is never requeued")

		// Even with no restarts left, a marked zombie ends canceled.
		id2 := b.enqueue()
		b.claimOne(now)
		b.cancel(id2, "bob", "", now)
		res := b.reapWith(spine.ReapParams{Now: now.Add(2 * zombieTimeout), ZombieTimeout: zombieTimeout, RestartLimit: 0})
		requireReaped(t, res, nil, nil, []uuid.UUID{id2})
		b.requireStatus(id2, spine.StatusCanceled, "a marked zombie past its restart limit")
	})

	t.Run("LeavesWaitingAndFinished", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		start := b.clock.Now()
		b.enqueueN(3)
		jobs := b.claim(spine.ClaimParams{Limit: 3})
		b.complete(lease(jobs[0]), start)
		b.fail(lease(jobs[1]), "broken", start)
		b.cancel(jobs[2].ID, "alice", "", start)
		b.completeAs(lease(jobs[2]), start, spine.StatusCanceled)
		waiting := b.enqueue(withScheduledFor(start.Add(-time.Hour)))
		res := b.reap(start.Add(24 * time.Hour))
		requireReaped(t, res, nil, nil, nil)
		b.requireStatus(jobs[0].ID, spine.StatusSuccess, "reaper left it")
		b.requireStatus(jobs[1].ID, spine.StatusFailure, "reaper left it")
		b.requireStatus(jobs[2].ID, spine.StatusCanceled, "reaper left it")
		if j := b.requireStatus(waiting, spine.StatusQueued, "reaper left it"); j.Restarts != 0 {
			t.Fatalf("reaper charged a restart to a waiting job: %d", j.Restarts)
		}
	})

	t.Run("RespectsLimit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(5)
		b.claim(spine.ClaimParams{Limit: 5})
		p := spine.ReapParams{Now: b.clock.Advance(2 * zombieTimeout), ZombieTimeout: zombieTimeout, RestartLimit: restartLimit, Limit: 2}
		for i, want := range []int{2, 2, 1, 0} {
			if got := len(b.reapWith(p).Requeued); got != want {
				t.Fatalf("reap pass %d with limit 2 over 5 zombies: %d requeued, want %d", i+1, got, want)
			}
		}
		// Limit 0 means the default bound (1000), not "nothing".
		b.claim(spine.ClaimParams{Limit: 5, Now: p.Now})
		p.Now, p.Limit = p.Now.Add(2*zombieTimeout), 0
		if got := len(b.reapWith(p).Requeued); got != 5 {
			t.Fatalf("reap with limit 0 over 5 zombies: %d requeued, want all 5", got)
		}
	})

	t.Run("ConcurrentReapersEachJobOnce", func(t *testing.T) {
		t.Parallel()
		testConcurrentReapers(t, newStore)
	})
}

// testConcurrentReapers lets 8 reapers race over 200 zombies: each zombie
// must be handled by exactly one of them.
func testConcurrentReapers(t *testing.T, newStore newStoreFunc) {
	const zombies, reapers = 200, 8
	b := setup(t, newStore)
	ids := b.enqueueN(zombies)
	claimed := 0
	for claimed < zombies {
		claimed += len(b.claim(spine.ClaimParams{Limit: 50}))
	}
	now := b.clock.Advance(2 * zombieTimeout)

	var (
		mu   sync.Mutex
		seen = map[uuid.UUID]int{}
		dups []uuid.UUID
		wg   sync.WaitGroup
		errs = make(chan error, reapers)
	)
	for r := range reapers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res, err := b.store.Reap(b.ctx, spine.ReapParams{Now: now, ZombieTimeout: zombieTimeout, RestartLimit: restartLimit, Limit: 7})
				if err != nil {
					errs <- fmt.Errorf("reaper %d: %w", r, err)
					return
				}
				handled := append(append(append([]uuid.UUID{}, res.Requeued...), res.Failed...), res.Canceled...)
				if len(handled) == 0 {
					return
				}
				mu.Lock()
				for _, id := range handled {
					if seen[id]++; seen[id] == 2 {
						dups = append(dups, id)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(dups) > 0 {
		t.Fatalf("%d zombies handled by two reapers, e.g. %v", len(dups), dups[0])
	}
	// A reaper may give up early while another holds rows; a last pass
	// must find nothing left.
	requireReaped(t, b.reap(now), nil, nil, nil)
	if len(seen) != zombies {
		t.Fatalf("reapers handled %d zombies, want %d", len(seen), zombies)
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Fatalf("zombie %v handled %d times, want once", id, seen[id])
		}
	}
	h := b.healthByTag()[testWorkspace+"/"+spine.DefaultTag]
	if h.Running != 0 || h.MaxRestarts != 1 {
		t.Fatalf("after reaping: %d running, max restarts %d; want 0 and 1", h.Running, h.MaxRestarts)
	}
}

// requireReaped requires a reaper pass to have handled exactly these ids.
func requireReaped(t *testing.T, res spine.ReapResult, requeued, failed, canceled []uuid.UUID) {
	t.Helper()
	requireIDs(t, "reap: requeued", res.Requeued, requeued)
	requireIDs(t, "reap: failed", res.Failed, failed)
	requireIDs(t, "reap: canceled", res.Canceled, canceled)
}
