package drivertest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Schedule", testSchedule)

// schedBase is the schedule cases' reference time, on a whole second so
// both databases keep it exactly.
var schedBase = time.Date(2031, 3, 4, 5, 6, 0, 0, time.UTC)

// newSchedule is an enabled schedule of ws due at next, created at created.
func newSchedule(ws string, next, created time.Time) schedule.Schedule {
	return schedule.Schedule{
		ID: uuid.New(), Workspace: ws, App: "hello", Action: "greet",
		Cron: "* * * * *", Timezone: "Europe/Berlin", Input: json.RawMessage(`{"name":"ada"}`),
		NoOverlap: true, Enabled: true, NextRunAt: next, CreatedBy: "alice", CreatedAt: created,
	}
}

// mustCreate stores sc through ex.
func mustCreate(t *testing.T, ex driver.Executor, sc schedule.Schedule) schedule.Schedule {
	t.Helper()
	if err := ex.ScheduleCreate(t.Context(), sc); err != nil {
		t.Fatalf("ScheduleCreate: %v", err)
	}
	return sc
}

// mustGet reads schedule id of ws through ex.
func mustGet(t *testing.T, ex driver.Executor, ws string, id uuid.UUID) schedule.Schedule {
	t.Helper()
	sc, err := ex.ScheduleGet(t.Context(), ws, id)
	if err != nil {
		t.Fatalf("ScheduleGet: %v", err)
	}
	return sc
}

// ids lists the schedules' ids, in order.
func ids(scs []schedule.Schedule) []uuid.UUID {
	out := make([]uuid.UUID, len(scs))
	for i, sc := range scs {
		out[i] = sc.ID
	}
	return out
}

func equalIDs(a, b []uuid.UUID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// testSchedule checks each schedule operation: what it writes and reads
// back, and the typed error it answers.
func testSchedule(t *testing.T, open Open) {
	t.Run("CreateGet", func(t *testing.T) { testScheduleCreateGet(t, open) })
	t.Run("CreateDefaultsCreatedAt", func(t *testing.T) { testScheduleCreateDefaultsCreatedAt(t, open) })
	t.Run("CreateDuplicateIsConflict", func(t *testing.T) { testScheduleCreateDuplicateIsConflict(t, open) })
	t.Run("CreateInvalid", func(t *testing.T) { testScheduleCreateInvalid(t, open) })
	t.Run("GetNotFound", func(t *testing.T) { testScheduleGetNotFound(t, open) })
	t.Run("List", func(t *testing.T) { testScheduleList(t, open) })
	t.Run("Due", func(t *testing.T) { testScheduleDue(t, open) })
	t.Run("SetEnabled", func(t *testing.T) { testScheduleSetEnabled(t, open) })
	t.Run("Delete", func(t *testing.T) { testScheduleDelete(t, open) })
	t.Run("Fire", func(t *testing.T) { testScheduleFire(t, open) })
	t.Run("FireDisabled", func(t *testing.T) { testScheduleFireDisabled(t, open) })
	t.Run("FireRolledBack", func(t *testing.T) { testScheduleFireRolledBack(t, open) })
	t.Run("SetJob", func(t *testing.T) { testScheduleSetJob(t, open) })
	t.Run("HandOver", func(t *testing.T) { testScheduleHandOver(t, open) })
	t.Run("JobLive", func(t *testing.T) { testScheduleJobLive(t, open) })
}

func testScheduleCreateGet(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	want := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase.Add(-time.Hour)))
	got := mustGet(t, ex, "ws", want.ID)
	if got.ID != want.ID || got.Workspace != "ws" || got.App != "hello" || got.Action != "greet" ||
		got.Cron != want.Cron || got.Timezone != want.Timezone || string(got.Input) != `{"name":"ada"}` ||
		!got.NoOverlap || !got.Enabled || !got.NextRunAt.Equal(schedBase) || got.CreatedBy != "alice" ||
		!got.CreatedAt.Equal(want.CreatedAt) || got.LastRunAt != nil || got.LastJobID != nil {
		t.Fatalf("ScheduleGet = %+v, want what was created: %+v", got, want)
	}
}

func testScheduleCreateDefaultsCreatedAt(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	before := time.Now().Add(-time.Minute)
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, time.Time{}))
	if got := mustGet(t, ex, "ws", sc.ID); got.CreatedAt.Before(before) {
		t.Fatalf("CreatedAt = %v with a zero CreatedAt, want the database's clock (after %v)", got.CreatedAt, before)
	}
}

func testScheduleCreateDuplicateIsConflict(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	if err := ex.ScheduleCreate(t.Context(), sc); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("ScheduleCreate of an existing id = %v, want spine.ErrConflict", err)
	}
}

func testScheduleCreateInvalid(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	for name, sc := range map[string]schedule.Schedule{
		"EmptyWorkspace": newSchedule("", schedBase, schedBase),
		"BadJSON": func() schedule.Schedule {
			sc := newSchedule("ws", schedBase, schedBase)
			sc.Input = []byte(`{`)
			return sc
		}(),
	} {
		if err := ex.ScheduleCreate(t.Context(), sc); !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("ScheduleCreate %s = %v, want spine.ErrInvalid", name, err)
		}
	}
}

func testScheduleGetNotFound(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	for name, c := range map[string]struct {
		ws string
		id uuid.UUID
	}{"UnknownID": {"ws", uuid.New()}, "OtherWorkspace": {"other", sc.ID}} {
		if _, err := ex.ScheduleGet(t.Context(), c.ws, c.id); !errors.Is(err, schedule.ErrNotFound) {
			t.Errorf("ScheduleGet %s = %v, want schedule.ErrNotFound", name, err)
		}
	}
}

func testScheduleList(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	second := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase.Add(time.Second)))
	first := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	mustCreate(t, ex, newSchedule("other", schedBase, schedBase))
	got, err := ex.ScheduleList(t.Context(), "ws")
	if err != nil {
		t.Fatalf("ScheduleList: %v", err)
	}
	if want := []uuid.UUID{first.ID, second.ID}; !equalIDs(ids(got), want) {
		t.Fatalf("ScheduleList = %v, want %v (the workspace's, oldest first)", ids(got), want)
	}
	if got, err := ex.ScheduleList(t.Context(), "none"); err != nil || len(got) != 0 {
		t.Fatalf("ScheduleList of an empty workspace = %v, %v; want none", got, err)
	}
}

func testScheduleDue(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	late := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	early := mustCreate(t, ex, newSchedule("other", schedBase.Add(-time.Minute), schedBase))
	mustCreate(t, ex, newSchedule("ws", schedBase.Add(time.Second), schedBase)) // not yet due
	off := newSchedule("ws", schedBase.Add(-time.Hour), schedBase)
	off.Enabled = false
	mustCreate(t, ex, off)
	got, err := ex.ScheduleDue(t.Context(), schedBase, 10)
	if err != nil {
		t.Fatalf("ScheduleDue: %v", err)
	}
	if want := []uuid.UUID{early.ID, late.ID}; !equalIDs(ids(got), want) {
		t.Fatalf("ScheduleDue = %v, want %v (enabled, due, earliest first)", ids(got), want)
	}
	if got, err = ex.ScheduleDue(t.Context(), schedBase, 1); err != nil || !equalIDs(ids(got), []uuid.UUID{early.ID}) {
		t.Fatalf("ScheduleDue limit 1 = %v, %v; want only %v", ids(got), err, early.ID)
	}
	// A zero now is the database's clock, years before schedBase: only
	// the schedule created due now is.
	now := mustCreate(t, ex, newSchedule("ws", time.Now().Add(-time.Hour).Truncate(time.Second), schedBase))
	if got, err = ex.ScheduleDue(t.Context(), time.Time{}, 10); err != nil || !equalIDs(ids(got), []uuid.UUID{now.ID}) {
		t.Fatalf("ScheduleDue at the database's clock = %v, %v; want only %v", ids(got), err, now.ID)
	}
}

func testScheduleSetEnabled(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	moved := schedBase.Add(time.Hour)
	// Disabling keeps the tick, whatever nextRunAt says.
	if err := ex.ScheduleSetEnabled(t.Context(), "ws", sc.ID, false, moved); err != nil {
		t.Fatalf("disable: %v", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); got.Enabled || !got.NextRunAt.Equal(schedBase) {
		t.Fatalf("after disable: enabled=%t next=%v, want false at %v", got.Enabled, got.NextRunAt, schedBase)
	}
	// Enabling a disabled schedule moves the tick.
	if err := ex.ScheduleSetEnabled(t.Context(), "ws", sc.ID, true, moved); err != nil {
		t.Fatalf("enable: %v", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.Enabled || !got.NextRunAt.Equal(moved) {
		t.Fatalf("after enable: enabled=%t next=%v, want true at %v", got.Enabled, got.NextRunAt, moved)
	}
	// Enabling an enabled one keeps the tick a fire compares against.
	if err := ex.ScheduleSetEnabled(t.Context(), "ws", sc.ID, true, moved.Add(time.Hour)); err != nil {
		t.Fatalf("enable again: %v", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.NextRunAt.Equal(moved) {
		t.Fatalf("after enabling an enabled schedule: next=%v, want it kept at %v", got.NextRunAt, moved)
	}
	// A zero nextRunAt keeps the tick when enabling.
	if err := ex.ScheduleSetEnabled(t.Context(), "ws", sc.ID, false, time.Time{}); err != nil {
		t.Fatalf("disable: %v", err)
	}
	if err := ex.ScheduleSetEnabled(t.Context(), "ws", sc.ID, true, time.Time{}); err != nil {
		t.Fatalf("enable with zero next: %v", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.Enabled || !got.NextRunAt.Equal(moved) {
		t.Fatalf("after enable with zero next: enabled=%t next=%v, want true at %v", got.Enabled, got.NextRunAt, moved)
	}
	if err := ex.ScheduleSetEnabled(t.Context(), "other", sc.ID, true, moved); !errors.Is(err, schedule.ErrNotFound) {
		t.Fatalf("ScheduleSetEnabled in another workspace = %v, want schedule.ErrNotFound", err)
	}
}

func testScheduleDelete(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	if err := ex.ScheduleDelete(t.Context(), "other", sc.ID); !errors.Is(err, schedule.ErrNotFound) {
		t.Fatalf("ScheduleDelete in another workspace = %v, want schedule.ErrNotFound", err)
	}
	if err := ex.ScheduleDelete(t.Context(), "ws", sc.ID); err != nil {
		t.Fatalf("ScheduleDelete: %v", err)
	}
	if _, err := ex.ScheduleGet(t.Context(), "ws", sc.ID); !errors.Is(err, schedule.ErrNotFound) {
		t.Fatalf("ScheduleGet after delete = %v, want schedule.ErrNotFound", err)
	}
	if err := ex.ScheduleDelete(t.Context(), "ws", sc.ID); !errors.Is(err, schedule.ErrNotFound) {
		t.Fatalf("ScheduleDelete twice = %v, want schedule.ErrNotFound", err)
	}
}

func testScheduleFire(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	next := schedBase.Add(time.Minute)
	row, ok, err := ex.ScheduleFire(t.Context(), sc.ID, schedBase, next)
	if err != nil || !ok {
		t.Fatalf("ScheduleFire = %v, %v; want the tick won", ok, err)
	}
	want := driver.ScheduleFired{Workspace: "ws", App: "hello", Action: "greet", Input: sc.Input, NoOverlap: true}
	if row.Workspace != want.Workspace || row.App != want.App || row.Action != want.Action ||
		string(row.Input) != string(want.Input) || row.NoOverlap != want.NoOverlap || row.LastJobID != nil {
		t.Fatalf("ScheduleFire row = %+v, want %+v", row, want)
	}
	got := mustGet(t, ex, "ws", sc.ID)
	if !got.NextRunAt.Equal(next) || got.LastRunAt == nil || !got.LastRunAt.Equal(schedBase) {
		t.Fatalf("after fire: next=%v last=%v, want next %v last %v", got.NextRunAt, got.LastRunAt, next, schedBase)
	}
	// The same tick again: the compare-and-set finds it moved.
	if _, ok, err := ex.ScheduleFire(t.Context(), sc.ID, schedBase, next.Add(time.Minute)); err != nil || ok {
		t.Fatalf("ScheduleFire of a fired tick = %v, %v; want not won, no error", ok, err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.NextRunAt.Equal(next) {
		t.Fatalf("a lost fire moved the tick to %v, want it kept at %v", got.NextRunAt, next)
	}
	if _, ok, err := ex.ScheduleFire(t.Context(), uuid.New(), schedBase, next); err != nil || ok {
		t.Fatalf("ScheduleFire of an unknown schedule = %v, %v; want not won, no error", ok, err)
	}
}

func testScheduleFireDisabled(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := newSchedule("ws", schedBase, schedBase)
	sc.Enabled = false
	mustCreate(t, ex, sc)
	if _, ok, err := ex.ScheduleFire(t.Context(), sc.ID, schedBase, schedBase.Add(time.Minute)); err != nil || ok {
		t.Fatalf("ScheduleFire of a disabled schedule = %v, %v; want not won, no error", ok, err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.NextRunAt.Equal(schedBase) || got.LastRunAt != nil {
		t.Fatalf("a disabled schedule moved: next=%v last=%v", got.NextRunAt, got.LastRunAt)
	}
}

func testScheduleFireRolledBack(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	boom := errors.New("boom")
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		if _, ok, err := ex.ScheduleFire(t.Context(), sc.ID, schedBase, schedBase.Add(time.Minute)); err != nil || !ok {
			t.Errorf("ScheduleFire in a transaction = %v, %v; want won", ok, err)
		}
		// The transaction sees its own move.
		if got := mustGet(t, ex, "ws", sc.ID); !got.NextRunAt.Equal(schedBase.Add(time.Minute)) {
			t.Errorf("inside the transaction next=%v, want the moved tick", got.NextRunAt)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want boom", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); !got.NextRunAt.Equal(schedBase) || got.LastRunAt != nil {
		t.Fatalf("a rolled-back fire moved the tick: next=%v last=%v", got.NextRunAt, got.LastRunAt)
	}
}

func testScheduleSetJob(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	sc := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	job := uuid.New()
	if err := ex.ScheduleSetJob(t.Context(), sc.ID, job); err != nil {
		t.Fatalf("ScheduleSetJob: %v", err)
	}
	if got := mustGet(t, ex, "ws", sc.ID); got.LastJobID == nil || *got.LastJobID != job {
		t.Fatalf("LastJobID = %v, want %v", got.LastJobID, job)
	}
	row, ok, err := ex.ScheduleFire(t.Context(), sc.ID, schedBase, schedBase.Add(time.Minute))
	if err != nil || !ok || row.LastJobID == nil || *row.LastJobID != job {
		t.Fatalf("ScheduleFire = %+v, %v, %v; want won with last job %v", row, ok, err, job)
	}
	if err := ex.ScheduleSetJob(t.Context(), uuid.New(), job); err != nil {
		t.Fatalf("ScheduleSetJob of an unknown schedule = %v, want nil", err)
	}
}

func testScheduleHandOver(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	a := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	b := mustCreate(t, ex, newSchedule("ws", schedBase, schedBase))
	oldJob, newJob, otherJob := uuid.New(), uuid.New(), uuid.New()
	if err := ex.ScheduleSetJob(t.Context(), a.ID, oldJob); err != nil {
		t.Fatalf("ScheduleSetJob: %v", err)
	}
	if err := ex.ScheduleSetJob(t.Context(), b.ID, otherJob); err != nil {
		t.Fatalf("ScheduleSetJob: %v", err)
	}
	if err := ex.ScheduleHandOver(t.Context(), oldJob, newJob); err != nil {
		t.Fatalf("ScheduleHandOver: %v", err)
	}
	if got := mustGet(t, ex, "ws", a.ID); got.LastJobID == nil || *got.LastJobID != newJob {
		t.Fatalf("after hand-over LastJobID = %v, want the new job %v", got.LastJobID, newJob)
	}
	if got := mustGet(t, ex, "ws", b.ID); got.LastJobID == nil || *got.LastJobID != otherJob {
		t.Fatalf("hand-over touched another schedule: LastJobID = %v, want %v", got.LastJobID, otherJob)
	}
	if err := ex.ScheduleHandOver(t.Context(), uuid.New(), uuid.New()); err != nil {
		t.Fatalf("ScheduleHandOver of a job no schedule follows = %v, want nil", err)
	}
}

func testScheduleJobLive(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	// A job that is not in the queue (finished, or never made) is not
	// live; a queued job is covered over the core by scheduletest's
	// NoOverlap until the job unit has an insert operation here.
	if live, err := ex.ScheduleJobLive(t.Context(), uuid.New()); err != nil || live {
		t.Fatalf("ScheduleJobLive of an unknown job = %v, %v; want false", live, err)
	}
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		live, err := ex.ScheduleJobLive(t.Context(), uuid.New())
		if err == nil && live {
			t.Errorf("ScheduleJobLive in a transaction = true for an unknown job")
		}
		return err
	})
	if err != nil {
		t.Fatalf("ScheduleJobLive in a transaction: %v", err)
	}
}
