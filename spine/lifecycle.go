package spine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrAlreadyStarted is returned by Start on a service that is running.
var ErrAlreadyStarted = errors.New("service already started")

// Lifecycle is the Start/Stop shared by every background service (the
// worker, reaper, sweeper, and the scheduler of package schedule): Start
// launches run in a goroutine; Stop cancels it and waits; both are safe to
// call more than once and from several goroutines. The zero value is ready.
type Lifecycle struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs run(ctx) in a goroutine until Stop or ctx is canceled;
// ErrAlreadyStarted while it runs.
func (l *Lifecycle) Start(ctx context.Context, run func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return ErrAlreadyStarted
	}
	ctx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	l.done = make(chan struct{})
	done := l.done
	go func() {
		defer close(done)
		run(ctx)
	}()
	return nil
}

// StartEvery is Start with a periodic run: fn now, then every interval,
// until Stop or ctx is canceled.
func (l *Lifecycle) StartEvery(ctx context.Context, interval time.Duration, fn func(context.Context)) error {
	return l.Start(ctx, func(ctx context.Context) { every(ctx, interval, fn) })
}

// Stop cancels the running goroutine and waits for it. A stopped service may
// be started again.
func (l *Lifecycle) Stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
	l.mu.Lock()
	if l.done == done {
		l.cancel, l.done = nil, nil
	}
	l.mu.Unlock()
}
