package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testClaim checks invariant 2: one atomic claim hands each waiting job to
// exactly one worker, in priority order, never more than asked, with its
// first ping written.
func testClaim(t *testing.T, newStore newStoreFunc) {
	t.Run("NeverMoreThanLimit", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ jobs, limit, want int }{
			{50, 7, 7}, {50, 1, 1}, {50, 49, 49}, {50, 50, 50}, {50, 64, 50}, {5, 16, 5}, {0, 3, 0},
		} {
			t.Run(fmt.Sprintf("jobs%d_limit%d", tc.jobs, tc.limit), func(t *testing.T) {
				t.Parallel()
				b := setup(t, newStore)
				if tc.jobs > 0 {
					b.enqueueN(tc.jobs)
				}
				got := b.claim(spine.ClaimParams{Limit: tc.limit})
				if len(got) != tc.want {
					t.Fatalf("%d waiting, Claim(limit %d): got %d jobs, want %d", tc.jobs, tc.limit, len(got), tc.want)
				}
				rest := b.claim(spine.ClaimParams{Limit: 100})
				if len(got)+len(rest) != tc.jobs {
					t.Fatalf("claimed %d then %d, want %d in all", len(got), len(rest), tc.jobs)
				}
				requireDistinct(t, append(claimedIDs(got), claimedIDs(rest)...))
			})
		}
	})

	t.Run("InvalidParams", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueue()
		for _, p := range []spine.ClaimParams{
			{Worker: defaultWorker, Tags: []string{spine.DefaultTag}, Limit: 0},
			{Worker: defaultWorker, Tags: []string{spine.DefaultTag}, Limit: -1},
			{Worker: defaultWorker, Tags: nil, Limit: 5},
			{Worker: defaultWorker, Tags: []string{}, Limit: 5},
		} {
			p.Now = b.clock.Now()
			_, err := b.store.Claim(b.ctx, p)
			requireErrorIs(t, err, spine.ErrInvalid, fmt.Sprintf("Claim(tags %v, limit %d)", p.Tags, p.Limit))
		}
		b.requireStatus(b.claimOne(b.clock.Now()).ID, spine.StatusRunning, "refused claims took nothing")
	})

	t.Run("PriorityThenScheduledFor", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		base := b.clock.Now()
		// Enqueued in an order unlike the claim order.
		low := b.enqueue(withPriority(0), withScheduledFor(base.Add(-3*time.Second)))
		highLate := b.enqueue(withPriority(10), withScheduledFor(base.Add(-1*time.Second)))
		mid := b.enqueue(withPriority(5), withScheduledFor(base.Add(-5*time.Second)))
		highEarly := b.enqueue(withPriority(10), withScheduledFor(base.Add(-2*time.Second)))
		negative := b.enqueue(withPriority(-3), withScheduledFor(base.Add(-9*time.Second)))
		lowEarly := b.enqueue(withPriority(0), withScheduledFor(base.Add(-4*time.Second)))
		want := []uuid.UUID{highEarly, highLate, mid, lowEarly, low, negative}

		top3 := b.claim(spine.ClaimParams{Limit: 3, Worker: "batch"})
		requireIDs(t, "Claim(limit 3) must take the three best", claimedIDs(top3), want[:3])
		for i, id := range want[3:] {
			got := b.claimOne(base)
			if got.ID != id {
				t.Fatalf("claim %d took %v, want %v (priority desc, then scheduled_for)", i+4, got.ID, id)
			}
		}
	})

	t.Run("TieBrokenByJobID", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		at := b.clock.Now()
		first := uuid.MustParse("00000000-0000-7000-8000-000000000001")
		second := uuid.MustParse("00000000-0000-7000-8000-000000000002")
		b.enqueue(withID(second), withScheduledFor(at))
		b.enqueue(withID(first), withScheduledFor(at))
		if got := b.claimOne(at); got.ID != first {
			t.Fatalf("same priority and scheduled_for: claimed %v first, want the smaller id %v", got.ID, first)
		}
	})

	t.Run("FutureNotClaimedUntilDue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		now := b.clock.Now()
		due := now.Add(10 * time.Second)
		id := b.enqueue(withScheduledFor(due), withPriority(100))
		b.claimNone(now, "scheduled 10s ahead")
		b.claimNone(due.Add(-time.Millisecond), "1ms before scheduled_for")
		if got := b.claimOne(due); got.ID != id {
			t.Fatalf("at scheduled_for claimed %v, want %v", got.ID, id)
		}
	})

	t.Run("OnlyRequestedTags", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		a := b.enqueue(withTag("a"))
		bb := b.enqueue(withTag("b"))
		c := b.enqueue(withTag("c"))
		got := b.claim(spine.ClaimParams{Tags: []string{"a", "c", "nobody"}, Limit: 10})
		requireIDs(t, "Claim(tags a, c)", claimedIDs(got), []uuid.UUID{a, c})
		for _, j := range got {
			if j.Pin.Tag != "a" && j.Pin.Tag != "c" {
				t.Fatalf("claimed job %v has tag %q", j.ID, j.Pin.Tag)
			}
		}
		if got := b.claim(spine.ClaimParams{Tags: []string{spine.DefaultTag}, Limit: 10}); len(got) != 0 {
			t.Fatalf("Claim(tag default) took %v, want nothing", claimedIDs(got))
		}
		got = b.claim(spine.ClaimParams{Tags: []string{"b"}, Limit: 10})
		requireIDs(t, "Claim(tag b)", claimedIDs(got), []uuid.UUID{bb})
	})

	t.Run("DistinctTokens", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(12)
		jobs := b.claim(spine.ClaimParams{Limit: 10})
		jobs = append(jobs, b.claim(spine.ClaimParams{Limit: 10, Worker: "worker-2"})...)
		if len(jobs) != 12 {
			t.Fatalf("claimed %d jobs, want 12", len(jobs))
		}
		tokens := map[uuid.UUID]uuid.UUID{}
		for _, j := range jobs {
			if j.ClaimToken == uuid.Nil {
				t.Fatalf("job %v claimed with a nil claim token", j.ID)
			}
			if other, dup := tokens[j.ClaimToken]; dup {
				t.Fatalf("jobs %v and %v got the same claim token %v", other, j.ID, j.ClaimToken)
			}
			tokens[j.ClaimToken] = j.ID
		}
	})

	t.Run("WritesFirstPing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		created := b.clock.Now()
		p := b.params(withRetry(retry3), withPriority(4), withInput(`{"name":"claimed"}`))
		p.TriggerKind = spine.TriggerSchedule
		p.TriggerRef = "cron-1"
		p.CreatedBy = "scheduler"
		res, err := b.store.Enqueue(b.ctx, p)
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		now := b.clock.Advance(3 * time.Second)
		got := b.claim(spine.ClaimParams{Worker: "worker-7", Now: now})
		if len(got) != 1 {
			t.Fatalf("claimed %d jobs, want 1", len(got))
		}
		c := got[0]
		if c.ID != res.ID || c.Workspace != testWorkspace || c.Attempt != 1 || c.Restarts != 0 ||
			c.Priority != 4 || c.Generation != 1 || c.TriggerKind != spine.TriggerSchedule ||
			c.TriggerRef != "cron-1" || c.CreatedBy != "scheduler" {
			t.Fatalf("claimed job %+v does not match what was enqueued", c)
		}
		requirePin(t, "ClaimedJob", c.Pin, p.Pin)
		jsonEqual(t, "ClaimedJob input", c.Input, p.Input)
		sameTime(t, "ClaimedJob.CreatedAt", c.CreatedAt, created)
		sameTime(t, "ClaimedJob.StartedAt", c.StartedAt, now)

		j := b.requireStatus(c.ID, spine.StatusRunning, "just claimed")
		sameTimePtr(t, "ping written by the claim", j.Ping, now)
		sameTimePtr(t, "started_at", j.StartedAt, now)
		if j.Worker != "worker-7" || j.Attempt != 1 {
			t.Fatalf("GetJob after claim: worker %q attempt %d, want worker-7, 1", j.Worker, j.Attempt)
		}
		b.claimNone(now.Add(time.Hour), "the only job is running")
		if h := b.heartbeat(now, lease(c)); len(h) != 1 {
			t.Fatalf("heartbeat with the claim's token: %d leases owned, want 1", len(h))
		}
	})

	t.Run("ConcurrentEachJobOnce", func(t *testing.T) {
		t.Parallel()
		testConcurrentClaims(t, newStore)
	})
}

// testConcurrentClaims lets 16 goroutines race to claim thousands of jobs
// with random limits: each job must be claimed exactly once, none left.
func testConcurrentClaims(t *testing.T, newStore newStoreFunc) {
	const workers = 16
	jobs := 5000
	if testing.Short() {
		jobs = 500
	}
	b := setup(t, newStore)
	want := b.enqueueN(jobs)
	now := b.clock.Advance(time.Second)

	var (
		mu      sync.Mutex
		owner   = map[uuid.UUID]int{}
		dupErrs []string
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for {
				limit := 1 + rng.IntN(16)
				got, err := b.store.Claim(b.ctx, spine.ClaimParams{
					Worker: fmt.Sprintf("worker-%d", w), Tags: []string{spine.DefaultTag}, Limit: limit, Now: now,
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d: Claim(limit %d): %w", w, limit, err)
					return
				}
				if len(got) > limit {
					errs <- fmt.Errorf("worker %d: Claim(limit %d) returned %d jobs", w, limit, len(got))
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					if prev, dup := owner[j.ID]; dup {
						dupErrs = append(dupErrs, fmt.Sprintf("job %v claimed by worker %d and worker %d", j.ID, prev, w))
					}
					owner[j.ID] = w
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
	if len(dupErrs) > 0 {
		t.Fatalf("%d jobs claimed twice, e.g. %s", len(dupErrs), dupErrs[0])
	}
	if len(owner) != jobs {
		t.Fatalf("%d of %d jobs claimed", len(owner), jobs)
	}
	for _, id := range want {
		if _, ok := owner[id]; !ok {
			t.Fatalf("job %v was never claimed", id)
		}
	}
	b.claimNone(now.Add(time.Hour), "every job is running")
	h := b.healthByTag()[testWorkspace+"/"+spine.DefaultTag]
	if h.Running != int64(jobs) || h.Waiting != 0 {
		t.Fatalf("queue_health after the race: %d running, %d waiting; want %d running, 0 waiting", h.Running, h.Waiting, jobs)
	}
}

// requireDistinct fails t when an id repeats.
func requireDistinct(t *testing.T, ids []uuid.UUID) {
	t.Helper()
	seen := map[uuid.UUID]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("job %v returned twice", id)
		}
		seen[id] = true
	}
}
