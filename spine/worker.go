package spine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Causes with which a worker cancels a job's context; a handler can read
// them with context.Cause.
var (
	// ErrJobCanceled: the heartbeat returned the cancel mark.
	ErrJobCanceled = errors.New("job canceled")
	// ErrLostOwnership: the heartbeat found another owner (the job was reaped
	// and perhaps claimed elsewhere). The worker writes nothing more for it.
	ErrLostOwnership = errors.New("job ownership lost")
	// ErrShutdown: the worker is stopping and the grace period ended; the job
	// is released to the queue without charging an attempt.
	ErrShutdown = errors.New("worker shutting down")
)

// Handler runs one job and returns its result (JSON) or an error. It must
// return soon after ctx is canceled. Output it has not appended to the
// job's logs it leaves in job.LogTail: the worker writes it in the same
// transaction as the outcome.
type Handler func(ctx context.Context, job *ClaimedJob) (json.RawMessage, error)

// WorkerConfig configures a Worker. Zero values take the defaults of
// DESIGN §1.
type WorkerConfig struct {
	Store   Store
	Handler Handler
	// Name identifies the worker in job rows; default host-pid-random.
	Name        string
	Tags        []string      // default ["default"]
	Concurrency int           // default 1
	Heartbeat   time.Duration // default 5s
	// PollInterval is the fallback when no wake-up arrives; default 1s.
	PollInterval time.Duration
	// DrainGrace is how long Stop lets running jobs finish before it
	// cancels and releases them; default 30s.
	DrainGrace time.Duration
	// WriteRetry bounds how long a completion is retried while the
	// database is unreachable; default 60s.
	WriteRetry time.Duration
	// BatchWindow is how long a finished job's outcome waits for others
	// to share its batch write while other jobs of the worker run;
	// default 2ms. A lone job's outcome is written at once.
	BatchWindow time.Duration
	Clock       Clock
	Logger      *slog.Logger
}

// Worker claims jobs for its tags, up to its concurrency, runs the handler
// for each, heartbeats all of them in one statement, and completes or fails
// them fenced on their claim tokens.
type Worker struct {
	cfg  WorkerConfig
	log  *slog.Logger
	life Lifecycle

	mu sync.Mutex
	// running holds every attempt whose handler has not returned, by
	// lease: the same job may be here twice for a moment when the reaper
	// requeued it and this worker claimed it again (launch stops the first).
	running map[Lease]*activeJob
	freed   chan struct{}
	// handling counts jobs whose handler has not returned yet.
	handling atomic.Int64

	// completer batches successful completions; one per run, set before
	// any job or heartbeat goroutine starts.
	completer *completer
}

type activeJob struct {
	lease  Lease
	cancel context.CancelCauseFunc
}

// NewWorker checks cfg and fills its defaults.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Store == nil || cfg.Handler == nil {
		return nil, fmt.Errorf("%w: worker needs a store and a handler", ErrInvalid)
	}
	if len(cfg.Tags) == 0 {
		cfg.Tags = []string{DefaultTag}
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	setDefault(&cfg.Heartbeat, 5*time.Second)
	setDefault(&cfg.PollInterval, time.Second)
	setDefault(&cfg.DrainGrace, 30*time.Second)
	setDefault(&cfg.WriteRetry, 60*time.Second)
	setDefault(&cfg.BatchWindow, completerWait)
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	return &Worker{
		cfg: cfg, log: logger(cfg.Logger).With("worker", cfg.Name),
		running: map[Lease]*activeJob{}, freed: make(chan struct{}, 1),
	}, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// Name is the worker's identity as written in job rows.
func (w *Worker) Name() string { return w.cfg.Name }

// Start begins claiming. It returns at once; the worker runs until Stop or
// until ctx ends (which stops it the same way as Stop).
func (w *Worker) Start(ctx context.Context) error {
	return w.life.Start(ctx, w.run)
}

// Stop stops claiming, lets running jobs finish within DrainGrace, then
// cancels the rest with ErrShutdown and releases them to the queue without
// charging an attempt. It waits until every job is handed back.
func (w *Worker) Stop() { w.life.Stop() }

// run is the worker's life: claim loop in front, heartbeats and the batch
// completer beside it, and on the way out the drain, then the last batch
// of completions.
func (w *Worker) run(ctx context.Context) {
	var jobs sync.WaitGroup
	w.completer = newCompleter(w)
	hbCtx, stopHeartbeats := context.WithCancel(context.WithoutCancel(ctx))
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); w.heartbeatLoop(hbCtx) }()

	inbox, unsubscribe := w.cfg.Store.SubscribeDispatch(w.cfg.Name)
	w.claimLoop(ctx, &jobs, inbox)
	w.withdraw(ctx)
	unsubscribe()
	w.drain(&jobs)
	w.completer.close()
	stopHeartbeats()
	<-hbDone
}

// claimCooldown is the shortest time between two claims that freed slots
// trigger. Under load many jobs finish one after the other; waiting this
// long lets their slots add up, so one claim statement (one commit) takes
// many jobs instead of each finished job paying for its own claim. A
// wake-up or the poll claims at once, so an idle worker's pickup is not
// delayed.
const claimCooldown = 2 * time.Millisecond

// claimLoop claims while there are free slots and work, and otherwise waits
// for a wake-up, a freed slot (when the last claim was full) or the poll.
// Jobs dispatched to the worker (dispatch.go) start as they arrive.
func (w *Worker) claimLoop(ctx context.Context, jobs *sync.WaitGroup, inbox *Inbox) {
	wake, unsubscribe := w.cfg.Store.Subscribe(w.cfg.Tags)
	defer unsubscribe()
	poll := time.NewTimer(0)
	defer poll.Stop()
	cooldown := time.NewTimer(time.Hour)
	cooldown.Stop()
	defer cooldown.Stop()
	cooling := false
	var last time.Time
	full := true // the last claim filled every free slot: more may wait
	for {
		select {
		case <-ctx.Done():
			return
		case <-inbox.Ready():
			w.takeDispatched(ctx, jobs, inbox)
			continue
		case <-wake:
		case <-poll.C:
		case <-cooldown.C:
			cooling = false
		case <-w.freed:
			if !full || cooling {
				continue
			}
			if wait := claimCooldown - time.Since(last); wait > 0 {
				cooldown.Reset(wait)
				cooling = true
				continue
			}
		}
		full = w.claimOnce(ctx, jobs)
		last = time.Now()
		poll.Reset(w.cfg.PollInterval)
	}
}

// claimOnce claims up to the free slots and starts a goroutine per job. It
// reports whether it got as many jobs as it asked for.
func (w *Worker) claimOnce(ctx context.Context, jobs *sync.WaitGroup) bool {
	free := w.cfg.Concurrency - w.active()
	if free <= 0 {
		return true
	}
	// The claim is not canceled by Stop: a claim canceled half-way could
	// commit without its answer arriving, leaving jobs for the reaper.
	claimCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	claimed, err := w.cfg.Store.Claim(claimCtx, ClaimParams{
		Worker: w.cfg.Name, Tags: w.cfg.Tags, Limit: free, Now: w.cfg.Clock.Store(),
		Offer: offerSpan * w.cfg.PollInterval, Capacity: w.cfg.Concurrency,
	})
	cancel()
	if err != nil {
		w.log.Warn("claim failed; retrying at the next poll", "err", err)
		return false
	}
	if ctx.Err() != nil {
		w.releaseAll(claimed)
		return false
	}
	for i := range claimed {
		w.launch(ctx, jobs, &claimed[i])
	}
	return len(claimed) == free
}

// releaseParallel bounds the releases in flight when a claim returns while
// the worker stops. A claim can bring thousands of jobs; one transaction
// after another, a 2000-slot worker spent seconds of its shutdown on them.
const releaseParallel = 8

// releaseAll hands back jobs claimed while the worker began to stop.
func (w *Worker) releaseAll(claimed []ClaimedJob) {
	leases := make([]Lease, len(claimed))
	for i, job := range claimed {
		leases[i] = Lease{JobID: job.ID, ClaimToken: job.ClaimToken}
	}
	w.releaseLeases(leases)
}

// releaseLeases hands back owned jobs this worker will not run.
func (w *Worker) releaseLeases(leases []Lease) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, releaseParallel)
	for _, lease := range leases {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			w.writeWithRetry(lease.JobID, func(ctx context.Context) error {
				return w.cfg.Store.Release(ctx, ReleaseParams{Lease: lease, Now: w.cfg.Clock.Store()})
			})
		})
	}
	wg.Wait()
}

func (w *Worker) active() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

// launch registers a claimed job for heartbeats and runs it.
func (w *Worker) launch(ctx context.Context, jobs *sync.WaitGroup, job *ClaimedJob) {
	w.start(ctx, jobs, Lease{JobID: job.ID, ClaimToken: job.ClaimToken},
		func(context.Context) (*ClaimedJob, error) { return job, nil })
}

// start registers lease for heartbeats (it holds a slot from now on),
// then loads its job and runs it. The job's context does not inherit the
// claim loop's cancellation: stopping the worker drains jobs instead of
// killing them.
func (w *Worker) start(ctx context.Context, jobs *sync.WaitGroup, lease Lease, load func(context.Context) (*ClaimedJob, error)) {
	jobCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	a := &activeJob{lease: lease, cancel: cancel}
	w.mu.Lock()
	w.stopEarlierAttempts(a.lease)
	w.running[a.lease] = a
	w.mu.Unlock()
	w.handling.Add(1)
	jobs.Add(1)
	go func() {
		defer jobs.Done()
		defer w.finished(a.lease, cancel)
		job, err := load(jobCtx)
		if err != nil {
			w.handling.Add(-1)
			w.dropDispatched(lease, err)
			return
		}
		w.execute(jobCtx, job)
	}()
}

// stopEarlierAttempts cancels any attempt of the job still running here
// under another lease: claiming the job again proves that lease is gone
// (the reaper requeued the job before a heartbeat could tell this
// worker), and its writes would be refused anyway. Called with mu held.
func (w *Worker) stopEarlierAttempts(l Lease) {
	for held, a := range w.running {
		if held.JobID == l.JobID && held != l {
			w.log.Warn("claimed a job again while its earlier attempt runs; stopping that attempt", "job", l.JobID)
			a.cancel(ErrLostOwnership)
		}
	}
}

func (w *Worker) finished(l Lease, cancel context.CancelCauseFunc) {
	cancel(nil)
	w.mu.Lock()
	delete(w.running, l)
	w.mu.Unlock()
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// drain waits up to DrainGrace for running jobs, then cancels the rest with
// ErrShutdown (they are released) and waits for them to return.
func (w *Worker) drain(jobs *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { jobs.Wait(); close(done) }()
	grace := time.NewTimer(w.cfg.DrainGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	w.mu.Lock()
	for _, a := range w.running {
		a.cancel(ErrShutdown)
	}
	w.mu.Unlock()
	<-done
}

// heartbeatLoop renews the ping of every running job, and of every job
// whose completion is not written yet, in one statement per tick, and
// cancels the running jobs that were marked or lost.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.heartbeatOnce(ctx)
		}
	}
}

// held returns the lease of every job the worker still holds: running,
// or finished with its completion not written yet. A finished job is
// handed to the completer before it leaves running: it is named once.
func (w *Worker) held() (leases []Lease, named map[Lease]bool) {
	w.mu.Lock()
	leases = make([]Lease, 0, len(w.running))
	named = make(map[Lease]bool, len(w.running))
	for _, a := range w.running {
		leases = append(leases, a.lease)
		named[a.lease] = true
	}
	w.mu.Unlock()
	for _, l := range w.completer.leases() {
		if !named[l] {
			leases = append(leases, l)
			named[l] = true
		}
	}
	return leases, named
}

func (w *Worker) heartbeatOnce(ctx context.Context) {
	leases, _ := w.held()
	if len(leases) == 0 {
		return
	}
	owned, err := w.cfg.Store.Heartbeat(ctx, HeartbeatParams{Leases: leases, Now: w.cfg.Clock.Store()})
	if err != nil {
		// The database may be restarting: keep the jobs running; if the
		// outage outlasts the zombie timeout the reaper requeues them and the
		// fenced completion refuses this worker's late writes.
		if ctx.Err() == nil {
			w.log.Warn("heartbeat failed", "jobs", len(leases), "err", err)
		}
		return
	}
	w.applyHeartbeat(leases, owned)
}

// applyHeartbeat cancels jobs whose lease is gone (ErrLostOwnership) or
// carries the cancel mark (ErrJobCanceled).
func (w *Worker) applyHeartbeat(sent []Lease, owned []HeartbeatResult) {
	marks := make(map[uuid.UUID]bool, len(owned))
	for _, r := range owned {
		marks[r.JobID] = r.CancelRequested
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range sent {
		a, ok := w.running[l]
		if !ok {
			continue
		}
		canceled, stillOwned := marks[l.JobID]
		switch {
		case !stillOwned:
			w.log.Warn("lost ownership of job; stopping it", "job", l.JobID)
			a.cancel(ErrLostOwnership)
		case canceled:
			a.cancel(ErrJobCanceled)
		}
	}
}

// execute runs the handler under the pinned timeout and records the outcome.
func (w *Worker) execute(ctx context.Context, job *ClaimedJob) {
	runCtx := ctx
	if job.Pin.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, job.Pin.Timeout,
			fmt.Errorf("timed out after %s", job.Pin.Timeout))
		defer cancel()
	}
	result, err := w.callHandler(runCtx, job)
	w.handling.Add(-1) // before the outcome reaches the completer (see completer.alone)
	w.record(ctx, runCtx, job, result, err)
}

// callHandler turns a handler panic into an error with its stack.
func (w *Worker) callHandler(ctx context.Context, job *ClaimedJob) (res json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &handlerPanic{value: p, stack: string(debug.Stack())}
		}
	}()
	return w.cfg.Handler(ctx, job)
}

type handlerPanic struct {
	value any
	stack string
}

func (p *handlerPanic) Error() string { return fmt.Sprintf("handler panicked: %v", p.value) }

// record writes the outcome, fenced on the claim token, with the log tail
// the handler left in job.LogTail in the same transaction. A lost job
// writes nothing; a job stopped by shutdown is released.
func (w *Worker) record(jobCtx, runCtx context.Context, job *ClaimedJob, result json.RawMessage, err error) {
	lease := Lease{JobID: job.ID, ClaimToken: job.ClaimToken}
	tail := job.LogTail
	cause := context.Cause(jobCtx)
	var write func(ctx context.Context) error
	switch {
	case errors.Is(cause, ErrLostOwnership):
		return
	case errors.Is(cause, ErrShutdown):
		write = func(ctx context.Context) error {
			return w.cfg.Store.Release(ctx, ReleaseParams{Lease: lease, LogTail: tail, Now: w.cfg.Clock.Store()})
		}
	case err != nil || runCtx.Err() != nil:
		// A failed attempt goes to the batch completer too: a burst of
		// failures (a downstream outage) costs one commit per batch, not
		// one per job.
		jerr := jobError(runCtx, err)
		w.completer.submit(outcome{CompleteParams: CompleteParams{Lease: lease, LogTail: tail, Now: w.cfg.Clock.Store()}, failure: &jerr})
		return
	default:
		if _, e := CheckResult(result); e != nil {
			write = func(ctx context.Context) error { return w.failInvalid(ctx, lease, tail, e) }
			break
		}
		// A success goes to the batch completer; the slot is free at once.
		w.completer.submit(outcome{CompleteParams: CompleteParams{Lease: lease, Result: result, LogTail: tail, Now: w.cfg.Clock.Store()}})
		return
	}
	w.writeWithRetry(job.ID, write)
}

// completeOne completes one job on its own (the fallback when a batch
// fails as a whole).
func (w *Worker) completeOne(ctx context.Context, p CompleteParams) error {
	_, err := w.cfg.Store.Complete(ctx, p)
	if errors.Is(err, ErrInvalid) {
		return w.failInvalid(ctx, p.Lease, p.LogTail, err)
	}
	return err
}

// failInvalid fails an attempt whose result cannot be stored, with the
// reason (and the attempt's log tail), instead of losing or truncating
// anything.
func (w *Worker) failInvalid(ctx context.Context, lease Lease, tail string, reason error) error {
	_, err := w.cfg.Store.Fail(ctx, FailParams{Lease: lease, LogTail: tail, Now: w.cfg.Clock.Store(),
		Error: JobError{Message: reason.Error(), Kind: "invalid_result"}})
	return err
}

// JobFailure is implemented by handler errors that describe themselves as
// a stored job error: a script runner's failure carries the script's own
// message, stack and kind.
type JobFailure interface {
	error
	JobError() JobError
}

// jobError describes a failed attempt: a timeout says so plainly, a panic
// keeps its stack.
func jobError(runCtx context.Context, err error) JobError {
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		return JobError{Message: context.Cause(runCtx).Error(), Kind: "timeout"}
	}
	if errors.Is(context.Cause(runCtx), ErrJobCanceled) {
		return JobError{Message: "canceled while running", Kind: "canceled"}
	}
	var p *handlerPanic
	if errors.As(err, &p) {
		return JobError{Message: p.Error(), Stack: p.stack, Kind: "panic"}
	}
	var f JobFailure
	if errors.As(err, &f) {
		return f.JobError()
	}
	if err == nil {
		err = context.Cause(runCtx)
	}
	return JobError{Message: err.Error()}
}

// writeWithRetry writes one job's outcome with retryWrite and logs how it
// ended.
func (w *Worker) writeWithRetry(id uuid.UUID, write func(ctx context.Context) error) {
	switch err := w.retryWrite(write); {
	case err == nil:
	case errors.Is(err, ErrNotOwner):
		w.log.Warn("job is owned by someone else now; outcome dropped", "job", id)
	case refused(err):
		w.log.Error("job outcome refused", "job", id, "err", err)
	default:
		w.log.Error("giving up writing job outcome; the reaper will requeue it", "job", id, "err", err)
	}
}

// retryWrite calls write until it succeeds, the database refuses it for a
// reason of its own (a typed error, returned at once), or WriteRetry has
// passed while the database was unreachable (the last error is returned).
func (w *Worker) retryWrite(write func(ctx context.Context) error) error {
	deadline := time.Now().Add(w.cfg.WriteRetry)
	delay := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := write(ctx)
		cancel()
		if err == nil || refused(err) || time.Now().After(deadline) {
			return err
		}
		w.log.Warn("writing job outcomes failed; retrying", "err", err)
		time.Sleep(delay) // backoff between retries, not waiting for an event
		delay = min(delay*2, 2*time.Second)
	}
}

// refused reports a typed answer from the store: retrying cannot change it.
func refused(err error) bool {
	return errors.Is(err, ErrNotOwner) || errors.Is(err, ErrConflict) ||
		errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound)
}
