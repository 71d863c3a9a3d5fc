package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// With one writer connection and BEGIN IMMEDIATE, SQLITE_BUSY never leaks
// out: 16 goroutines claim, heartbeat and complete (or fail) every job
// while readers query, and no call fails.
func TestConcurrentClaimCompleteNoBusy(t *testing.T) {
	t.Parallel()
	const (
		workers = 16
		jobs    = 600
	)
	ctx := context.Background()
	s := newStore(t)
	now := time.Now()
	enqueueN(t, s, "default", jobs, now)

	var done atomic.Int64
	errs := make(chan error, workers+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if err := drain(ctx, s, fmt.Sprintf("w%d", w), 1+w%4, now, &done); err != nil {
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
			if _, err := s.Executor().Health(ctx); err != nil {
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
	if n := count(t, s, "SELECT count(*) FROM job_completed"); n != jobs {
		t.Fatalf("%d completed rows, want %d", n, jobs)
	}
}

// drain claims and finishes jobs until none is left.
func drain(ctx context.Context, s *Driver, worker string, limit int, now time.Time, done *atomic.Int64) error {
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
			leases[i] = spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}
		}
		if hb, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: leases, Now: now}); err != nil || len(hb) != len(leases) {
			return fmt.Errorf("%s: heartbeat: %d of %d leases, %v", worker, len(hb), len(leases), err)
		}
		for i, l := range leases {
			if err := finishOne(ctx, s, l, i, now); err != nil {
				return fmt.Errorf("%s: %w", worker, err)
			}
			done.Add(1)
		}
	}
}

// finishOne completes a job, or fails every third one (its single attempt
// ends it).
func finishOne(ctx context.Context, s *Driver, l spine.Lease, i int, now time.Time) error {
	if err := s.AppendLog(ctx, spine.AppendLogParams{Lease: l, Data: "line\n", Now: now}); err != nil {
		return fmt.Errorf("append log: %w", err)
	}
	if i%3 == 2 {
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
