package spine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Completer tuning: a batch is written when this many successes are
// pending, or completerWait after the first of them arrived, whichever
// comes first. completerBacklog bounds what may wait: past it, a finishing
// job's goroutine waits (keeping its slot) until the batch ahead is written.
const (
	completerMaxBatch = 500
	completerWait     = 2 * time.Millisecond
	completerBacklog  = 2 * completerMaxBatch
)

// completer writes a worker's successful completions in batches (one
// CompleteBatch, so one commit, for many jobs), each still fenced on its
// own claim token. A job hands its completion over and frees its slot at
// once; until the batch is written its lease stays in the heartbeat, so a
// slow write never makes a live job look dead.
type completer struct {
	w  *Worker
	in chan CompleteParams

	mu      sync.Mutex
	pending map[Lease]struct{}

	done chan struct{}
}

func newCompleter(w *Worker) *completer {
	c := &completer{
		w: w, in: make(chan CompleteParams, completerBacklog),
		pending: map[Lease]struct{}{}, done: make(chan struct{}),
	}
	go c.run()
	return c
}

// submit hands a success over; it waits only when the backlog is full.
func (c *completer) submit(p CompleteParams) {
	c.mu.Lock()
	c.pending[p.Lease] = struct{}{}
	c.mu.Unlock()
	c.in <- p
}

// close writes what is pending and waits for it. No submit may follow.
func (c *completer) close() {
	close(c.in)
	<-c.done
}

// leases returns the leases whose completion is not written yet, for the
// heartbeat.
func (c *completer) leases() []Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Lease, 0, len(c.pending))
	for l := range c.pending {
		out = append(out, l)
	}
	return out
}

// run collects batches until the input is closed and drained.
func (c *completer) run() {
	defer close(c.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		first, ok := <-c.in
		if !ok {
			return
		}
		batch := []CompleteParams{first}
		timer.Reset(completerWait)
		open := true
	collect:
		for open && len(batch) < completerMaxBatch {
			select {
			case p, ok := <-c.in:
				if !ok {
					open = false
					break collect
				}
				batch = append(batch, p)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		c.flush(batch)
		if !open {
			return
		}
	}
}

// flush writes one batch. While the database is unreachable the whole
// batch is retried with backoff, up to the worker's WriteRetry in all (the
// reaper requeues the jobs of a batch that could not be written). A batch
// the database refuses for a reason of its own (a typed error) is written
// one job at a time, so one bad job cannot hold back the others.
func (c *completer) flush(batch []CompleteParams) {
	defer c.forget(batch)
	var outs []CompleteOutcome
	err := c.w.retryWrite(func(ctx context.Context) error {
		var err error
		outs, err = c.w.cfg.Store.CompleteBatch(ctx, batch)
		return err
	})
	switch {
	case err == nil:
		c.report(batch, outs)
	case refused(err):
		c.w.log.Warn("batch completion refused; completing one by one", "jobs", len(batch), "err", err)
		for _, p := range batch {
			c.w.writeWithRetry(p.JobID, func(ctx context.Context) error { return c.w.completeOne(ctx, p) })
		}
	default:
		c.w.log.Error("giving up writing a batch of completions; the reaper will requeue its jobs",
			"jobs", len(batch), "err", err)
	}
}

// report handles the jobs of a written batch that were not completed.
func (c *completer) report(batch []CompleteParams, outs []CompleteOutcome) {
	for i, out := range outs {
		switch {
		case out.Err == nil:
		case errors.Is(out.Err, ErrNotOwner):
			c.w.log.Warn("job is owned by someone else now; outcome dropped", "job", out.JobID)
		case errors.Is(out.Err, ErrInvalid):
			p := batch[i]
			c.w.writeWithRetry(p.JobID, func(ctx context.Context) error { return c.w.failInvalid(ctx, p.Lease, out.Err) })
		default:
			c.w.log.Error("job outcome refused", "job", out.JobID, "err", out.Err)
		}
	}
}

func (c *completer) forget(batch []CompleteParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range batch {
		delete(c.pending, p.Lease)
	}
}
