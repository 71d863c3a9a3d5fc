package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// raceJobs is how many jobs each race test puts in play.
const raceJobs = 100

// testRaces races the writers that may meet on one job and checks that
// every job ends in exactly one consistent story. A store that decides on
// what it read earlier instead of repeating its guard in the write (river
// #1302) fails here.
func testRaces(t *testing.T, newStore newStoreFunc) {
	t.Run("ReapVersusHeartbeatAndComplete", func(t *testing.T) {
		t.Parallel()
		testRaceReap(t, newStore)
	})
	t.Run("CancelVersusClaim", func(t *testing.T) {
		t.Parallel()
		testRaceCancelClaim(t, newStore)
	})
	t.Run("CancelVersusComplete", func(t *testing.T) {
		t.Parallel()
		testRaceCancelComplete(t, newStore, 1)
	})
	// The batch completer's statement locks and deletes many rows; a cancel
	// mark committed while it waits for a lock must still make that job
	// canceled, not lost from the batch.
	t.Run("CancelVersusCompleteBatch", func(t *testing.T) {
		t.Parallel()
		testRaceCancelComplete(t, newStore, 4)
	})
}

// racer runs functions together once start is closed and collects the
// errors they report.
type racer struct {
	start chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []error
}

func newRacer() *racer { return &racer{start: make(chan struct{})} }

// spawn runs f in a goroutine that waits for the start signal.
func (r *racer) spawn(f func() error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-r.start
		if err := f(); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
	}()
}

// run starts every goroutine at once, waits for them and fails t on any
// reported error.
func (r *racer) run(t *testing.T) {
	t.Helper()
	close(r.start)
	r.wg.Wait()
	for _, err := range r.errs {
		t.Error(err)
	}
	if len(r.errs) > 0 {
		t.FailNow()
	}
}

// claimAll claims n waiting jobs on the default tag at now.
func (b *bundle) claimAll(n int, now time.Time) []spine.ClaimedJob {
	b.t.Helper()
	var jobs []spine.ClaimedJob
	for len(jobs) < n {
		got := b.claim(spine.ClaimParams{Limit: 50, Now: now})
		if len(got) == 0 {
			b.t.Fatalf("claimed %d of %d jobs", len(jobs), n)
		}
		jobs = append(jobs, got...)
	}
	return jobs
}

// testRaceReap lets reapers race a heartbeat on half of the zombies and a
// Complete on the other half, all at the same instant. For each job exactly
// one side may win: a renewed ping and a requeue of the same job, or a
// success and a requeue, mean a reaper acted on a stale read.
func testRaceReap(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	b.enqueueN(raceJobs)
	jobs := b.claimAll(raceJobs, b.clock.Now())
	now := b.clock.Advance(2 * zombieTimeout)
	beating, completing := jobs[:raceJobs/2], jobs[raceJobs/2:]

	var (
		mu        sync.Mutex
		reaped    = map[uuid.UUID]int{}
		renewed   = map[uuid.UUID]bool{}
		completed = map[uuid.UUID]bool{}
	)
	r := newRacer()
	for range 4 {
		r.spawn(func() error {
			for {
				res, err := b.store.Reap(b.ctx, spine.ReapParams{Now: now, ZombieTimeout: zombieTimeout, RestartLimit: restartLimit, Limit: 3})
				if err != nil {
					return fmt.Errorf("Reap: %w", err)
				}
				if len(res.Requeued)+len(res.Failed)+len(res.Canceled) == 0 {
					return nil
				}
				if len(res.Failed)+len(res.Canceled) > 0 {
					return fmt.Errorf("Reap failed %v and canceled %v: nothing here is past its limit or marked", res.Failed, res.Canceled)
				}
				mu.Lock()
				for _, id := range res.Requeued {
					reaped[id]++
				}
				mu.Unlock()
			}
		})
	}
	r.spawn(func() error {
		for _, j := range beating {
			res, err := b.store.Heartbeat(b.ctx, spine.HeartbeatParams{Leases: []spine.Lease{lease(j)}, Now: now})
			if err != nil {
				return fmt.Errorf("Heartbeat: %w", err)
			}
			mu.Lock()
			renewed[j.ID] = len(res) == 1
			mu.Unlock()
		}
		return nil
	})
	r.spawn(func() error {
		for _, j := range completing {
			st, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(j), Result: json.RawMessage(`{"ok":true}`), Now: now})
			switch {
			case errors.Is(err, spine.ErrNotOwner):
			case err != nil:
				return fmt.Errorf("Complete(%v): %w", j.ID, err)
			case st != spine.StatusSuccess:
				return fmt.Errorf("Complete(%v): status %q, want success", j.ID, st)
			}
			mu.Lock()
			completed[j.ID] = err == nil
			mu.Unlock()
		}
		return nil
	})
	r.run(t)

	for _, j := range beating {
		requireOneWinner(t, b, j.ID, "heartbeat", renewed[j.ID], reaped[j.ID], spine.StatusRunning)
	}
	for _, j := range completing {
		requireOneWinner(t, b, j.ID, "Complete", completed[j.ID], reaped[j.ID], spine.StatusSuccess)
	}
	requireReaped(t, b.reap(now), nil, nil, nil)
}

// requireOneWinner checks one job of testRaceReap: either the worker's
// write won (and the job shows its effect) or the reaper's, never both.
func requireOneWinner(t *testing.T, b *bundle, id uuid.UUID, what string, workerWon bool, reaped int, wonStatus spine.Status) {
	t.Helper()
	switch {
	case reaped > 1:
		t.Fatalf("job %v requeued %d times by racing reapers", id, reaped)
	case workerWon && reaped == 1:
		t.Fatalf("job %v: the %s succeeded and a reaper requeued it too", id, what)
	case !workerWon && reaped == 0:
		t.Fatalf("job %v: the %s lost its lease but no reaper took the job", id, what)
	case workerWon:
		b.requireStatus(id, wonStatus, "the "+what+" won the race")
	default:
		if j := b.requireStatus(id, spine.StatusQueued, "the reaper won the race"); j.Restarts != 1 {
			t.Fatalf("job %v requeued with restarts %d, want 1", id, j.Restarts)
		}
	}
}

// testRaceCancelClaim cancels waiting jobs while workers claim them: each
// job is either canceled at once (and never handed to a worker) or claimed
// and only marked.
func testRaceCancelClaim(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	ids := b.enqueueN(raceJobs)
	now := b.clock.Advance(time.Second)
	var (
		mu       sync.Mutex
		claimed  = map[uuid.UUID]int{}
		outcomes = map[uuid.UUID]spine.Status{}
	)
	r := newRacer()
	for w := range 2 {
		r.spawn(func() error {
			for {
				got, err := b.store.Claim(b.ctx, spine.ClaimParams{Worker: fmt.Sprintf("worker-%d", w), Tags: []string{spine.DefaultTag}, Limit: 2, Now: now})
				if err != nil {
					return fmt.Errorf("Claim: %w", err)
				}
				if len(got) == 0 {
					return nil
				}
				mu.Lock()
				for _, j := range got {
					claimed[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	r.spawn(func() error {
		for _, id := range ids {
			out, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: id, By: "alice", Now: now})
			if err != nil {
				return fmt.Errorf("Cancel(%v) of a waiting or running job: %w", id, err)
			}
			mu.Lock()
			outcomes[id] = out.Status
			mu.Unlock()
		}
		return nil
	})
	r.run(t)

	for _, id := range ids {
		j := b.get(id)
		switch outcomes[id] {
		case spine.StatusCanceled:
			if claimed[id] != 0 || j.Status != spine.StatusCanceled || j.StartedAt != nil {
				t.Fatalf("job %v: Cancel answered canceled at once, yet it was claimed %d times (status %q, started %v)",
					id, claimed[id], j.Status, j.StartedAt)
			}
		case spine.StatusRunning:
			if claimed[id] != 1 || j.Status != spine.StatusRunning || j.CanceledBy != "alice" {
				t.Fatalf("job %v: Cancel answered running (marked), but claimed %d times, status %q, canceled_by %q",
					id, claimed[id], j.Status, j.CanceledBy)
			}
		default:
			t.Fatalf("job %v: Cancel answered %q", id, outcomes[id])
		}
	}
}

// testRaceCancelComplete cancels running jobs while their worker completes
// them: a cancel that answered "marked" must end the job canceled; one
// that came too late must be refused as a conflict and leave it success.
func testRaceCancelComplete(t *testing.T, newStore newStoreFunc, batch int) {
	b := setup(t, newStore)
	b.enqueueN(raceJobs)
	jobs := b.claimAll(raceJobs, b.clock.Now())
	now := b.clock.Advance(time.Second)
	var (
		mu        sync.Mutex
		canceled  = map[uuid.UUID]error{}
		cancelOut = map[uuid.UUID]spine.Status{}
		completed = map[uuid.UUID]spine.Status{}
	)
	r := newRacer()
	r.spawn(func() error {
		for _, j := range jobs {
			out, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: j.ID, By: "alice", Now: now})
			if err != nil && !errors.Is(err, spine.ErrConflict) {
				return fmt.Errorf("Cancel(%v): %w", j.ID, err)
			}
			mu.Lock()
			canceled[j.ID], cancelOut[j.ID] = err, out.Status
			mu.Unlock()
		}
		return nil
	})
	r.spawn(func() error {
		for start := 0; start < len(jobs); start += batch {
			chunk := jobs[start:min(start+batch, len(jobs))]
			statuses, err := completeChunk(b, chunk, now)
			if err != nil {
				return err
			}
			mu.Lock()
			for i, j := range chunk {
				completed[j.ID] = statuses[i]
			}
			mu.Unlock()
		}
		return nil
	})
	r.run(t)

	for _, j := range jobs {
		final := b.get(j.ID).Status
		switch {
		case canceled[j.ID] != nil:
			if completed[j.ID] != spine.StatusSuccess || final != spine.StatusSuccess {
				t.Fatalf("job %v: Cancel was refused (%v) but Complete answered %q and the job is %q; want success",
					j.ID, canceled[j.ID], completed[j.ID], final)
			}
		case cancelOut[j.ID] == spine.StatusRunning:
			if completed[j.ID] != spine.StatusCanceled || final != spine.StatusCanceled {
				t.Fatalf("job %v: Cancel answered marked, but Complete answered %q and the job is %q; want canceled",
					j.ID, completed[j.ID], final)
			}
		default:
			t.Fatalf("job %v: Cancel of a running job answered %q", j.ID, cancelOut[j.ID])
		}
	}
}

// completeChunk completes jobs by their only owner: one Complete for a
// single job, one CompleteBatch for more.
func completeChunk(b *bundle, jobs []spine.ClaimedJob, now time.Time) ([]spine.Status, error) {
	ok := json.RawMessage(`{"ok":true}`)
	if len(jobs) == 1 {
		st, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: lease(jobs[0]), Result: ok, Now: now})
		if err != nil {
			return nil, fmt.Errorf("Complete(%v) by its only owner: %w", jobs[0].ID, err)
		}
		return []spine.Status{st}, nil
	}
	ps := make([]spine.CompleteParams, len(jobs))
	for i, j := range jobs {
		ps[i] = spine.CompleteParams{Lease: lease(j), Result: ok, Now: now}
	}
	outs, err := b.store.CompleteBatch(b.ctx, ps)
	if err != nil {
		return nil, fmt.Errorf("CompleteBatch of %d jobs by their only owner: %w", len(jobs), err)
	}
	statuses := make([]spine.Status, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			return nil, fmt.Errorf("CompleteBatch: job %v by its only owner: %w", jobs[i].ID, o.Err)
		}
		statuses[i] = o.Status
	}
	return statuses, nil
}
