package spine

import (
	"context"
	"errors"
	"sync"
)

// ErrAlreadyStarted is returned by Start on a service that is running.
var ErrAlreadyStarted = errors.New("service already started")

// lifecycle is the Start/Stop shared by every background service: Start
// launches run in a goroutine; Stop cancels it and waits; both are safe to
// call more than once and from several goroutines.
type lifecycle struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs run(ctx) in a goroutine until Stop or ctx is canceled.
func (l *lifecycle) start(ctx context.Context, run func(ctx context.Context)) error {
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

// stop cancels the running goroutine and waits for it. A stopped service may
// be started again.
func (l *lifecycle) stop() {
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
