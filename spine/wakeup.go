package spine

import "sync"

// Wakeups fans enqueue notifications out to subscribers by tag. Stores use
// it behind Subscribe: Postgres feeds it from LISTEN, SQLite from its own
// commits. Sends never block: a subscriber that has not drained its
// one-slot channel already has a wake-up pending.
type Wakeups struct {
	mu   sync.Mutex
	next int
	subs map[int]subscriber
}

type subscriber struct {
	tags map[string]bool
	ch   chan struct{}
}

// Subscribe registers interest in tags (all tags when empty).
func (w *Wakeups) Subscribe(tags []string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs = map[int]subscriber{}
	}
	id := w.next
	w.next++
	s := subscriber{tags: map[string]bool{}, ch: make(chan struct{}, 1)}
	for _, t := range tags {
		s.tags[t] = true
	}
	w.subs[id] = s
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.subs, id)
			w.mu.Unlock()
		})
	}
}

// Notify wakes the subscribers of tag.
func (w *Wakeups) Notify(tag string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.subs {
		if len(s.tags) > 0 && !s.tags[tag] {
			continue
		}
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
}

// NotifyAll wakes every subscriber (a listener reconnected and may have
// missed notifications).
func (w *Wakeups) NotifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.subs {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
}
