package schedule_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/teststore"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// newStore is a migrated SQLite store whose catalog has hello/greet
// (input {"name": string} required).
func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := teststore.SQLite(t)
	if err := s.PutSource(t.Context(), catalog.Source{Workspace: "ws", ID: "main", URL: "file:///r.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: "ws", SourceID: "main", Commit: "cccccccccccccccccccccccccccccccccccccccc",
		Apps: []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
			Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet",
				InputSchema: json.RawMessage(`{"type":"object","required":["name"]}`)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchedulerLifecycle: Start twice is refused, Stop is idempotent and
// waits, and a stopped scheduler starts again.
func TestSchedulerLifecycle(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	passes := make(chan struct{}, 100)
	sch := &schedule.Scheduler{Store: s, Interval: time.Millisecond, OnPass: func(schedule.PassResult) {
		select {
		case passes <- struct{}{}:
		default:
		}
	}}
	for i := range 20 {
		if err := sch.Start(t.Context()); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if err := sch.Start(t.Context()); !errors.Is(err, spine.ErrAlreadyStarted) {
			t.Fatalf("second start: %v, want ErrAlreadyStarted", err)
		}
		<-passes // the first pass runs at once
		sch.Stop()
		sch.Stop()
	}
}

// TestSchedulerGoesOn: one schedule whose action is gone, one whose cron
// no longer parses, and a good one are due together. The good one fires;
// the gone one's tick advances without a job; the broken one is disabled.
// None stops the others.
func TestSchedulerGoesOn(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	mk := func(action, cron string) schedule.Schedule {
		sc, err := schedule.New(schedule.Schedule{Workspace: "ws", App: "hello", Action: action, Cron: "* * * * * *",
			Input: json.RawMessage(`{"name":"x"}`), Enabled: true}, now.Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		sc.Cron = cron // stored as if a later zone database or parser refused it
		if err := s.CreateSchedule(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	gone := mk("vanished", "* * * * * *")
	broken := mk("greet", "not a cron")
	good := mk("greet", "* * * * * *")

	var mu sync.Mutex
	var result schedule.PassResult
	done := make(chan struct{})
	var once sync.Once
	sch := &schedule.Scheduler{Store: s, Interval: time.Hour, Clock: func() time.Time { return now },
		OnPass: func(r schedule.PassResult) {
			mu.Lock()
			result = r
			mu.Unlock()
			once.Do(func() { close(done) })
		}}
	if err := sch.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-done
	sch.Stop()
	mu.Lock()
	defer mu.Unlock()
	if result.Due != 3 || result.Errors != 2 || len(result.Fired) != 2 {
		t.Fatalf("pass = %+v; want 3 due, 2 errors, 2 fired (good and gone)", result)
	}
	jobs := map[uuid.UUID]uuid.UUID{}
	for _, f := range result.Fired {
		jobs[f.Schedule] = f.Job
	}
	if jobs[good.ID] == uuid.Nil || jobs[gone.ID] != uuid.Nil {
		t.Fatalf("fired %+v; want a job for the good schedule only", result.Fired)
	}
	for _, c := range []struct {
		sc       schedule.Schedule
		enabled  bool
		nextTick time.Time
	}{{good, true, now.Add(time.Second)}, {gone, true, now.Add(time.Second)}, {broken, false, now}} {
		got, err := s.GetSchedule(t.Context(), "ws", c.sc.ID)
		if err != nil || got.Enabled != c.enabled || !got.NextRunAt.Equal(c.nextTick) {
			t.Fatalf("schedule %s (%s): %+v, %v; want enabled=%t next %s", c.sc.ID, c.sc.Action, got, err, c.enabled, c.nextTick)
		}
	}
}
