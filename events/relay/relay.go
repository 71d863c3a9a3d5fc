package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/spine"
)

// Store is what the relay needs of the database; the store core (package
// store) implements it on both databases.
type Store interface {
	// FanOut makes the deliveries of up to limit outbox events and says
	// how many events it passed.
	FanOut(ctx context.Context, now time.Time, limit int) (int, error)
	// ListSinks lists the sinks of a workspace ("" for all).
	ListSinks(ctx context.Context, workspace string) ([]sink.Sink, error)
	// ClaimDeliveries leases up to limit due deliveries of one sink.
	ClaimDeliveries(ctx context.Context, workspace, sinkID string, now time.Time, lease uuid.UUID, leaseFor time.Duration, limit int) ([]sink.Claimed, error)
	// SettleDelivery ends an attempt: delivered, retried or failed.
	SettleDelivery(ctx context.Context, c sink.Claimed, lease uuid.UUID, now time.Time, sendErr error) (sink.Status, error)
	// RetryDeliveriesNow makes a sink's backed-off deliveries due now.
	RetryDeliveriesNow(ctx context.Context, workspace, sinkID string, now time.Time) error
	// Subscribe and SubscribeCompletion wake the relay when jobs are
	// enqueued or finish (their events are written then).
	Subscribe(tags []string) (<-chan struct{}, func())
	SubscribeCompletion(id uuid.UUID) (<-chan spine.Finished, func())
}

// Defaults of Relay.
const (
	DefaultPoll        = time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultConcurrency = 16
	DefaultBatch       = 500
	// minPassGap is the least time between two passes' starts.
	minPassGap = 50 * time.Millisecond
	// leaseMargin is how much longer a claim's lease lasts than one send
	// may take, so a live relay settles before anyone else may claim.
	leaseMargin = 5 * time.Second
)

// Relay fans out the outbox and runs one worker per enabled sink. Start
// and Stop as every background service (spine.Lifecycle).
type Relay struct {
	Store Store
	// Poll is the backstop pass interval: events written by a change that
	// wakes nobody here (a claim, a sync, another server) are seen within
	// it. Default 1 s.
	Poll time.Duration
	// Timeout bounds one send (webhook request, NATS publish and ack).
	// Default 10 s.
	Timeout time.Duration
	// Concurrency is the sends one sink has in flight at once in this
	// process. Default 16.
	Concurrency int
	// Batch is the events one fan-out pass reads. Default 500.
	Batch int
	// Clock is the relay's time (spine.Clock); nil is the database's.
	Clock  spine.Clock
	Logger *slog.Logger
	// OnSettle, when set, is called after each settled attempt (tests).
	OnSettle func(c sink.Claimed, status sink.Status, err error)

	life spine.Lifecycle
	wake chan struct{}

	mu      sync.Mutex
	workers map[sinkKey]*worker
	// stopping counts the workers of removed sinks still stopping, which
	// Stop waits for too.
	stopping sync.WaitGroup
}

// sinkKey names one sink.
type sinkKey struct{ workspace, id string }

// Start runs the relay until Stop or ctx ends.
func (r *Relay) Start(ctx context.Context) error {
	if r.Poll <= 0 {
		r.Poll = DefaultPoll
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.Concurrency <= 0 {
		r.Concurrency = DefaultConcurrency
	}
	if r.Batch <= 0 {
		r.Batch = DefaultBatch
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	r.wake = make(chan struct{}, 1)
	return r.life.Start(ctx, r.run)
}

// Stop ends the relay and waits for its workers; sends in flight are
// canceled and their deliveries stay pending (their leases run out).
func (r *Relay) Stop() { r.life.Stop() }

// Wake asks for a pass now (a caller that wrote events the relay's
// subscriptions do not see).
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Relay) run(ctx context.Context) {
	enqueued, unsubscribe := r.Store.Subscribe(nil)
	defer unsubscribe()
	finished, unsubscribeDone := r.Store.SubscribeCompletion(uuid.Nil)
	defer unsubscribeDone()
	defer r.stopWorkers()
	tick := time.NewTicker(r.Poll)
	defer tick.Stop()
	for {
		last := time.Now()
		jobs, done := queueWakeups(r.pass(ctx), enqueued, finished)
		select {
		case <-ctx.Done():
			return
		case <-jobs:
		case <-done:
		case <-r.wake:
		case <-tick.C:
		}
		// A busy queue wakes the relay at every enqueue and completion:
		// one pass per minPassGap at most gathers them, so the fan-out
		// costs the queue a write every minPassGap, not one per job.
		if wait := minPassGap - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// queueWakeups are the queue's wake-ups the relay waits on after a pass:
// none when the pass found nothing to relay. With no sink anywhere no job
// writes an event, and a busy queue's wake-ups would cost the database a
// pass every minPassGap for nothing; the poll finds the first sink added.
func queueWakeups(active bool, enqueued <-chan struct{}, finished <-chan spine.Finished) (<-chan struct{}, <-chan spine.Finished) {
	if !active {
		return nil, nil
	}
	return enqueued, finished
}

// pass fans out until caught up, then brings the workers in line with the
// sinks and nudges each to claim. It reports whether there is anything to
// relay: a sink (enabled or not, a workspace with one records events), or
// events it fanned out; a failed read counts as something.
func (r *Relay) pass(ctx context.Context) bool {
	fanned := false
	for ctx.Err() == nil {
		n, err := r.Store.FanOut(ctx, r.Clock.Store(), r.Batch)
		if err != nil {
			if ctx.Err() == nil {
				r.Logger.Warn("relay: fan-out pass failed", "err", err)
			}
			fanned = true // try again at the next wake-up
			break
		}
		fanned = fanned || n > 0
		if n < r.Batch {
			break
		}
	}
	sinks, err := r.Store.ListSinks(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			r.Logger.Warn("relay: list sinks failed", "err", err)
		}
		return true
	}
	r.syncWorkers(ctx, sinks)
	return fanned || len(sinks) > 0
}

// syncWorkers starts a worker for each enabled sink, hands each its
// sink as now stored (a changed URL or secret takes effect at its next
// send), nudges it, and stops the workers of sinks gone or disabled.
func (r *Relay) syncWorkers(ctx context.Context, sinks []sink.Sink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.workers == nil {
		r.workers = map[sinkKey]*worker{}
	}
	live := map[sinkKey]bool{}
	for _, sk := range sinks {
		if !sk.Enabled {
			continue
		}
		k := sinkKey{sk.Workspace, sk.ID}
		live[k] = true
		w := r.workers[k]
		if w == nil {
			w = newWorker(r, sk)
			r.workers[k] = w
			w.start(ctx)
		}
		w.update(sk)
		w.nudge()
	}
	for k, w := range r.workers {
		if !live[k] {
			delete(r.workers, k)
			r.stopping.Add(1)
			go func() {
				defer r.stopping.Done()
				w.stop() // its sends in flight end at their timeout at most
			}()
		}
	}
}

func (r *Relay) stopWorkers() {
	r.mu.Lock()
	ws := r.workers
	r.workers = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.stop()
		}()
	}
	wg.Wait()
	r.stopping.Wait()
}
