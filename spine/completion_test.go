package spine_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Completions wakes the waiters of the jobs it is told about (each once,
// however often told), all of them on NotifyAll, and none after they
// unsubscribed.
func TestCompletions(t *testing.T) {
	t.Parallel()
	var c spine.Completions
	a, b := uuid.New(), uuid.New()
	chA1, stopA1 := c.Subscribe(a)
	chA2, stopA2 := c.Subscribe(a)
	chB, stopB := c.Subscribe(b)
	defer stopB()
	pending := func(ch <-chan spine.Finished) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}

	c.Notify(a, a, uuid.New())
	if !pending(chA1) || !pending(chA2) || pending(chB) {
		t.Fatal("Notify(a) did not wake exactly a's waiters")
	}
	if pending(chA1) {
		t.Fatal("two notifications left two wake-ups in a one-slot channel")
	}
	stopA1()
	stopA1()
	if n := c.Waiting(); n != 2 {
		t.Fatalf("%d waiting after one unsubscribed, want 2", n)
	}
	c.NotifyAll()
	if pending(chA1) || !pending(chA2) || !pending(chB) {
		t.Fatal("NotifyAll did not wake exactly the subscribed waiters")
	}
	stopA2()
	if n := c.Waiting(); n != 1 {
		t.Fatalf("%d waiting, want 1", n)
	}
}

// A subscription to uuid.Nil is woken by the completion of any job, once
// per Notify, and not by a Notify of no job.
func TestCompletionsOfEveryJob(t *testing.T) {
	t.Parallel()
	var c spine.Completions
	any, stop := c.Subscribe(uuid.Nil)
	defer stop()
	c.Notify()
	select {
	case <-any:
		t.Fatal("a Notify of no job woke the every-job waiter")
	default:
	}
	c.Notify(uuid.New(), uuid.New())
	select {
	case <-any:
	default:
		t.Fatal("the completion of a job did not wake the every-job waiter")
	}
}

// A wake-up that carries an outcome replaces a pending hint, and a hint
// never replaces a pending outcome: a waiter that drains late still gets
// the outcome.
func TestCompletionsKeepTheOutcome(t *testing.T) {
	t.Parallel()
	var c spine.Completions
	id := uuid.New()
	ch, stop := c.Subscribe(id)
	defer stop()
	done := spine.Finished{ID: id, Status: spine.StatusSuccess, Result: []byte(`1`)}
	c.Notify(id)
	c.NotifyFinished(done)
	c.Notify(id)
	c.NotifyAll()
	select {
	case f := <-ch:
		if !f.Carries() || string(f.Result) != `1` {
			t.Fatalf("drained %+v, want the outcome", f)
		}
	default:
		t.Fatal("no wake-up pending")
	}
	select {
	case f := <-ch:
		t.Fatalf("a second wake-up %+v in a one-slot channel", f)
	default:
	}
	c.NotifyFinished(spine.Finished{ID: id})
	if f := <-ch; f.Carries() {
		t.Fatalf("a hint reads as an outcome: %+v", f)
	}
}
