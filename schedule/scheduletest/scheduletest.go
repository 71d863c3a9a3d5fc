// Package scheduletest is the conformance suite of schedule.Store: CRUD,
// due schedules, and the tick compare-and-set that lets many servers fire
// each tick once, the same on Postgres and on SQLite.
//
//	func TestScheduleConformance(t *testing.T) {
//		scheduletest.Run(t, func(t *testing.T) scheduletest.Store { return newStore(t) })
//	}
package scheduletest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// Store is a database store with schedules, the catalog and the spine.
type Store interface {
	schedule.Store
	catalog.Store
	spine.Store
}

// Run runs the suite; newStore returns a fresh, migrated, isolated store
// closed at cleanup.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("CRUD", func(t *testing.T) { testCRUD(t, newStore) })
	t.Run("Due", func(t *testing.T) { testDue(t, newStore) })
	t.Run("FireTick", func(t *testing.T) { testFire(t, newStore) })
	t.Run("FireTickRace", func(t *testing.T) { testFireRace(t, newStore) })
	t.Run("NoOverlap", func(t *testing.T) { testNoOverlap(t, newStore) })
	t.Run("Disabled", func(t *testing.T) { testDisabled(t, newStore) })
	t.Run("Unrunnable", func(t *testing.T) { testUnrunnable(t, newStore) })
	t.Run("TwoSchedulers", func(t *testing.T) {
		t.Parallel()
		s := setup(t, newStore)
		sc := create(t, s, every("* * * * * *"))
		CheckTwoSchedulers(t, s, sc)
	})
}

// Workspace is the workspace the suite's catalog and schedules live in.
const Workspace = "ws-sched"

// base is the suite's reference time, on a whole minute.
var base = time.Date(2031, 3, 4, 5, 6, 0, 0, time.UTC)

// setup returns a store whose catalog holds app hello with actions greet
// (input {"name": string} required) and sleep (any input).
func setup(t *testing.T, newStore func(t *testing.T) Store) Store {
	t.Helper()
	s := newStore(t)
	ctx := t.Context()
	if err := s.PutSource(ctx, catalog.Source{Workspace: Workspace, ID: "main", URL: "file:///repo.git", Branch: "main"}); err != nil {
		t.Fatalf("put source: %v", err)
	}
	app := catalog.App{
		Key: "hello", Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry,
		Actions: []catalog.Action{
			{Key: "greet", InputSchema: json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`)},
			{Key: "sleep"},
		},
	}
	err := s.ApplySync(ctx, catalog.SyncParams{Workspace: Workspace, SourceID: "main",
		Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Apps: []catalog.App{app}})
	if err != nil {
		t.Fatalf("apply sync: %v", err)
	}
	return s
}

// every is an enabled schedule of hello/greet on spec, with a good input.
func every(spec string) schedule.Schedule {
	return schedule.Schedule{Workspace: Workspace, App: "hello", Action: "greet", Cron: spec,
		Input: json.RawMessage(`{"name":"Ada"}`), Enabled: true, CreatedBy: "tester"}
}

// create completes sc as of base (first tick after base) and stores it.
func create(t *testing.T, s Store, sc schedule.Schedule) schedule.Schedule {
	t.Helper()
	sc, err := schedule.New(sc, base)
	if err != nil {
		t.Fatalf("new schedule: %v", err)
	}
	if err := s.CreateSchedule(t.Context(), sc); err != nil {
		t.Fatalf("create schedule: %v", err)
	}
	return sc
}

// get reads a schedule or fails the test.
func get(t *testing.T, s Store, id uuid.UUID) schedule.Schedule {
	t.Helper()
	sc, err := s.GetSchedule(t.Context(), Workspace, id)
	if err != nil {
		t.Fatalf("get schedule %s: %v", id, err)
	}
	return sc
}

// JobCount counts the jobs still queued, scheduled or running in workspace
// ws: with no worker running, every job made so far.
func JobCount(t testing.TB, s spine.Store, ws string) int64 {
	t.Helper()
	rows, err := s.Health(t.Context())
	if err != nil {
		t.Fatalf("health: %v", err)
	}
	var n int64
	for _, h := range rows {
		if h.Workspace == ws {
			n += h.Waiting + h.Scheduled + h.Running
		}
	}
	return n
}

func testCRUD(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	sc := every("*/5 * * * *")
	sc.Timezone, sc.NoOverlap = "Europe/Berlin", true
	a := create(t, s, sc)
	got := get(t, s, a.ID)
	if got.Workspace != Workspace || got.App != "hello" || got.Action != "greet" || got.Cron != "*/5 * * * *" ||
		got.Timezone != "Europe/Berlin" || !got.NoOverlap || !got.Enabled || got.CreatedBy != "tester" ||
		string(got.Input) != `{"name":"Ada"}` || !got.NextRunAt.Equal(base.Add(4*time.Minute)) /* 05:10 */ ||
		!got.CreatedAt.Equal(base) || got.LastRunAt != nil || got.LastJobID != nil {
		t.Fatalf("read back %+v, want %+v", got, a)
	}
	if err := s.CreateSchedule(ctx, a); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("duplicate id: %v, want spine.ErrConflict", err)
	}
	b := create(t, s, every("@hourly"))
	other := every("@daily")
	other.Workspace = "ws-other"
	create(t, s, other)
	list, err := s.ListSchedules(ctx, Workspace)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("list = %v, %v; want [a b]", list, err)
	}

	if err := s.SetScheduleEnabled(ctx, Workspace, a.ID, false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got = get(t, s, a.ID); got.Enabled || !got.NextRunAt.Equal(a.NextRunAt) {
		t.Fatalf("disabled: %+v", got)
	}
	later := base.Add(time.Hour)
	if err := s.SetScheduleEnabled(ctx, Workspace, a.ID, true, later); err != nil {
		t.Fatal(err)
	}
	if got = get(t, s, a.ID); !got.Enabled || !got.NextRunAt.Equal(later) {
		t.Fatalf("enabled again: %+v, want next run %s", got, later)
	}

	if err := s.DeleteSchedule(ctx, Workspace, a.ID); err != nil {
		t.Fatal(err)
	}
	missing := []error{
		s.DeleteSchedule(ctx, Workspace, a.ID),
		s.SetScheduleEnabled(ctx, Workspace, a.ID, true, later),
		s.DeleteSchedule(ctx, "ws-other", b.ID), // another workspace's id is not found
	}
	_, err = s.GetSchedule(ctx, Workspace, a.ID)
	missing = append(missing, err)
	for i, err := range missing {
		if !errors.Is(err, schedule.ErrNotFound) || !errors.Is(err, spine.ErrNotFound) {
			t.Fatalf("missing schedule %d: %v, want schedule.ErrNotFound", i, err)
		}
	}
	if list, _ = s.ListSchedules(ctx, Workspace); len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("after delete: %v", list)
	}
}

func testDue(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	minute := create(t, s, every("* * * * *"))   // due at base+1m
	second := create(t, s, every("* * * * * *")) // due at base+1s
	hour := create(t, s, every("0 * * * *"))     // due at base+1h
	off := create(t, s, every("* * * * * *"))    // due at base+1s, but disabled
	if err := s.SetScheduleEnabled(ctx, Workspace, off.ID, false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ids := func(now time.Time, limit int) []uuid.UUID {
		t.Helper()
		due, err := s.DueSchedules(ctx, now, limit)
		if err != nil {
			t.Fatalf("due at %s: %v", now, err)
		}
		var out []uuid.UUID
		for _, d := range due {
			out = append(out, d.ID)
		}
		return out
	}
	if got := ids(base, 10); len(got) != 0 {
		t.Fatalf("due at base: %v, want none", got)
	}
	if got := ids(base.Add(time.Second), 10); len(got) != 1 || got[0] != second.ID {
		t.Fatalf("due at base+1s: %v, want [second]", got)
	}
	if got := ids(base.Add(time.Minute), 10); len(got) != 2 || got[0] != second.ID || got[1] != minute.ID {
		t.Fatalf("due at base+1m: %v, want [second minute] (earliest tick first)", got)
	}
	if got := ids(base.Add(2*time.Hour), 1); len(got) != 1 || got[0] != second.ID {
		t.Fatalf("due with limit 1: %v, want [second]", got)
	}
	if got := ids(base.Add(2*time.Hour), 10); len(got) != 3 || got[2] != hour.ID {
		t.Fatalf("due at base+2h: %v, want 3 ending with hour", got)
	}
}

func testFire(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	sc := create(t, s, every("* * * * * *"))
	tick, next := sc.NextRunAt, sc.NextRunAt.Add(time.Second)
	fired, job, err := s.FireTick(ctx, sc, next)
	if err != nil || !fired || job == uuid.Nil {
		t.Fatalf("fire = %t, %s, %v; want a job", fired, job, err)
	}
	j, err := s.GetJob(ctx, Workspace, job)
	if err != nil {
		t.Fatal(err)
	}
	if j.TriggerKind != spine.TriggerSchedule || j.TriggerRef != schedule.TickRef(sc.ID, sc.NextRunAt) || j.CreatedBy != "schedule:"+sc.ID.String() ||
		j.Pin.AppKey != "hello" || j.Pin.ActionKey != "greet" || string(j.Input) != `{"name":"Ada"}` || j.Status != spine.StatusQueued || !j.ScheduledFor.Equal(tick) {
		t.Fatalf("job = %+v, want trigger_ref and scheduled_for naming tick %v", j, tick)
	}
	got := get(t, s, sc.ID)
	if !got.NextRunAt.Equal(next) || got.LastRunAt == nil || !got.LastRunAt.Equal(tick) ||
		got.LastJobID == nil || *got.LastJobID != job {
		t.Fatalf("after fire: %+v", got)
	}
	// The same tick again (a slow server with an old read) does nothing.
	if fired, job, err := s.FireTick(ctx, sc, next); err != nil || fired || job != uuid.Nil {
		t.Fatalf("refire = %t, %s, %v; want not fired", fired, job, err)
	}
	if n := JobCount(t, s, Workspace); n != 1 {
		t.Fatalf("%d jobs, want 1", n)
	}
	// The next tick fires from the moved row.
	if fired, job, err := s.FireTick(ctx, got, next.Add(time.Second)); err != nil || !fired || job == uuid.Nil {
		t.Fatalf("next tick = %t, %s, %v", fired, job, err)
	}
	if n := JobCount(t, s, Workspace); n != 2 {
		t.Fatalf("%d jobs, want 2", n)
	}
}

// testFireRace: two servers fire the same tick at once; exactly one wins
// and exactly one job exists, round after round.
func testFireRace(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	sc := create(t, s, every("* * * * * *"))
	const rounds = 5
	for i := range rounds {
		next := sc.NextRunAt.Add(time.Second)
		type out struct {
			fired bool
			err   error
		}
		res := make(chan out, 2)
		start := make(chan struct{})
		for range 2 {
			go func() {
				<-start
				fired, _, err := s.FireTick(t.Context(), sc, next)
				res <- out{fired, err}
			}()
		}
		close(start)
		wins := 0
		for range 2 {
			o := <-res
			if o.err != nil {
				t.Fatalf("round %d: fire: %v", i, o.err)
			}
			if o.fired {
				wins++
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d winners, want 1", i, wins)
		}
		if n := JobCount(t, s, Workspace); n != int64(i+1) {
			t.Fatalf("round %d: %d jobs, want %d", i, n, i+1)
		}
		sc = get(t, s, sc.ID)
	}
}

func testNoOverlap(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	spec := every("* * * * * *")
	spec.NoOverlap = true
	sc := create(t, s, spec)
	_, first, err := s.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second))
	if err != nil || first == uuid.Nil {
		t.Fatalf("first tick: %s, %v", first, err)
	}
	// The first job still waits: the second tick is won but skipped.
	sc = get(t, s, sc.ID)
	fired, job, err := s.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second))
	if err != nil || !fired || job != uuid.Nil {
		t.Fatalf("tick while the job waits = %t, %s, %v; want fired without a job", fired, job, err)
	}
	after := get(t, s, sc.ID)
	if !after.NextRunAt.Equal(sc.NextRunAt.Add(time.Second)) || *after.LastJobID != first || !after.LastRunAt.Equal(sc.NextRunAt) {
		t.Fatalf("after the skipped tick: %+v", after)
	}
	if n := JobCount(t, s, Workspace); n != 1 {
		t.Fatalf("%d jobs, want 1", n)
	}
	// Once the job is finished, the next tick runs again.
	if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: Workspace, JobID: first, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	fired, second, err := s.FireTick(ctx, after, after.NextRunAt.Add(time.Second))
	if err != nil || !fired || second == uuid.Nil || second == first {
		t.Fatalf("tick after the job ended = %t, %s, %v; want a new job", fired, second, err)
	}
	if got := get(t, s, sc.ID); *got.LastJobID != second {
		t.Fatalf("last job %s, want %s", got.LastJobID, second)
	}
}

func testDisabled(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	sc := create(t, s, every("* * * * * *"))
	if err := s.SetScheduleEnabled(ctx, Workspace, sc.ID, false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DueSchedules(ctx, base.Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("due = %v, %v; want none", due, err)
	}
	if fired, job, err := s.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second)); err != nil || fired || job != uuid.Nil {
		t.Fatalf("fire disabled = %t, %s, %v; want nothing", fired, job, err)
	}
	if got := get(t, s, sc.ID); !got.NextRunAt.Equal(sc.NextRunAt) || got.LastRunAt != nil {
		t.Fatalf("disabled schedule moved: %+v", got)
	}
	// Deleted: nothing to fire either.
	if err := s.DeleteSchedule(ctx, Workspace, sc.ID); err != nil {
		t.Fatal(err)
	}
	if fired, _, err := s.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second)); err != nil || fired {
		t.Fatalf("fire deleted = %t, %v; want nothing", fired, err)
	}
	if n := JobCount(t, s, Workspace); n != 0 {
		t.Fatalf("%d jobs, want 0", n)
	}
}

// testUnrunnable: an action gone from the catalog, or an input its schema
// now refuses, makes no job but still moves the tick, so the schedule
// neither stalls nor fails the same tick forever.
func testUnrunnable(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	gone := every("* * * * * *")
	gone.Action = "vanished"
	badInput := every("* * * * * *")
	badInput.Input = json.RawMessage(`{"name":1}`)
	for _, c := range []struct {
		name string
		sc   schedule.Schedule
		want error
	}{{"action gone", gone, catalog.ErrNotFound}, {"input refused", badInput, catalog.ErrInvalidInput}} {
		sc := create(t, s, c.sc)
		next := sc.NextRunAt.Add(time.Second)
		fired, job, err := s.FireTick(ctx, sc, next)
		if !fired || job != uuid.Nil || !errors.Is(err, c.want) || !schedule.Unrunnable(err) {
			t.Fatalf("%s: fire = %t, %s, %v; want fired, no job, %v", c.name, fired, job, err, c.want)
		}
		if got := get(t, s, sc.ID); !got.NextRunAt.Equal(next) || got.LastJobID != nil {
			t.Fatalf("%s: after fire %+v, want next run %s and no job", c.name, got, next)
		}
	}
	if n := JobCount(t, s, Workspace); n != 0 {
		t.Fatalf("%d jobs, want 0", n)
	}
}
