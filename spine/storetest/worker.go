package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// runWorker checks the worker loop on a real store: outcomes, the cancel
// mark, lost ownership, timeouts, panics and the graceful drain.
func runWorker(t *testing.T, newStore newStoreFunc) {
	t.Run("WorkerCompletesWithinConcurrency", func(t *testing.T) { t.Parallel(); workerCompletes(t, newStore(t)) })
	t.Run("WorkerRetriesThenFails", func(t *testing.T) { t.Parallel(); workerRetries(t, newStore(t)) })
	t.Run("WorkerCancelMarkStopsHandler", func(t *testing.T) { t.Parallel(); workerCancel(t, newStore(t)) })
	t.Run("WorkerLostOwnershipWritesNothing", func(t *testing.T) { t.Parallel(); workerLost(t, newStore(t)) })
	t.Run("WorkerReclaimStopsTheOldAttempt", func(t *testing.T) { t.Parallel(); workerReclaim(t, newStore(t)) })
	t.Run("WorkerTimeoutAndPanicFail", func(t *testing.T) { t.Parallel(); workerTimeoutPanic(t, newStore(t)) })
	t.Run("WorkerStopDrainsThenReleases", func(t *testing.T) { t.Parallel(); workerDrain(t, newStore(t)) })
	t.Run("WorkerStartStopStress", func(t *testing.T) { t.Parallel(); workerStartStop(t, newStore(t)) })
	t.Run("WorkerStopReleasesAClaimInFlight", func(t *testing.T) { t.Parallel(); workerClaimAtStop(t, newStore(t)) })
	t.Run("WorkerBatchesFailures", func(t *testing.T) { t.Parallel(); workerBatchesFailures(t, newStore(t)) })
	t.Run("WorkerWritesALoneOutcomeAtOnce", func(t *testing.T) { t.Parallel(); workerLoneOutcome(t, newStore(t)) })
	t.Run("WorkerWritesTheLogTailWithTheOutcome", func(t *testing.T) { t.Parallel(); workerLogTail(t, newStore(t)) })
}

// workerLoneOutcome: with a batch window longer than the test, a job that
// finishes while no other job of the worker is in its handler is still
// completed: its outcome is written at once, not after the window (which
// would leave a ?wait hanging for the window on an idle worker). An
// outcome that finishes beside a running job is written once that job is
// done too.
func workerLoneOutcome(t *testing.T, s spine.Store) {
	release := make(chan struct{})
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 2, BatchWindow: time.Hour,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			if strings.Contains(string(job.Input), "hold") {
				<-release
			}
			return job.Input, nil
		}})
	wkStatus(t, s, wkEnqueue(t, s, "t", `{"n":1}`, nil), spine.StatusSuccess)
	held := wkEnqueue(t, s, "t", `{"hold":true}`, nil)
	wkWait(t, 10*time.Second, "the held job to run", func() bool {
		j, err := s.GetJob(context.Background(), "ws", held)
		return err == nil && j.Status == spine.StatusRunning
	})
	quick := wkEnqueue(t, s, "t", `{"n":2}`, nil)
	wkWait(t, 10*time.Second, "the quick job to run", func() bool {
		j, err := s.GetJob(context.Background(), "ws", quick)
		return err == nil && j.Status != spine.StatusQueued
	})
	close(release) // once both handlers are done, the batch is written
	wkStatus(t, s, quick, spine.StatusSuccess)
	wkStatus(t, s, held, spine.StatusSuccess)
}

// wkEnqueue enqueues one job on tag with the given pin tweaks.
func wkEnqueue(t *testing.T, s spine.Store, tag string, input string, tweak func(*spine.Pin)) uuid.UUID {
	t.Helper()
	pin := spine.Pin{AppKey: "app", ActionKey: "act", Tag: tag, Runtime: "go"}
	if tweak != nil {
		tweak(&pin)
	}
	res, err := s.Enqueue(context.Background(), spine.EnqueueParams{
		Workspace: "ws", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(input), Pin: pin,
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return res.ID
}

// wkStart starts a worker with fast test timings and stops it at cleanup.
func wkStart(t *testing.T, cfg spine.WorkerConfig) *spine.Worker {
	t.Helper()
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 20 * time.Millisecond
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 50 * time.Millisecond
	}
	w, err := spine.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// wkStatus polls GetJob until the job reaches want, with a deadline.
func wkStatus(t *testing.T, s spine.Store, id uuid.UUID, want spine.Status) spine.Job {
	t.Helper()
	var job spine.Job
	wkWait(t, 20*time.Second, fmt.Sprintf("job %s to be %s", id, want), func() bool {
		var err error
		job, err = s.GetJob(context.Background(), "ws", id)
		if err != nil {
			t.Fatalf("get job: %v", err)
		}
		return job.Status == want
	})
	return job
}

// wkRecv receives from ch with a deadline, so a broken worker fails the
// test instead of hanging it.
func wkRecv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("nothing received within 20s")
		panic("unreachable")
	}
}

// wkWait polls cond every few milliseconds until it holds or the
// deadline passes.
func wkWait(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, with a deadline
	}
}

func workerCompletes(t *testing.T, s spine.Store) {
	var inFlight, peak atomic.Int64
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 4,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			return job.Input, nil
		}})
	ids := make([]uuid.UUID, 30)
	for i := range ids {
		ids[i] = wkEnqueue(t, s, "t", fmt.Sprintf(`{"n":%d}`, i), nil)
	}
	for i, id := range ids {
		job := wkStatus(t, s, id, spine.StatusSuccess)
		if want := fmt.Sprintf(`{"n":%d}`, i); wkJSON(t, job.Result) != want {
			t.Errorf("job %d result %s, want %s", i, job.Result, want)
		}
	}
	if p := peak.Load(); p > 4 || p < 1 {
		t.Fatalf("peak concurrency %d, want 1..4", p)
	}
}

func workerRetries(t *testing.T, s spine.Store) {
	var calls atomic.Int64
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"},
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			calls.Add(1)
			return nil, fmt.Errorf("boom on attempt %d", job.Attempt)
		}})
	id := wkEnqueue(t, s, "t", `{}`, func(p *spine.Pin) {
		p.Retry = spine.RetryPolicy{MaxAttempts: 3, Backoff: 5 * time.Millisecond, Factor: 2}
	})
	job := wkStatus(t, s, id, spine.StatusFailure)
	if job.Attempt != 3 || calls.Load() != 3 {
		t.Fatalf("attempt %d after %d calls, want 3 and 3", job.Attempt, calls.Load())
	}
	if job.Error == nil || job.Error.Message != "boom on attempt 3" {
		t.Fatalf("error %+v, want the last attempt's message", job.Error)
	}
}

func workerCancel(t *testing.T, s spine.Store) {
	started := make(chan struct{})
	causes := make(chan error, 1)
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"},
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			close(started)
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}})
	id := wkEnqueue(t, s, "t", `{}`, func(p *spine.Pin) { p.Retry.MaxAttempts = 5 })
	wkRecv(t, started)
	if _, err := s.Cancel(context.Background(), spine.CancelParams{Workspace: "ws", JobID: id, By: "ada", Reason: "enough"}); err != nil {
		t.Fatal(err)
	}
	if cause := wkRecv(t, causes); !errors.Is(cause, spine.ErrJobCanceled) {
		t.Fatalf("handler context cause %v, want ErrJobCanceled", cause)
	}
	job := wkStatus(t, s, id, spine.StatusCanceled)
	if job.CanceledBy != "ada" || job.CanceledReason != "enough" {
		t.Fatalf("canceled by %q (%q), want ada (enough)", job.CanceledBy, job.CanceledReason)
	}
}

func workerLost(t *testing.T, s spine.Store) {
	ctx := context.Background()
	started := make(chan uuid.UUID, 1)
	causes := make(chan error, 1)
	proceed := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(proceed) }) }
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Name: "slow",
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			started <- job.ClaimToken
			<-ctx.Done()
			causes <- context.Cause(ctx)
			<-proceed // keep the slot busy until the other owner has the job
			return json.RawMessage(`"late"`), nil
		}})
	t.Cleanup(release) // runs before the worker's Stop, so a failure cannot hang
	id := wkEnqueue(t, s, "t", `{}`, nil)
	wkRecv(t, started)
	// The worker looks dead to the reaper (fake clock far ahead), so the job
	// goes back to waiting and another owner claims it. A reaper skips a job
	// whose heartbeat is in flight, so it may take another pass.
	later := time.Now().Add(time.Hour)
	wkWait(t, 10*time.Second, "the reaper to requeue the job", func() bool {
		res, err := s.Reap(ctx, spine.ReapParams{Now: later, ZombieTimeout: time.Minute, RestartLimit: 3})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Requeued) == 1
	})
	// SKIP LOCKED may pass over the row while the slow worker's heartbeat
	// holds it, so the other owner tries until it gets the job.
	var other []spine.ClaimedJob
	wkWait(t, 10*time.Second, "another owner to claim the job", func() bool {
		var err error
		other, err = s.Claim(ctx, spine.ClaimParams{Worker: "other", Tags: []string{"t"}, Limit: 1, Now: later})
		if err != nil || len(other) > 1 || (len(other) == 1 && other[0].ID != id) {
			t.Fatalf("other owner's claim = %v, %v", other, err)
		}
		return len(other) == 1
	})
	if cause := wkRecv(t, causes); !errors.Is(cause, spine.ErrLostOwnership) {
		t.Fatalf("handler context cause %v, want ErrLostOwnership", cause)
	}
	release()
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: id, ClaimToken: other[0].ClaimToken},
		Result: json.RawMessage(`"winner"`), Now: later}); err != nil {
		t.Fatalf("other owner's completion: %v", err)
	}
	job := wkStatus(t, s, id, spine.StatusSuccess)
	if wkJSON(t, job.Result) != `"winner"` || job.Worker != "other" {
		t.Fatalf("result %s by %q, want the other owner's", job.Result, job.Worker)
	}
}

// workerReclaim: the reaper requeues a job whose worker looked dead and the
// same worker claims it again before any heartbeat told it the first lease
// is gone. The first attempt must be stopped (ErrLostOwnership) at once:
// before, the worker kept its running jobs by job id, the new attempt took
// the old one's entry, and the old attempt's process ran on, unstoppable.
func workerReclaim(t *testing.T, s spine.Store) {
	ctx := context.Background()
	base := time.Now().Add(time.Minute) // past the enqueue's scheduled_for
	var clock atomic.Int64
	clock.Store(base.UnixNano())
	causes := make(chan error, 1)
	started := make(chan struct{}, 1)
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 2, Heartbeat: time.Hour,
		Clock: func() time.Time { return time.Unix(0, clock.Load()) },
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			if job.Restarts > 0 {
				return json.RawMessage(`"second"`), nil
			}
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}})
	id := wkEnqueue(t, s, "t", `{}`, nil)
	wkRecv(t, started)
	// No heartbeat runs (an hour apart): the reaper sees a dead worker.
	reapAt := base.Add(time.Hour)
	wkWait(t, 10*time.Second, "the reaper to requeue the job", func() bool {
		res, err := s.Reap(ctx, spine.ReapParams{Now: reapAt, ZombieTimeout: time.Minute, RestartLimit: 3})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Requeued) == 1
	})
	clock.Store(base.Add(2 * time.Hour).UnixNano()) // the same worker may claim it now
	if cause := wkRecv(t, causes); !errors.Is(cause, spine.ErrLostOwnership) {
		t.Fatalf("first attempt's context cause %v, want ErrLostOwnership", cause)
	}
	job := wkStatus(t, s, id, spine.StatusSuccess)
	if wkJSON(t, job.Result) != `"second"` || job.Restarts != 1 {
		t.Fatalf("result %s after %d restarts, want the second attempt's after 1", job.Result, job.Restarts)
	}
}

func workerTimeoutPanic(t *testing.T, s spine.Store) {
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 2,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			if string(job.Input) == `"panic"` {
				panic("kaboom")
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	slow := wkEnqueue(t, s, "t", `"sleep"`, func(p *spine.Pin) { p.Timeout = 50 * time.Millisecond })
	bad := wkEnqueue(t, s, "t", `"panic"`, nil)
	job := wkStatus(t, s, slow, spine.StatusFailure)
	if job.Error == nil || job.Error.Message != "timed out after 50ms" || job.Error.Kind != "timeout" {
		t.Fatalf("timeout error %+v, want \"timed out after 50ms\"", job.Error)
	}
	job = wkStatus(t, s, bad, spine.StatusFailure)
	if job.Error == nil || !strings.Contains(job.Error.Message, "kaboom") || !strings.Contains(job.Error.Stack, "goroutine") {
		t.Fatalf("panic error %+v, want the panic value and a stack", job.Error)
	}
}

func workerDrain(t *testing.T, s spine.Store) {
	finishing := make(chan struct{})
	started := make(chan string, 2)
	w := wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 2, DrainGrace: 300 * time.Millisecond,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			started <- string(job.Input)
			if string(job.Input) == `"quick"` {
				select {
				case <-finishing:
					return json.RawMessage(`"done"`), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			<-ctx.Done() // a job that only stops when told
			return nil, ctx.Err()
		}})
	quick := wkEnqueue(t, s, "t", `"quick"`, nil)
	stuck := wkEnqueue(t, s, "t", `"stuck"`, nil)
	wkRecv(t, started)
	wkRecv(t, started)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Stop() }()
	close(finishing) // finishes inside the grace period
	wg.Wait()
	if job := wkStatus(t, s, quick, spine.StatusSuccess); wkJSON(t, job.Result) != `"done"` {
		t.Fatalf("drained job result %s", job.Result)
	}
	job := wkStatus(t, s, stuck, spine.StatusQueued)
	if job.Attempt != 1 || job.Restarts != 0 || job.Worker != "" {
		t.Fatalf("released job: attempt %d restarts %d worker %q, want 1, 0, none", job.Attempt, job.Restarts, job.Worker)
	}
}

// stopOnClaim is a store whose first claim that finds jobs stops the worker
// (by canceling the context it was started with) before it answers: the
// claim a worker has in flight when it is told to stop.
type stopOnClaim struct {
	spine.Store
	stop    context.CancelFunc
	once    sync.Once
	stopped chan int // the number of jobs that claim returned
}

func (s *stopOnClaim) Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error) {
	jobs, err := s.Store.Claim(ctx, p)
	if len(jobs) > 0 {
		s.once.Do(func() { s.stop(); s.stopped <- len(jobs) })
	}
	return jobs, err
}

// workerClaimAtStop: jobs a claim returns after the worker was told to stop
// are not run; each goes back to the queue, no attempt charged.
func workerClaimAtStop(t *testing.T, s spine.Store) {
	const n = 40
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = wkEnqueue(t, s, "t", `"x"`, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int32
	store := &stopOnClaim{Store: s, stop: cancel, stopped: make(chan int, 1)}
	w, err := spine.NewWorker(spine.WorkerConfig{
		Store: store, Tags: []string{"t"}, Concurrency: n,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			ran.Add(1)
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := wkRecv(t, store.stopped); got != n {
		t.Fatalf("the claim in flight returned %d jobs, want all %d", got, n)
	}
	w.Stop()
	if got := ran.Load(); got != 0 {
		t.Fatalf("%d jobs ran after the worker was told to stop", got)
	}
	for _, id := range ids {
		job, err := s.GetJob(context.Background(), "ws", id)
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != spine.StatusQueued || job.Attempt != 1 || job.Restarts != 0 || job.Worker != "" {
			t.Fatalf("job claimed at stop: status %s attempt %d restarts %d worker %q, want queued, 1, 0, none",
				job.Status, job.Attempt, job.Restarts, job.Worker)
		}
	}
}

// countingFails counts how failed attempts reach the store.
type countingFails struct {
	spine.Store
	single, batches, batched atomic.Int32
}

func (s *countingFails) Fail(ctx context.Context, p spine.FailParams) (spine.FailOutcome, error) {
	s.single.Add(1)
	return s.Store.Fail(ctx, p)
}

func (s *countingFails) FailBatch(ctx context.Context, ps []spine.FailParams) ([]spine.FailBatchOutcome, error) {
	s.batches.Add(1)
	s.batched.Add(int32(len(ps)))
	return s.Store.FailBatch(ctx, ps)
}

// workerBatchesFailures: failed attempts are written by the batch
// completer (FailBatch), not one transaction per job.
func workerBatchesFailures(t *testing.T, s spine.Store) {
	const n = 30
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = wkEnqueue(t, s, "t", `"x"`, nil)
	}
	store := &countingFails{Store: s}
	w := wkStart(t, spine.WorkerConfig{Store: store, Tags: []string{"t"}, Concurrency: n,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			return nil, errors.New("downstream is down")
		}})
	for _, id := range ids {
		if job := wkStatus(t, s, id, spine.StatusFailure); job.Error == nil || job.Error.Message != "downstream is down" {
			t.Fatalf("failed job's error %+v", job.Error)
		}
	}
	w.Stop()
	if store.single.Load() != 0 || store.batched.Load() != n {
		t.Fatalf("failures written: %d by Fail, %d in %d FailBatch calls; want all %d by FailBatch",
			store.single.Load(), store.batched.Load(), store.batches.Load(), n)
	}
}

func workerStartStop(t *testing.T, s spine.Store) {
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Tags: []string{"t"}, PollInterval: time.Millisecond,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := w.Start(context.Background()); !errors.Is(err, spine.ErrAlreadyStarted) {
			t.Fatalf("second Start: %v, want ErrAlreadyStarted", err)
		}
		w.Stop()
		w.Stop()
	}
}

// wkJSON normalizes stored JSON (jsonb reformats it) for comparison.
func wkJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("stored JSON %q: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// workerLogTail: the output a handler leaves in job.LogTail is in the
// job's logs once its outcome is written: after a success, a failure and
// a result the store refuses (the attempt fails with the reason).
func workerLogTail(t *testing.T, s spine.Store) {
	wkStart(t, spine.WorkerConfig{Store: s, Tags: []string{"t"}, Concurrency: 3,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			var what string
			if err := json.Unmarshal(job.Input, &what); err != nil {
				return nil, err
			}
			job.LogTail = "last words: " + what + "\n"
			switch what {
			case "fail":
				return nil, errors.New("boom")
			case "invalid":
				return json.RawMessage(`{"unterminated":`), nil
			}
			return json.RawMessage(`{"ok":true}`), nil
		}})
	once := func(p *spine.Pin) { p.Retry = spine.RetryPolicy{MaxAttempts: 1} }
	for what, want := range map[string]spine.Status{
		"ok": spine.StatusSuccess, "fail": spine.StatusFailure, "invalid": spine.StatusFailure,
	} {
		id := wkEnqueue(t, s, "t", `"`+what+`"`, once)
		job := wkStatus(t, s, id, want)
		chunks, err := s.Logs(context.Background(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		for _, c := range chunks {
			logs.WriteString(c.Data)
		}
		if got := logs.String(); got != "last words: "+what+"\n" {
			t.Errorf("%s job (%s, %+v): logs %q, want its tail", what, job.Status, job.Error, got)
		}
	}
}
