package spine

import (
	"testing"
	"time"
)

func TestRetryDelayIsExponentialWithBoundedJitter(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 4, Backoff: 5 * time.Second, Factor: 5}
	for attempt, base := range map[int]time.Duration{1: 5 * time.Second, 2: 25 * time.Second, 3: 125 * time.Second} {
		lo, hi := RetryDelayRange(p, attempt)
		if want := time.Duration(float64(base) * (1 - JitterFraction)); lo != want {
			t.Errorf("attempt %d: low end %v, want %v", attempt, lo, want)
		}
		if want := time.Duration(float64(base) * (1 + JitterFraction)); hi != want {
			t.Errorf("attempt %d: high end %v, want %v", attempt, hi, want)
		}
		if mid := RetryDelay(p, attempt, 0.5); mid != base {
			t.Errorf("attempt %d: no-jitter delay %v, want %v", attempt, mid, base)
		}
	}
	if d := RetryDelay(RetryPolicy{Backoff: time.Hour, Factor: 1000}, 50, 0.5); d != maxBackoff {
		t.Errorf("huge delay %v, want the cap %v", d, maxBackoff)
	}
}

func TestNextRetryStopsAtMaxAttempts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := RetryPolicy{MaxAttempts: 3, Backoff: time.Second, Factor: 2}
	for attempt := 1; attempt <= 2; attempt++ {
		at, ok := NextRetry(p, attempt, now)
		lo, hi := RetryDelayRange(p, attempt)
		if !ok || at.Before(now.Add(lo)) || at.After(now.Add(hi)) {
			t.Fatalf("attempt %d: retry at %v (ok=%v), want within [%v, %v]", attempt, at, ok, lo, hi)
		}
	}
	if _, ok := NextRetry(p, 3, now); ok {
		t.Fatal("attempt 3 of 3 retried")
	}
	if _, ok := NextRetry(RetryPolicy{}, 1, now); ok {
		t.Fatal("the default policy (one attempt) retried")
	}
}

func TestPrepareEnqueueRefusesBadInput(t *testing.T) {
	t.Parallel()
	good := EnqueueParams{Workspace: "w", TriggerKind: TriggerAPI, Pin: Pin{AppKey: "a", ActionKey: "b"}}
	now := time.Now()
	p, err := PrepareEnqueue(good, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pin.Tag != DefaultTag || p.Pin.Retry.MaxAttempts != 1 || string(p.Input) != "null" || p.ScheduledFor != now {
		t.Fatalf("defaults not filled: %+v", p)
	}
	bad := map[string]func(*EnqueueParams){
		"workspace": func(p *EnqueueParams) { p.Workspace = "" },
		"trigger":   func(p *EnqueueParams) { p.TriggerKind = "carrier-pigeon" },
		"json":      func(p *EnqueueParams) { p.Input = []byte(`{"a":`) },
		"nul":       func(p *EnqueueParams) { p.Input = []byte(`{"a":"x\u0000y"}`) },
		"utf8":      func(p *EnqueueParams) { p.Input = []byte("\"\xff\"") },
		"action":    func(p *EnqueueParams) { p.Pin.ActionKey = "" },
	}
	for name, mutate := range bad {
		p := good
		mutate(&p)
		if _, err := PrepareEnqueue(p, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWakeupsDeliverByTagWithoutBlocking(t *testing.T) {
	t.Parallel()
	var w Wakeups
	a, stopA := w.Subscribe([]string{"a"})
	all, stopAll := w.Subscribe(nil)
	defer stopAll()
	for range 3 { // repeated sends never block on a full channel
		w.Notify("a")
	}
	w.Notify("b")
	select {
	case <-a:
	default:
		t.Fatal("subscriber to a was not woken")
	}
	select {
	case <-a:
		t.Fatal("subscriber to a got a second wake-up for b")
	default:
	}
	select {
	case <-all:
	default:
		t.Fatal("subscriber to all tags was not woken")
	}
	stopA()
	stopA() // idempotent
	w.NotifyAll()
	select {
	case <-a:
		t.Fatal("unsubscribed channel was woken")
	default:
	}
}
