package spine

import (
	"sync"

	"github.com/google/uuid"
)

// Completions fans job-completion notifications out to the waiters of each
// job (?wait, log follow, the console). Stores use it behind
// SubscribeCompletion: Postgres feeds it from LISTEN, SQLite from its own
// commits. Like Wakeups, sends never block: a waiter that has not drained
// its one-slot channel already has a wake-up pending.
type Completions struct {
	mu   sync.Mutex
	next int
	subs map[uuid.UUID]map[int]chan struct{}
}

// Subscribe registers interest in the completion of job id, or of every
// job when id is uuid.Nil (the live events stream wakes on any
// completion). The returned function ends the subscription; it may be
// called more than once.
func (c *Completions) Subscribe(id uuid.UUID) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		c.subs = map[uuid.UUID]map[int]chan struct{}{}
	}
	key := c.next
	c.next++
	ch := make(chan struct{}, 1)
	if c.subs[id] == nil {
		c.subs[id] = map[int]chan struct{}{}
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

// Notify wakes the waiters of each job in ids, and those of every job
// (uuid.Nil) once. A job nobody waits for costs one map lookup.
func (c *Completions) Notify(ids ...uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		for _, ch := range c.subs[id] {
			wake(ch)
		}
	}
	if len(ids) > 0 {
		for _, ch := range c.subs[uuid.Nil] {
			wake(ch)
		}
	}
}

// NotifyAll wakes every waiter (a listener reconnected and may have missed
// notifications): each re-reads its job.
func (c *Completions) NotifyAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, subs := range c.subs {
		for _, ch := range subs {
			wake(ch)
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

// wake sends on a one-slot channel unless a value is already pending.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
