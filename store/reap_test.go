package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// lifecycleJob is a job on the default tag of workspace "ws" the
// lifecycle tests enqueue at now.
func lifecycleJob(now time.Time) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace:   "ws",
		TriggerKind: spine.TriggerAPI,
		Input:       json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Tag: spine.DefaultTag, Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2},
		},
		Now: now,
	}
}

// claimAs claims the one waiting job on the default tag as worker at now.
func claimAs(t *testing.T, s *Store, worker string, now time.Time) spine.ClaimedJob {
	t.Helper()
	jobs, err := s.Claim(t.Context(), spine.ClaimParams{Worker: worker, Tags: []string{spine.DefaultTag}, Limit: 1, Now: now})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim as %s at %v: %v %v, want one job", worker, now, jobs, err)
	}
	return jobs[0]
}

// The reaper's writes repeat the whole guard (river#1302): what the lock
// read may be stale by the time they run, and a job that heartbeated,
// completed or was claimed again meanwhile must be left alone. The writes
// are driven here with deliberately stale reads, through the same batches
// Reap builds.
func TestReapWritesRecheckTheGuard(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		p := spine.ReapParams{Now: t0.Add(2 * time.Minute), ZombieTimeout: time.Minute, RestartLimit: 3}
		var ids [4]uuid.UUID
		for i := range ids {
			res, err := s.Enqueue(ctx, lifecycleJob(t0))
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = res.ID
		}
		beating, done, reclaimed, marked := ids[0], ids[1], ids[2], ids[3]
		claims := map[uuid.UUID]spine.ClaimedJob{}
		for range ids {
			c := claimAs(t, s, "w1", t0.Add(time.Second))
			claims[c.ID] = c
		}
		// What a reaper read at p.Now: all four stale, none canceled.
		var reads []driver.Zombie
		for _, id := range ids {
			c, ok := claims[id]
			if !ok {
				t.Fatalf("job %s was not claimed", id)
			}
			reads = append(reads, driver.Zombie{
				Lease:  spine.Lease{JobID: id, ClaimToken: c.ClaimToken},
				Zombie: spine.Zombie{Worker: "w1"},
			})
		}
		// Meanwhile: one heartbeats, one completes, one goes back to the
		// queue and is claimed again by another worker, one is marked
		// canceled.
		lease := func(id uuid.UUID) spine.Lease { return spine.Lease{JobID: id, ClaimToken: claims[id].ClaimToken} }
		hb, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: []spine.Lease{lease(beating)}, Now: p.Now})
		if err != nil || len(hb) != 1 {
			t.Fatalf("heartbeat: %v %v", hb, err)
		}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(done), Result: json.RawMessage(`1`), Now: p.Now}); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, spine.ReleaseParams{Lease: lease(reclaimed), Now: p.Now}); err != nil {
			t.Fatal(err)
		}
		if again := claimAs(t, s, "w2", p.Now); again.ID != reclaimed {
			t.Fatalf("claimed %s again, want %s", again.ID, reclaimed)
		}
		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: "ws", JobID: marked, By: "op", Now: p.Now}); err != nil {
			t.Fatal(err)
		}

		err = s.ex.Tx(ctx, func(ex driver.Executor) error {
			requeue, _, err := reapBatches(reads, p)
			if err != nil {
				return err
			}
			if len(requeue.JobIDs) != len(reads) {
				t.Fatalf("requeue batch of %d jobs, want all %d reads", len(requeue.JobIDs), len(reads))
			}
			requeued, err := ex.ReapRequeue(ctx, requeue)
			if err != nil {
				return err
			}
			if len(requeued) != 0 {
				t.Errorf("requeued %v from stale reads, want none", requeued)
			}
			p.RestartLimit = 0 // now every read is past the limit: finish them
			_, finish, err := reapBatches(reads, p)
			if err != nil {
				return err
			}
			failed, canceled, err := ex.ReapFinish(ctx, finish)
			if err != nil {
				return err
			}
			// Only the cancel-marked job still matches the guard it was read
			// with (same token, stale ping) — but its read said "not
			// canceled", and the write re-checks the mark itself: it
			// finishes canceled.
			if len(failed) != 0 || len(canceled) != 1 || canceled[0] != marked {
				t.Errorf("finished failed %v canceled %v, want only %s canceled", failed, canceled, marked)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[uuid.UUID]spine.Status{
			beating: spine.StatusRunning, done: spine.StatusSuccess, reclaimed: spine.StatusRunning, marked: spine.StatusCanceled,
		} {
			j, err := s.GetJob(ctx, "ws", id)
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != want {
				t.Errorf("job %s: status %s, want %s", id, j.Status, want)
			}
		}
		// The canceled job stored no job error: its placeholder is never
		// written.
		if j, _ := s.GetJob(ctx, "ws", marked); j.Error != nil {
			t.Errorf("canceled job's error %+v, want none", j.Error)
		}
	})
}

// A reap with a zombie timeout that is not positive is refused on both
// databases (SQLite used to reap every running job with it).
func TestReapRefusesNonPositiveZombieTimeout(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		for _, d := range []time.Duration{0, -time.Second} {
			if _, err := s.Reap(t.Context(), spine.ReapParams{ZombieTimeout: d}); !errors.Is(err, spine.ErrInvalid) {
				t.Errorf("Reap(zombie timeout %s) = %v, want ErrInvalid", d, err)
			}
		}
	})
}
