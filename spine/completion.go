package spine

import (
	"encoding/json"
	"sync"

	"github.com/google/uuid"
)

// Finished is one completion wake-up: the job that finished and, when the
// store could carry it, the outcome of a success (Status StatusSuccess and
// its Result), so that a waiter answering ?wait needs no read of the job.
// A zero Status is a hint only: the waiter reads the job.
type Finished struct {
	ID     uuid.UUID
	Status Status
	// Result is the job's result as GetJob reads it (JSON; null for none).
	Result json.RawMessage
}

// Carries reports whether f holds the job's outcome, not just a hint.
func (f Finished) Carries() bool { return f.Status == StatusSuccess }

// Completions fans job-completion notifications out to the waiters of each
// job (?wait, log follow, the console). Stores use it behind
// SubscribeCompletion: Postgres feeds it from LISTEN, SQLite from its own
// commits. Like Wakeups, sends never block: each waiter has a one-slot
// channel, and a pending hint is replaced by an outcome (never the other
// way round), so a waiter that has not drained it loses nothing.
type Completions struct {
	mu   sync.Mutex
	next int
	subs map[uuid.UUID]map[int]chan Finished
}

// Subscribe registers interest in the completion of job id, or of every
// job when id is uuid.Nil (the live events stream wakes on any
// completion). The returned function ends the subscription; it may be
// called more than once.
func (c *Completions) Subscribe(id uuid.UUID) (<-chan Finished, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		c.subs = map[uuid.UUID]map[int]chan Finished{}
	}
	key := c.next
	c.next++
	ch := make(chan Finished, 1)
	if c.subs[id] == nil {
		c.subs[id] = map[int]chan Finished{}
	}
	c.subs[id][key] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			delete(c.subs[id], key)
			if len(c.subs[id]) == 0 {
				delete(c.subs, id)
			}
		})
	}
}

// Notify wakes the waiters of each job in ids with a hint, and those of
// every job (uuid.Nil) once. A job nobody waits for costs one map lookup.
func (c *Completions) Notify(ids ...uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.deliver(Finished{ID: id})
	}
	c.deliverAny(len(ids))
}

// NotifyFinished is Notify with what each job's notification carried: a
// waiter of a job whose outcome is in fs receives it.
func (c *Completions) NotifyFinished(fs ...Finished) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range fs {
		c.deliver(f)
	}
	c.deliverAny(len(fs))
}

// deliver hands f to the waiters of f.ID. Called with mu held.
func (c *Completions) deliver(f Finished) {
	for _, ch := range c.subs[f.ID] {
		offer(ch, f)
	}
}

// deliverAny wakes the waiters of every job once when n jobs finished.
// Called with mu held.
func (c *Completions) deliverAny(n int) {
	if n == 0 {
		return
	}
	for _, ch := range c.subs[uuid.Nil] {
		offer(ch, Finished{})
	}
}

// NotifyAll wakes every waiter (a listener reconnected and may have missed
// notifications): each re-reads its job.
func (c *Completions) NotifyAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, subs := range c.subs {
		for _, ch := range subs {
			offer(ch, Finished{ID: id})
		}
	}
}

// Waiting is how many subscriptions are open, for tests and metrics.
func (c *Completions) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, subs := range c.subs {
		n += len(subs)
	}
	return n
}

// offer puts f in the one-slot channel ch: into an empty slot, or in place
// of a pending hint when f carries an outcome. Only Completions sends, and
// always with mu held, so the slot cannot fill between the two steps.
func offer(ch chan Finished, f Finished) {
	select {
	case ch <- f:
		return
	default:
	}
	if !f.Carries() {
		return // what is pending already wakes the waiter
	}
	select {
	case pending := <-ch:
		if pending.Carries() {
			f = pending
		}
	default:
	}
	ch <- f
}
