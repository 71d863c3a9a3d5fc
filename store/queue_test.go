package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver/drivertest"
)

// queueJob is a valid enqueue request on tag with attempts attempts.
func queueJob(tag string, attempts int) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace:   "ws",
		TriggerKind: spine.TriggerAPI,
		Input:       json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: attempts, Backoff: time.Second, Factor: 2},
		},
	}
}

// queueFill enqueues n jobs on tag in one batch, scheduled at now (zero:
// the database's clock).
func queueFill(t *testing.T, s *Store, tag string, n, attempts int, now time.Time) []uuid.UUID {
	t.Helper()
	ps := make([]spine.EnqueueParams, n)
	for i := range ps {
		ps[i] = queueJob(tag, attempts)
		ps[i].Now = now
	}
	res, err := s.EnqueueBatch(t.Context(), ps)
	if err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	ids := make([]uuid.UUID, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

// queueClaimOne claims exactly one job on tag or fails the test.
func queueClaimOne(t *testing.T, s *Store, tag string, now time.Time) spine.ClaimedJob {
	t.Helper()
	jobs, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{tag}, Limit: 1, Now: now})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d jobs, %v; want 1", len(jobs), err)
	}
	return jobs[0]
}

func leaseOf(j spine.ClaimedJob) spine.Lease {
	return spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}
}

// requireNotWoken asserts that nothing is pending on ch after a wake-up
// sent now would have arrived: a job enqueued on a marker tag, whose
// wake-up a second subscriber observes, proves that every wake-up sent
// before it was delivered (Postgres delivers notifications in commit
// order on one listener; SQLite sends them in process at commit).
func requireNotWoken[T any](t *testing.T, s *Store, ch <-chan T, what string) {
	t.Helper()
	marker, stop := s.Subscribe([]string{"marker"})
	defer stop()
	if _, err := s.Enqueue(t.Context(), queueJob("marker", 1)); err != nil {
		t.Fatalf("enqueue marker: %v", err)
	}
	drivertest.WaitWake(t, marker, "for the marker")
	select {
	case <-ch:
		t.Fatalf("unexpected wake-up %s", what)
	default:
	}
}

// Concurrent claimers never get the same job, and no claim returns more
// than its limit (the SKIP LOCKED + LIMIT pitfall).
func TestConcurrentClaimsNeverShareOrExceedLimit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		const jobs, workers, limit = 200, 4, 3
		queueFill(t, s, "default", jobs, 2, time.Time{})
		var mu sync.Mutex
		seen := map[uuid.UUID]string{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			worker := fmt.Sprintf("w%d", w)
			wg.Go(func() {
				for {
					got, err := s.Claim(t.Context(), spine.ClaimParams{Worker: worker, Tags: []string{"default"}, Limit: limit})
					if err != nil {
						errs <- err
						return
					}
					if len(got) > limit {
						errs <- fmt.Errorf("claim returned %d jobs, limit %d", len(got), limit)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, j := range got {
						if other, dup := seen[j.ID]; dup {
							errs <- fmt.Errorf("job %s claimed by %s and %s", j.ID, other, worker)
						}
						seen[j.ID] = worker
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(seen) != jobs {
			t.Fatalf("claimed %d distinct jobs, want %d", len(seen), jobs)
		}
	})
}

// Each job of one claim gets its own version-4 claim token, and a tag
// named twice neither shrinks the claim nor counts twice against it.
func TestClaimTokensDistinct(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		now := time.Now()
		queueFill(t, s, "default", 41, 1, now)
		jobs, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"default", "", "default"}, Limit: 40, Now: now})
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		if len(jobs) != 40 {
			t.Fatalf("claimed %d jobs, want 40 (a repeated tag must not shrink the claim)", len(jobs))
		}
		seen := map[uuid.UUID]bool{}
		for _, j := range jobs {
			if seen[j.ClaimToken] {
				t.Fatalf("claim token %v given to two jobs", j.ClaimToken)
			}
			seen[j.ClaimToken] = true
			if j.ClaimToken.Version() != 4 || j.ClaimToken.Variant() != uuid.RFC4122 {
				t.Fatalf("claim token %v is not a version-4 UUID", j.ClaimToken)
			}
		}
	})
}

// A claim's request is checked before any statement runs, with the same
// text on every database.
func TestClaimRefusesBadRequests(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		for _, c := range []struct {
			p    spine.ClaimParams
			text string
		}{
			{spine.ClaimParams{Worker: "w", Tags: []string{"default"}}, "claim jobs: invalid request: limit 0 is not positive"},
			{spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: -1}, "claim jobs: invalid request: limit -1 is not positive"},
			{spine.ClaimParams{Worker: "w", Tags: []string{"", ""}, Limit: 1}, "claim jobs: invalid request: no tags"},
			{spine.ClaimParams{Worker: "w", Limit: 1}, "claim jobs: invalid request: no tags"},
		} {
			_, err := s.Claim(t.Context(), c.p)
			if err == nil || err.Error() != c.text || !strings.Contains(err.Error(), spine.ErrInvalid.Error()) {
				t.Errorf("Claim(%+v) = %v, want %q", c.p, err, c.text)
			}
		}
	})
}

// A lost lease is ErrNotOwner with the same text on every database, for
// every owner write.
func TestNotOwnerTexts(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		queueFill(t, s, "default", 1, 2, time.Time{})
		c := queueClaimOne(t, s, "default", time.Time{})
		lost := spine.Lease{JobID: c.ID, ClaimToken: uuid.New()}
		id := c.ID.String()
		_, complete := s.Complete(ctx, spine.CompleteParams{Lease: lost})
		_, fail := s.Fail(ctx, spine.FailParams{Lease: lost, Error: spine.JobError{Message: "x"}})
		release := s.Release(ctx, spine.ReleaseParams{Lease: lost})
		appendLog := s.AppendLog(ctx, spine.AppendLogParams{Lease: lost, Data: "x"})
		batch, err := s.CompleteBatch(ctx, []spine.CompleteParams{{Lease: lost}})
		if err != nil {
			t.Fatal(err)
		}
		failBatch, err := s.FailBatch(ctx, []spine.FailParams{{Lease: lost}})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			err  error
			text string
		}{
			{complete, "complete job " + id + ": " + spine.ErrNotOwner.Error()},
			{fail, "fail job " + id + ": " + spine.ErrNotOwner.Error()},
			{release, "release job " + id + ": " + spine.ErrNotOwner.Error()},
			{appendLog, "append log of job " + id + ": " + spine.ErrNotOwner.Error()},
			{batch[0].Err, "complete job " + id + ": " + spine.ErrNotOwner.Error()},
			{failBatch[0].Err, "fail job " + id + ": " + spine.ErrNotOwner.Error()},
		} {
			if w.err == nil || w.err.Error() != w.text {
				t.Errorf("got %v, want %q", w.err, w.text)
			}
		}
		if j, err := s.GetJob(ctx, "ws", c.ID); err != nil || j.Status != spine.StatusRunning || j.Attempt != 1 {
			t.Fatalf("after writes on a lost lease: %+v %v, want the job running its first attempt", j, err)
		}
	})
}

// A retry and a cancel mark leave the job live: its waiters are not woken.
func TestRetryAndCancelMarkDoNotWakeWaiters(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		id := queueFill(t, s, "default", 1, 2, time.Time{})[0]
		ch, stop := s.SubscribeCompletion(id)
		defer stop()
		c := queueClaimOne(t, s, "default", time.Time{})
		out, err := s.Fail(ctx, spine.FailParams{Lease: leaseOf(c), Error: spine.JobError{Message: "first"}})
		if err != nil || !out.Retried {
			t.Fatalf("Fail with an attempt left: %+v %v, want a retry", out, err)
		}
		requireNotWoken(t, s, ch, "for a retried job")

		c = queueClaimOne(t, s, "default", out.ScheduledFor)
		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: "ws", JobID: id, By: "op"}); err != nil {
			t.Fatal(err)
		}
		requireNotWoken(t, s, ch, "for a cancel mark on a running job")
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: leaseOf(c), Result: []byte(`1`)}); err != nil {
			t.Fatal(err)
		}
		drivertest.WaitWake(t, ch, "after the marked job completed canceled")
	})
}

// Process output that a text column refuses (NUL, invalid UTF-8) is
// stored with replacement characters instead of failing the append.
func TestAppendLogCleansUnstorableText(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		queueFill(t, s, "default", 1, 1, time.Time{})
		c := queueClaimOne(t, s, "default", time.Time{})
		if err := s.AppendLog(ctx, spine.AppendLogParams{Lease: leaseOf(c), Data: "a\x00b\xffc"}); err != nil {
			t.Fatalf("append: %v", err)
		}
		chunks, err := s.Logs(ctx, c.ID, 0)
		if err != nil || len(chunks) != 1 {
			t.Fatalf("logs: %v %v", chunks, err)
		}
		if want := "a\uFFFDb\uFFFDc"; chunks[0].Data != want || chunks[0].Seq != 1 {
			t.Fatalf("chunk %q seq %d, want %q seq 1", chunks[0].Data, chunks[0].Seq, want)
		}
	})
}

// Many workers claim, heartbeat, append to and complete (or fail) every
// job while a reader queries, and no call fails: on SQLite, with one
// writer connection and BEGIN IMMEDIATE, SQLITE_BUSY never leaks out.
func TestConcurrentClaimCompleteNoBusy(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		const (
			workers = 16
			jobs    = 600
		)
		ctx := t.Context()
		now := time.Now()
		queueFill(t, s, "default", jobs, 1, now)

		var done atomic.Int64
		errs := make(chan error, workers+1)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				if err := drainQueue(ctx, s, fmt.Sprintf("w%d", w), 1+w%4, now, &done); err != nil {
					errs <- err
				}
			})
		}
		stopReads := make(chan struct{})
		var readers sync.WaitGroup
		readers.Go(func() {
			for {
				select {
				case <-stopReads:
					return
				default:
				}
				if _, err := s.Health(ctx); err != nil {
					errs <- fmt.Errorf("health: %w", err)
					return
				}
			}
		})
		wg.Wait()
		close(stopReads)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
			if strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "locked") {
				t.Fatal("a busy error leaked out")
			}
		}
		if got := done.Load(); got != jobs {
			t.Fatalf("%d jobs finished, want %d", got, jobs)
		}
		counts, err := s.CountJobs(ctx, "ws")
		if err != nil {
			t.Fatal(err)
		}
		if n := counts[spine.StatusSuccess] + counts[spine.StatusFailure]; n != jobs || counts[spine.StatusFailure] != jobs/3 {
			t.Fatalf("counts %v, want %d finished, %d of them failed", counts, jobs, jobs/3)
		}
	})
}

// drainQueue claims and finishes jobs until none is left.
func drainQueue(ctx context.Context, s *Store, worker string, limit int, now time.Time, done *atomic.Int64) error {
	for {
		got, err := s.Claim(ctx, spine.ClaimParams{Worker: worker, Tags: []string{"default"}, Limit: limit, Now: now})
		if err != nil {
			return fmt.Errorf("%s: claim: %w", worker, err)
		}
		if len(got) == 0 {
			return nil
		}
		leases := make([]spine.Lease, len(got))
		for i, j := range got {
			leases[i] = leaseOf(j)
		}
		if hb, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: leases, Now: now}); err != nil || len(hb) != len(leases) {
			return fmt.Errorf("%s: heartbeat: %d of %d leases, %v", worker, len(hb), len(leases), err)
		}
		for _, l := range leases {
			if err := finishQueued(ctx, s, l, done.Add(1), now); err != nil {
				return fmt.Errorf("%s: %w", worker, err)
			}
		}
	}
}

// finishQueued completes the nth job finished, or fails every third one
// (its single attempt ends it).
func finishQueued(ctx context.Context, s *Store, l spine.Lease, n int64, now time.Time) error {
	if err := s.AppendLog(ctx, spine.AppendLogParams{Lease: l, Data: "line\n", Now: now}); err != nil {
		return fmt.Errorf("append log: %w", err)
	}
	if n%3 == 0 {
		out, err := s.Fail(ctx, spine.FailParams{Lease: l, Error: spine.JobError{Message: "no"}, Now: now})
		if err == nil && out.Retried {
			err = fmt.Errorf("retried a job whose policy allows one attempt")
		}
		if err != nil {
			return fmt.Errorf("fail: %w", err)
		}
		return nil
	}
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: l, Result: json.RawMessage(`{"ok":true}`), Now: now}); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	return nil
}
