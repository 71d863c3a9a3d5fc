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

// startDispatched starts the jobs enqueues dispatched to this worker. A
// lease the worker has no free slot for (the database counted a slot
// that is not free here yet), or that arrives while it stops, goes back
// to the queue at once.
func (w *Worker) startDispatched(ctx context.Context, jobs *sync.WaitGroup, leases []Lease) {
	var back []Lease
	for _, l := range leases {
		if ctx.Err() != nil || w.active() >= w.cfg.Concurrency {
			back = append(back, l)
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
	owned, err := w.cfg.Store.Withdraw(wctx, w.cfg.Name)
	cancel()
	if err != nil {
		w.log.Warn("withdrawing the dispatch offer failed; it lapses by itself", "err", err)
		return
	}
	_, known := w.held()
	var unknown []Lease
	for _, l := range owned {
		if !known[l] {
			unknown = append(unknown, l)
		}
	}
	if len(unknown) > 0 {
		w.log.Info("releasing dispatched jobs not started before the stop", "jobs", len(unknown))
		w.releaseLeases(unknown)
	}
}
