package schedule_test

import (
	"testing"
	"time"

	"github.com/windforce/windforce/schedule"
)

// TestDaylightSaving: ticks follow the zone's wall clock. A wall time in
// the spring-forward gap fires once, at the first instant after the gap; a
// wall time that happens twice in the fall-back hour fires once.
func TestDaylightSaving(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name, spec, zone, from string
		want                   []string
	}{
		{"gap fires shifted, not skipped", "30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"repeated wall time fires once", "30 1 * * *", "America/New_York", "2026-10-31T00:00:00Z",
			[]string{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"midnight in a zone whose midnight is the gap", "0 0 * * *", "America/Santiago", "2026-09-05T00:00:00Z",
			[]string{"2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"}},
		{"hourly across fall back", "0 * * * *", "America/New_York", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"}},
		{"UTC has no shifts", "0 12 * * *", "", "2026-03-29T00:00:00Z",
			[]string{"2026-03-29T12:00:00Z", "2026-03-30T12:00:00Z", "2026-03-31T12:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cr, err := schedule.ParseCron(c.spec, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			got := cr.NextN(utc(c.from), len(c.want))
			for i, w := range c.want {
				if i >= len(got) || !got[i].Equal(utc(w)) {
					t.Fatalf("ticks %v, want %v", got, c.want)
				}
			}
		})
	}
	// Every second, starting inside the second pass of a repeated hour:
	// the next tick is the first wall second after that hour, found
	// without running away.
	cr, err := schedule.ParseCron("* * * * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	from := utc("2026-11-01T06:30:00Z") // 01:30 EST, the second 01:30
	if got := cr.Next(from); !got.After(from) || got.After(utc("2026-11-01T07:00:01Z")) {
		t.Fatalf("every second from the repeated hour: %v", got)
	}
}
