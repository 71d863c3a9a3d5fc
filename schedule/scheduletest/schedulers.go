package scheduletest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// Clock is a fake clock the test moves by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// passLog collects what the schedulers' passes did and lets a test wait
// until each has finished a pass at a given clock reading.
type passLog struct {
	mu      sync.Mutex
	changed *sync.Cond
	// latest is, per scheduler, the latest clock reading of a finished pass.
	latest []time.Time
	fired  []schedule.Fired
	errs   int
}

func newPassLog(n int) *passLog {
	l := &passLog{latest: make([]time.Time, n)}
	l.changed = sync.NewCond(&l.mu)
	return l
}

func (l *passLog) record(i int, r schedule.PassResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Now.After(l.latest[i]) {
		l.latest[i] = r.Now
	}
	l.fired = append(l.fired, r.Fired...)
	l.errs += r.Errors
	l.changed.Broadcast()
}

// waitAll waits until every scheduler has finished a pass that read at
// least t, or fails the test after a deadline.
func (l *passLog) waitAll(t *testing.T, at time.Time) {
	t.Helper()
	deadline := time.AfterFunc(20*time.Second, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.changed.Broadcast()
	})
	defer deadline.Stop()
	start := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.allAt(at) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("schedulers did not finish a pass at %s (latest %v)", at, l.latest)
		}
		l.changed.Wait()
	}
}

func (l *passLog) allAt(at time.Time) bool {
	for _, t := range l.latest {
		if t.Before(at) {
			return false
		}
	}
	return true
}

// CheckTwoSchedulers runs two Schedulers over s on one fake clock and
// checks, for sc (an enabled every-second schedule, stored, that has not
// fired yet), that each tick makes exactly one job whichever server wins
// it, and that a span of ten ticks missed while no server ran makes one
// job, not ten. Every job is checked to be sc's, and no other job appears
// in sc's workspace.
func CheckTwoSchedulers(t *testing.T, s interface {
	schedule.Store
	spine.Store
}, sc schedule.Schedule) {
	t.Helper()
	clock := NewClock(sc.NextRunAt.Add(-time.Second))
	log := newPassLog(2)
	jobsBefore := JobCount(t, s, sc.Workspace)
	for i := range 2 {
		sch := &schedule.Scheduler{Store: s, Interval: 2 * time.Millisecond, Clock: clock.Now,
			OnPass: func(r schedule.PassResult) { log.record(i, r) }}
		if err := sch.Start(t.Context()); err != nil {
			t.Fatalf("start scheduler %d: %v", i, err)
		}
		t.Cleanup(sch.Stop)
	}
	log.waitAll(t, clock.Now())
	wantTicks := []time.Time{}
	step := func(at time.Time, fires bool) {
		t.Helper()
		clock.Set(at)
		log.waitAll(t, at)
		if fires {
			wantTicks = append(wantTicks, at)
		}
		checkFired(t, s, sc, log, wantTicks, jobsBefore)
	}
	tick := sc.NextRunAt
	for i := range 4 { // four ticks in a row
		step(tick.Add(time.Duration(i)*time.Second), true)
	}
	// Half a second later: no tick is due.
	step(tick.Add(3*time.Second+500*time.Millisecond), false)
	// All servers were down from tick+4s to tick+13s: ten ticks were missed;
	// the overdue one fires once and the schedule moves past now.
	down := tick.Add(13 * time.Second)
	clock.Set(down)
	log.waitAll(t, down)
	wantTicks = append(wantTicks, tick.Add(4*time.Second))
	checkFired(t, s, sc, log, wantTicks, jobsBefore)
	if got, err := s.GetSchedule(t.Context(), sc.Workspace, sc.ID); err != nil || !got.NextRunAt.Equal(down.Add(time.Second)) {
		t.Fatalf("after the outage: %+v, %v; want next run %s", got, err, down.Add(time.Second))
	}
	step(down.Add(time.Second), true)
}

// checkFired checks that the fired ticks are exactly want, each once, each
// with its own job of sc, and that the workspace has only those jobs.
func checkFired(t *testing.T, s spine.Store, sc schedule.Schedule, l *passLog, want []time.Time, jobsBefore int64) {
	t.Helper()
	l.mu.Lock()
	fired := append([]schedule.Fired(nil), l.fired...)
	errs := l.errs
	l.mu.Unlock()
	if errs != 0 {
		t.Fatalf("%d scheduler errors", errs)
	}
	if got := ticksOf(fired); got != fmt.Sprint(want) {
		t.Fatalf("fired ticks %s, want %s", got, fmt.Sprint(want))
	}
	jobs := map[uuid.UUID]bool{}
	for _, f := range fired {
		if f.Job == uuid.Nil || jobs[f.Job] {
			t.Fatalf("tick %s: job %s missing or shared", f.Tick, f.Job)
		}
		jobs[f.Job] = true
		j, err := s.GetJob(t.Context(), sc.Workspace, f.Job)
		if err != nil || j.TriggerKind != spine.TriggerSchedule || !strings.HasPrefix(j.TriggerRef, sc.ID.String()+"@") {
			t.Fatalf("job of tick %s: %+v, %v; want trigger schedule %s", f.Tick, j, err, sc.ID)
		}
	}
	if n := JobCount(t, s, sc.Workspace) - jobsBefore; n != int64(len(want)) {
		t.Fatalf("%d new jobs in %s, want %d", n, sc.Workspace, len(want))
	}
}

// ticksOf prints the fired ticks in order, for comparison.
func ticksOf(fired []schedule.Fired) string {
	ts := make([]time.Time, len(fired))
	for i, f := range fired {
		ts[i] = f.Tick
	}
	// Ticks of one schedule are fired in order, whichever server fires them.
	return fmt.Sprint(ts)
}
