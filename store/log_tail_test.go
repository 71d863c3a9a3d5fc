package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// errOutcomeWrite is the fault failOutcome injects.
var errOutcomeWrite = errors.New("injected: connection reset while writing the outcome")

// failOutcome is the real driver except that writing an outcome fails:
// the log tail is appended by the real database first, then the
// transaction fails on the outcome's statement.
type failOutcome struct{ driver.Executor }

func (f failOutcome) Tx(ctx context.Context, fn func(driver.Executor) error) error {
	return f.Executor.Tx(ctx, func(ex driver.Executor) error { return fn(failOutcome{ex}) })
}

func (failOutcome) Complete(context.Context, driver.Completion) (spine.Status, error) {
	return "", errOutcomeWrite
}

func (failOutcome) CompleteBatch(context.Context, []spine.CompleteParams) ([]spine.Status, error) {
	return nil, errOutcomeWrite
}

func (failOutcome) Requeue(context.Context, driver.Requeue) error { return errOutcomeWrite }

func (failOutcome) WriteFailures(context.Context, []driver.Failure) ([]spine.Status, error) {
	return nil, errOutcomeWrite
}

// TestLogTailAndOutcomeAllOrNothing: a log tail carried by Complete,
// CompleteBatch, Fail, FailBatch or Release is written with the outcome or
// not at all. When the outcome's write fails after the tail was appended,
// neither is stored (the job is still running, its logs unchanged); the
// retry writes both; a lost lease writes neither.
func TestLogTailAndOutcomeAllOrNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		now := time.Now()
		queueFill(t, s, "tail", 7, 1, now)
		jobs := make([]spine.ClaimedJob, 7)
		for i := range jobs {
			jobs[i] = queueClaimOne(t, s, "tail", now)
		}
		faulty := &Store{drv: s.drv, ex: failOutcome{s.ex}}
		ctx := t.Context()
		tail := func(j spine.ClaimedJob) string { return "last words of " + j.ID.String() + "\n" }
		res := json.RawMessage(`{"ok":true}`)
		a, b, c, d, e, f, g := jobs[0], jobs[1], jobs[2], jobs[3], jobs[4], jobs[5], jobs[6]

		// Complete: fails as a whole, then lands with its tail.
		_, err := faulty.Complete(ctx, spine.CompleteParams{Lease: leaseOf(a), Result: res, LogTail: tail(a), Now: now})
		requireFault(t, err, "Complete")
		requireNothing(t, s, a.ID)
		if st, err := s.Complete(ctx, spine.CompleteParams{Lease: leaseOf(a), Result: res, LogTail: tail(a), Now: now}); err != nil || st != spine.StatusSuccess {
			t.Fatalf("Complete: %s, %v", st, err)
		}
		requireEnd(t, s, a.ID, spine.StatusSuccess, tail(a))

		// CompleteBatch: one job with a tail, one without.
		batch := []spine.CompleteParams{
			{Lease: leaseOf(b), Result: res, LogTail: tail(b), Now: now},
			{Lease: leaseOf(c), Result: res, Now: now},
		}
		_, err = faulty.CompleteBatch(ctx, batch)
		requireFault(t, err, "CompleteBatch")
		requireNothing(t, s, b.ID)
		requireNothing(t, s, c.ID)
		outs, err := s.CompleteBatch(ctx, batch)
		if err != nil || outs[0].Err != nil || outs[1].Err != nil {
			t.Fatalf("CompleteBatch: %+v, %v", outs, err)
		}
		requireEnd(t, s, b.ID, spine.StatusSuccess, tail(b))
		requireEnd(t, s, c.ID, spine.StatusSuccess, "")

		// Fail (the last attempt) and FailBatch.
		failure := spine.JobError{Message: "boom"}
		_, err = faulty.Fail(ctx, spine.FailParams{Lease: leaseOf(d), Error: failure, LogTail: tail(d), Now: now})
		requireFault(t, err, "Fail")
		requireNothing(t, s, d.ID)
		if out, err := s.Fail(ctx, spine.FailParams{Lease: leaseOf(d), Error: failure, LogTail: tail(d), Now: now}); err != nil || out.Status != spine.StatusFailure {
			t.Fatalf("Fail: %+v, %v", out, err)
		}
		requireEnd(t, s, d.ID, spine.StatusFailure, tail(d))
		fails := []spine.FailParams{{Lease: leaseOf(e), Error: failure, LogTail: tail(e), Now: now}}
		_, err = faulty.FailBatch(ctx, fails)
		requireFault(t, err, "FailBatch")
		requireNothing(t, s, e.ID)
		if outs, err := s.FailBatch(ctx, fails); err != nil || outs[0].Err != nil {
			t.Fatalf("FailBatch: %+v, %v", outs, err)
		}
		requireEnd(t, s, e.ID, spine.StatusFailure, tail(e))

		// Release: the job waits again, the attempt's tail is kept.
		err = faulty.Release(ctx, spine.ReleaseParams{Lease: leaseOf(f), LogTail: tail(f), Now: now})
		requireFault(t, err, "Release")
		requireNothing(t, s, f.ID)
		if err := s.Release(ctx, spine.ReleaseParams{Lease: leaseOf(f), LogTail: tail(f), Now: now}); err != nil {
			t.Fatalf("Release: %v", err)
		}
		requireEnd(t, s, f.ID, spine.StatusQueued, tail(f))

		// A lost lease writes neither its tail nor its outcome, in a batch
		// too (the other job of the batch is written).
		lost := spine.Lease{JobID: g.ID, ClaimToken: uuid.New()}
		_, err = s.Complete(ctx, spine.CompleteParams{Lease: lost, Result: res, LogTail: "zombie\n", Now: now})
		requireErrorIsNotOwner(t, err, "Complete of a lost lease")
		outs, err = s.CompleteBatch(ctx, []spine.CompleteParams{
			{Lease: lost, Result: res, LogTail: "zombie\n", Now: now},
			{Lease: leaseOf(g), Result: res, LogTail: tail(g), Now: now},
		})
		if err != nil || !errors.Is(outs[0].Err, spine.ErrNotOwner) || outs[1].Err != nil || outs[1].Status != spine.StatusSuccess {
			t.Fatalf("CompleteBatch with a lost lease: %+v, %v", outs, err)
		}
		requireEnd(t, s, g.ID, spine.StatusSuccess, tail(g))
		_, err = s.Fail(ctx, spine.FailParams{Lease: lost, Error: failure, LogTail: "zombie\n", Now: now})
		requireErrorIsNotOwner(t, err, "Fail of a lost lease")
		requireEnd(t, s, g.ID, spine.StatusSuccess, tail(g))
	})
}

func requireFault(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, errOutcomeWrite) {
		t.Fatalf("%s with a failing outcome write: %v, want the injected fault", what, err)
	}
}

func requireErrorIsNotOwner(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, spine.ErrNotOwner) {
		t.Fatalf("%s: %v, want ErrNotOwner", what, err)
	}
}

// requireNothing: the job is still running and has no logs.
func requireNothing(t *testing.T, s *Store, id uuid.UUID) {
	t.Helper()
	requireEnd(t, s, id, spine.StatusRunning, "")
}

// requireEnd: the job has status want and its logs are exactly logs.
func requireEnd(t *testing.T, s *Store, id uuid.UUID, want spine.Status, logs string) {
	t.Helper()
	j, err := s.GetJob(t.Context(), "ws", id)
	if err != nil || j.Status != want {
		t.Fatalf("job %s: %s, %v; want %s", id, j.Status, err, want)
	}
	chunks, err := s.Logs(t.Context(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, c := range chunks {
		got.WriteString(c.Data)
	}
	if got.String() != logs {
		t.Fatalf("logs of job %s (%s): %q, want %q", id, want, got.String(), logs)
	}
}

// countingEx counts the transactions and appends the core asks for.
type countingEx struct {
	driver.Executor
	txs, appends *atomic.Int64
}

func (c countingEx) Tx(ctx context.Context, fn func(driver.Executor) error) error {
	c.txs.Add(1)
	return c.Executor.Tx(ctx, func(ex driver.Executor) error { return fn(countingEx{ex, c.txs, c.appends}) })
}

func (c countingEx) AppendLog(ctx context.Context, p spine.AppendLogParams) error {
	c.appends.Add(1)
	return c.Executor.AppendLog(ctx, p)
}

// TestNoTailNoStatement: Complete and CompleteBatch without a tail stay
// the driver's one statement (no transaction, no append); a batch with
// tails is still the driver's one call, which appends them (on Postgres in
// the same statement: the completion's one round trip).
func TestNoTailNoStatement(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		now := time.Now()
		queueFill(t, s, "fast", 4, 1, now)
		jobs := make([]spine.ClaimedJob, 4)
		for i := range jobs {
			jobs[i] = queueClaimOne(t, s, "fast", now)
		}
		var txs, appends atomic.Int64
		counted := &Store{drv: s.drv, ex: countingEx{s.ex, &txs, &appends}}
		ctx := t.Context()
		if _, err := counted.Complete(ctx, spine.CompleteParams{Lease: leaseOf(jobs[0]), Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := counted.CompleteBatch(ctx, []spine.CompleteParams{{Lease: leaseOf(jobs[1]), Now: now}}); err != nil {
			t.Fatal(err)
		}
		if txs.Load() != 0 || appends.Load() != 0 {
			t.Fatalf("without tails: %d transactions, %d appends; want none", txs.Load(), appends.Load())
		}
		// The tail is numbered after the chunks the job streamed.
		if err := s.AppendLog(ctx, spine.AppendLogParams{Lease: leaseOf(jobs[2]), Data: "first\n", Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := counted.CompleteBatch(ctx, []spine.CompleteParams{
			{Lease: leaseOf(jobs[2]), LogTail: "tail\n", Now: now}, {Lease: leaseOf(jobs[3]), Now: now},
		}); err != nil {
			t.Fatal(err)
		}
		if txs.Load() != 0 || appends.Load() != 0 {
			t.Fatalf("one tail in a batch: %d transactions, %d appends by the core; want none", txs.Load(), appends.Load())
		}
		requireEnd(t, s, jobs[2].ID, spine.StatusSuccess, "first\ntail\n")
		requireEnd(t, s, jobs[3].ID, spine.StatusSuccess, "")
	})
}
