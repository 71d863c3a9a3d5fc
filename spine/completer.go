package spine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Completer tuning: a batch is written when this many outcomes are
// pending, or completerWait after the first of them arrived, whichever
// comes first — or at once when no other job of the worker is running,
// since then nothing could join the batch and waiting would only delay
// the answer to a ?wait. completerBacklog bounds what may wait: past it, a finishing
// job's goroutine waits (keeping its slot) until the batch ahead is written.
const (
	completerMaxBatch = 500
	completerWait     = 2 * time.Millisecond
	completerBacklog  = 2 * completerMaxBatch
)

// completer writes a worker's outcomes in batches: successes with one
// CompleteBatch and failed attempts with one FailBatch (one commit each for
// many jobs), each still fenced on its own claim token. A job hands its
// outcome over and frees its slot at once; until the batch is written its
// lease stays in the heartbeat, so a slow write never makes a live job look
// dead.
type completer struct {
	w  *Worker
	in chan outcome

	mu      sync.Mutex
	pending map[Lease]struct{}

	done chan struct{}
}

// outcome is one job's result waiting in the completer: a success, or a
// failed attempt when failure is set.
type outcome struct {
	CompleteParams
	failure *JobError
}

func newCompleter(w *Worker) *completer {
	c := &completer{
		w: w, in: make(chan outcome, completerBacklog),
		pending: map[Lease]struct{}{}, done: make(chan struct{}),
	}
	go c.run()
	return c
}

// submit hands an outcome over; it waits only when the backlog is full.
func (c *completer) submit(o outcome) {
	c.mu.Lock()
	c.pending[o.Lease] = struct{}{}
	c.mu.Unlock()
	c.in <- o
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
		batch := []outcome{first}
		timer.Reset(c.w.cfg.BatchWindow)
		open := true
	collect:
		for open && len(batch) < completerMaxBatch && !c.alone() {
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

// alone reports whether no outcome could join the batch in its window:
// none is queued and no job of the worker is still in its handler (a job
// leaves that count before it submits its outcome).
func (c *completer) alone() bool {
	return len(c.in) == 0 && c.w.handling.Load() == 0
}

// flush writes one batch: its successes, then its failures.
func (c *completer) flush(batch []outcome) {
	defer c.forget(batch)
	var done []CompleteParams
	var failed []FailParams
	for _, o := range batch {
		if o.failure != nil {
			failed = append(failed, FailParams{Lease: o.Lease, Error: *o.failure, LogTail: o.LogTail, Now: o.Now})
		} else {
			done = append(done, o.CompleteParams)
		}
	}
	if len(done) > 0 {
		c.flushCompletions(done)
	}
	if len(failed) > 0 {
		c.flushFailures(failed)
	}
}

// flushCompletions writes the successes of a batch. While the database is
// unreachable the whole batch is retried with backoff, up to the worker's
// WriteRetry in all (the reaper requeues the jobs of a batch that could
// not be written). A batch the database refuses for a reason of its own (a
// typed error) is written one job at a time, so one bad job cannot hold
// back the others.
func (c *completer) flushCompletions(batch []CompleteParams) {
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

// flushFailures writes the failed attempts of a batch, retried and
// refused as flushCompletions does.
func (c *completer) flushFailures(batch []FailParams) {
	var outs []FailBatchOutcome
	err := c.w.retryWrite(func(ctx context.Context) error {
		var err error
		outs, err = c.w.cfg.Store.FailBatch(ctx, batch)
		return err
	})
	switch {
	case err == nil:
		for _, out := range outs {
			if out.Err != nil {
				c.dropped(out.JobID, out.Err)
			}
		}
	case refused(err):
		c.w.log.Warn("batch of failures refused; writing them one by one", "jobs", len(batch), "err", err)
		for _, p := range batch {
			c.w.writeWithRetry(p.JobID, func(ctx context.Context) error {
				_, err := c.w.cfg.Store.Fail(ctx, p)
				return err
			})
		}
	default:
		c.w.log.Error("giving up writing a batch of failures; the reaper will requeue its jobs",
			"jobs", len(batch), "err", err)
	}
}

// report handles the jobs of a written batch that were not completed.
func (c *completer) report(batch []CompleteParams, outs []CompleteOutcome) {
	for i, out := range outs {
		if errors.Is(out.Err, ErrInvalid) {
			p := batch[i]
			c.w.writeWithRetry(p.JobID, func(ctx context.Context) error { return c.w.failInvalid(ctx, p.Lease, p.LogTail, out.Err) })
		} else if out.Err != nil {
			c.dropped(out.JobID, out.Err)
		}
	}
}

// dropped logs a job whose outcome a written batch did not record.
func (c *completer) dropped(id uuid.UUID, err error) {
	if errors.Is(err, ErrNotOwner) {
		c.w.log.Warn("job is owned by someone else now; outcome dropped", "job", id)
		return
	}
	c.w.log.Error("job outcome refused", "job", id, "err", err)
}

func (c *completer) forget(batch []outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range batch {
		delete(c.pending, p.Lease)
	}
}
