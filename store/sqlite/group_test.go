package sqlite

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// heldWriter starts a write transaction that holds the writer until the
// returned release is called, and returns once it runs, so transactions
// submitted meanwhile queue behind it.
func heldWriter(t *testing.T, s *Driver) (release func(), done <-chan error) {
	t.Helper()
	running, hold, out := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		out <- s.write(context.Background(), func(*writeTx) error {
			close(running)
			<-hold
			return nil
		})
	}()
	<-running
	return func() { close(hold) }, out
}

// enqueueGo is enqueue for another goroutine: the error is returned.
func enqueueGo(s *Driver, p spine.EnqueueParams) (uuid.UUID, error) {
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		return uuid.Nil, err
	}
	res, _, err := s.Executor().EnqueueInsert(context.Background(), p, true)
	return res.ID, err
}

// awaitQueued waits until n transactions wait for the writer.
func awaitQueued(t *testing.T, s *Driver, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.group.mu.Lock()
		queued := len(s.group.queue)
		s.group.mu.Unlock()
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions queued after 10s, want %d", queued, n)
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline
	}
}

// TestGroupCommit: transactions that queue while the writer is busy share
// one commit, each is answered after it, and each one's wake-up is sent.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var commits atomic.Int64
	s.onCommit = func(bool) { commits.Add(1) }
	wake, stop := s.Subscribe([]string{"g"})
	defer stop()
	release, held := heldWriter(t, s)
	const n = 10
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { ids[i], errs[i] = enqueueGo(s, job("g")) })
	}
	awaitQueued(t, s, n)
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := commits.Load(); got != 2 {
		t.Fatalf("%d commits for the held transaction and %d queued ones, want 2", got, n)
	}
	for _, id := range ids {
		if _, err := s.Executor().GetJob(context.Background(), "ws", id); err != nil {
			t.Fatalf("job %s of the shared commit: %v", id, err)
		}
	}
	if !woken(wake) {
		t.Fatal("no wake-up after the shared commit")
	}
}

// TestGroupMemberFailureIsItsOwn: in a shared commit, a transaction that
// fails or panics after writing has its writes undone and its wake-ups
// dropped; the others commit; the panic reaches its own caller.
func TestGroupMemberFailureIsItsOwn(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	var commits atomic.Int64
	s.onCommit = func(bool) { commits.Add(1) }
	bad, stopBad := s.Subscribe([]string{"bad"})
	defer stopBad()
	release, held := heldWriter(t, s)
	insertThen := func(id *uuid.UUID, then func() error) error {
		p, err := spine.PrepareEnqueue(job("bad"), time.Time{})
		if err != nil {
			return err
		}
		*id = p.ID
		return s.write(ctx, func(w *writeTx) error {
			if _, err := w.insertJob(ctx, p); err != nil {
				return err
			}
			w.wake("bad")
			return then()
		})
	}
	refused := errors.New("refused")
	var failedID, panickedID, goodID uuid.UUID
	var failErr, goodErr error
	var recovered any
	var wg sync.WaitGroup
	wg.Go(func() { failErr = insertThen(&failedID, func() error { return refused }) })
	wg.Go(func() {
		defer func() { recovered = recover() }()
		_ = insertThen(&panickedID, func() error { panic("boom") })
	})
	wg.Go(func() { goodID, goodErr = enqueueGo(s, job("good")) })
	awaitQueued(t, s, 3)
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if goodErr != nil {
		t.Fatal(goodErr)
	}
	if !errors.Is(failErr, refused) {
		t.Fatalf("failing member: %v, want its own error", failErr)
	}
	if recovered != "boom" {
		t.Fatalf("panicking member's caller recovered %v, want boom", recovered)
	}
	if _, err := s.Executor().GetJob(ctx, "ws", goodID); err != nil {
		t.Fatalf("the good member's job: %v", err)
	}
	for _, id := range []uuid.UUID{failedID, panickedID} {
		if id == uuid.Nil {
			t.Fatal("a member did not run")
		}
		if _, err := s.Executor().GetJob(ctx, "ws", id); !errors.Is(err, spine.ErrNotFound) {
			t.Fatalf("job %s of a failed member: %v, want not found", id, err)
		}
	}
	if woken(bad) {
		t.Fatal("a failed member's wake-up was sent")
	}
	if got := commits.Load(); got != 2 {
		t.Fatalf("%d commits, want 2 (the held one, the shared one)", got)
	}
}

// TestGroupCanceledWaiterWritesNothing: a transaction whose context ends
// while it waits for the writer is not run.
func TestGroupCanceledWaiterWritesNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	release, held := heldWriter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan bool, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- s.write(ctx, func(*writeTx) error { ran <- true; return nil })
	}()
	awaitQueued(t, s, 1)
	cancel()
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled waiter: %v, want context.Canceled", err)
	}
	select {
	case <-ran:
		t.Fatal("a canceled waiter's transaction ran")
	default:
	}
}

// TestGroupUnsyncedCommitFirst: unsynced claims queued with a synced
// enqueue share a commit of their own, unsynced and before the enqueue's
// (so a claim never waits for another's fsync); unsynced ones alone
// share one unsynced commit.
func TestGroupUnsyncedCommitFirst(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	var mu sync.Mutex
	var commits []bool
	s.onCommit = func(synced bool) { mu.Lock(); commits = append(commits, synced); mu.Unlock() }
	for _, withSynced := range []bool{true, false} {
		release, held := heldWriter(t, s)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { _ = s.writeUnsynced(ctx, func(*writeTx) error { return nil }) })
		}
		queued := 2
		if withSynced {
			wg.Go(func() { _, _ = enqueueGo(s, job("s")) })
			queued++
		}
		awaitQueued(t, s, queued)
		release()
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	want := []bool{true, false, true, true, false}
	if len(commits) != len(want) {
		t.Fatalf("commits synced %v, want %v", commits, want)
	}
	for i := range want {
		if commits[i] != want[i] {
			t.Fatalf("commits synced %v, want %v (held, the claims', the enqueue's, held, the claims')", commits, want)
		}
	}
	if got := pragma(t, s.DB(), "synchronous"); got != "2" {
		t.Fatalf("writer's synchronous after the unsynced commit: %s, want 2 (FULL)", got)
	}
}
