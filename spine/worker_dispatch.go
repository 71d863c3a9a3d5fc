package spine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// offerSpan is how many poll intervals a worker's offer lasts: an idle
// worker claims at every poll, which renews it, so only a worker that
// died (or stopped polling) lets it lapse, and jobs dispatched to a dead
// worker are those of a few polls at most.
const offerSpan = 3

// takeDispatched starts what the inbox holds. When dispatches may have
// been missed (the listener reconnected) it also adopts the running jobs
// the database says the worker owns that it never heard of; if that read
// fails they are released at the stop, or reaped.
func (w *Worker) takeDispatched(ctx context.Context, jobs *sync.WaitGroup, inbox *Inbox) {
	dispatched, missed := inbox.Take()
	if missed {
		owned, err := w.owned(ctx)
		if err != nil {
			w.log.Warn("reading the jobs dispatched while the listener was away failed", "err", err)
		}
		taken := make([]Lease, len(dispatched))
		for i, d := range dispatched {
			taken[i] = d.Lease
		}
		if unheard := w.unheard(owned, taken); len(unheard) > 0 {
			w.log.Info("adopting jobs dispatched while the listener was away", "jobs", len(unheard))
			inbox.Adopt(unheard)
			for _, l := range unheard {
				dispatched = append(dispatched, Dispatch{Lease: l})
			}
		}
	}
	w.startDispatched(ctx, jobs, dispatched)
}

// startDispatched starts the jobs enqueues dispatched to this worker,
// reading those that came without their job. A lease the worker has no
// free slot for (the database counted a slot that is not free here yet),
// or that arrives while it stops, goes back to the queue at once.
func (w *Worker) startDispatched(ctx context.Context, jobs *sync.WaitGroup, dispatched []Dispatch) {
	var back []Lease
	for _, d := range dispatched {
		l := d.Lease
		if ctx.Err() != nil || w.active() >= w.cfg.Concurrency {
			back = append(back, l)
			continue
		}
		if d.Job != nil {
			w.launch(ctx, jobs, d.Job)
			continue
		}
		w.start(ctx, jobs, l, func(ctx context.Context) (*ClaimedJob, error) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			job, err := w.cfg.Store.ReadDispatched(rctx, w.cfg.Name, l)
			return &job, err
		})
	}
	if len(back) > 0 {
		w.log.Info("dispatched jobs beyond the free slots; released", "jobs", len(back))
		w.releaseLeases(back)
	}
}

// dropDispatched ends a dispatched job that could not be read: one no
// longer owned (canceled while its notification travelled) needs
// nothing; one that is still owned goes back to the queue.
func (w *Worker) dropDispatched(l Lease, err error) {
	if errors.Is(err, ErrNotOwner) {
		w.log.Debug("dispatched job no longer owned", "job", l.JobID)
		return
	}
	w.log.Warn("reading a dispatched job failed; releasing it", "job", l.JobID, "err", err)
	w.releaseLeases([]Lease{l})
}

// withdraw ends the worker's offer when it stops claiming and releases
// the jobs the database says it owns that it never started: dispatches
// whose notification had not arrived. If the database cannot be reached
// the offer lapses by itself and such jobs are reaped.
func (w *Worker) withdraw(ctx context.Context) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err := w.cfg.Store.Withdraw(wctx, w.cfg.Name)
	cancel()
	if err != nil {
		w.log.Warn("withdrawing the dispatch offer failed; it lapses by itself", "err", err)
		return
	}
	owned, err := w.owned(ctx)
	if err != nil {
		w.log.Warn("reading the jobs dispatched before the stop failed; they are reaped", "err", err)
		return
	}
	if unheard := w.unheard(owned, nil); len(unheard) > 0 {
		w.log.Info("releasing dispatched jobs not started before the stop", "jobs", len(unheard))
		w.releaseLeases(unheard)
	}
}

// owned reads the leases the database says the worker owns. Not canceled
// by Stop: the stop needs it.
func (w *Worker) owned(ctx context.Context) ([]Lease, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return w.cfg.Store.Owned(rctx, w.cfg.Name)
}

// unheard returns the leases of owned that the worker neither holds nor
// is about to start (taken from its inbox).
func (w *Worker) unheard(owned, taken []Lease) []Lease {
	_, known := w.held()
	for _, l := range taken {
		known[l] = true
	}
	var out []Lease
	for _, l := range owned {
		if !known[l] {
			out = append(out, l)
		}
	}
	return out
}
