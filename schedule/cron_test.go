package schedule_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

var at = time.Date(2031, 1, 15, 5, 6, 7, 0, time.UTC) // a Wednesday in winter

func TestCronNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec, zone string
		after      time.Time
		want       time.Time
	}{
		{"*/5 * * * *", "", at, time.Date(2031, 1, 15, 5, 10, 0, 0, time.UTC)},
		{"*/10 * * * * *", "", at, time.Date(2031, 1, 15, 5, 6, 10, 0, time.UTC)},
		{"* * * * * *", "", at, at.Add(time.Second)},
		// Strictly after: a time on a tick gives the following tick.
		{"0 * * * *", "", time.Date(2031, 1, 15, 6, 0, 0, 0, time.UTC), time.Date(2031, 1, 15, 7, 0, 0, 0, time.UTC)},
		{"@hourly", "", at, time.Date(2031, 1, 15, 6, 0, 0, 0, time.UTC)},
		{"@daily", "", at, time.Date(2031, 1, 16, 0, 0, 0, 0, time.UTC)},
		{"@every 90s", "", at, at.Add(90 * time.Second)},
		// 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
		{"0 9 * * *", "Europe/Berlin", at, time.Date(2031, 1, 15, 8, 0, 0, 0, time.UTC)},
		{"0 9 * * *", "Europe/Berlin", time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC), time.Date(2031, 7, 2, 7, 0, 0, 0, time.UTC)},
		{"@daily", "America/New_York", at, time.Date(2031, 1, 16, 5, 0, 0, 0, time.UTC)},
		{"0 0 * * MON", "", at, time.Date(2031, 1, 20, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		cr, err := schedule.ParseCron(c.spec, c.zone)
		if err != nil {
			t.Fatalf("%q in %q: %v", c.spec, c.zone, err)
		}
		if got := cr.Next(c.after); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%q in %q after %s = %s, want %s (UTC)", c.spec, c.zone, c.after, got, c.want)
		}
	}
}

func TestCronNextN(t *testing.T) {
	t.Parallel()
	cr, err := schedule.ParseCron("*/15 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	got := cr.NextN(at, schedule.PreviewRuns)
	if len(got) != 5 {
		t.Fatalf("%d runs, want 5", len(got))
	}
	for i, g := range got {
		want := time.Date(2031, 1, 15, 5, 15, 0, 0, time.UTC).Add(time.Duration(i) * 15 * time.Minute)
		if !g.Equal(want) {
			t.Fatalf("run %d = %s, want %s", i, g, want)
		}
	}
}

func TestCronRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec, zone, field string
	}{
		{"", "", schedule.FieldCron},
		{"* * *", "", schedule.FieldCron},
		{"* * * * * * *", "", schedule.FieldCron},
		{"61 * * * *", "", schedule.FieldCron},
		{"@fortnightly", "", schedule.FieldCron},
		{"CRON_TZ=UTC * * * * *", "", schedule.FieldCron},
		{"0 0 30 2 *", "", schedule.FieldCron}, // never fires
		{"* * * * *", "Mars/Olympus_Mons", schedule.FieldTimezone},
		{"* * * * *", "Local", schedule.FieldTimezone},
	}
	for _, c := range cases {
		_, err := schedule.ParseCron(c.spec, c.zone)
		var se *schedule.SpecError
		if !errors.As(err, &se) || se.Field != c.field || !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("%q in %q: %v; want a SpecError on %s matching spine.ErrInvalid", c.spec, c.zone, err, c.field)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	s, err := schedule.New(schedule.Schedule{Workspace: "ws", App: "a", Action: "b", Cron: "0 * * * *", Enabled: true}, at)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID.Version() != 7 || !s.CreatedAt.Equal(at) || !s.NextRunAt.Equal(time.Date(2031, 1, 15, 6, 0, 0, 0, time.UTC)) ||
		string(s.Input) != "{}" {
		t.Fatalf("new = %+v", s)
	}
	bad := []schedule.Schedule{
		{App: "a", Action: "b", Cron: "* * * * *"},
		{Workspace: "ws", App: "a", Action: "b", Cron: "nope"},
		{Workspace: "ws", App: "a", Action: "b", Cron: "* * * * *", Input: json.RawMessage(`{"a":`)},
	}
	for i, b := range bad {
		if _, err := schedule.New(b, at); !errors.Is(err, spine.ErrInvalid) {
			t.Fatalf("bad %d: %v, want spine.ErrInvalid", i, err)
		}
	}
}

// TestNextTick: a tick missed for a long time fires once; the next one is
// the first after now, not the one after the missed tick.
func TestNextTick(t *testing.T) {
	t.Parallel()
	cr, err := schedule.ParseCron("* * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	due := at
	if got := schedule.NextTick(cr, due, at.Add(10*time.Second)); !got.Equal(at.Add(11 * time.Second)) {
		t.Fatalf("after an outage: %s, want now+1s", got)
	}
	// A server whose clock lags behind the due tick still moves forward.
	if got := schedule.NextTick(cr, due, at.Add(-time.Minute)); !got.Equal(at.Add(time.Second)) {
		t.Fatalf("lagging clock: %s, want due+1s", got)
	}
}
